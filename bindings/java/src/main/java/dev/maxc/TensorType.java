package dev.maxc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A symbolic tensor type with no data (MAX's TensorType): dtype, dims and device, used for graph
 * inputs and weights. Immutable and thread-safe.
 */
public final class TensorType {
  private final DType dtype;
  private final List<Dim> dims;
  private final DeviceRef device;

  /** A type on {@code device}. */
  public TensorType(DType dtype, List<Dim> dims, DeviceRef device) {
    this.dtype = Objects.requireNonNull(dtype, "dtype");
    this.dims = Collections.unmodifiableList(new ArrayList<>(dims));
    this.device = Objects.requireNonNull(device, "device");
  }

  /**
   * A CPU type whose dims are Integers/Longs (static), Strings (symbolic) or Dims:
   * {@code TensorType.of(DType.FLOAT32, "batch", 4)}.
   *
   * @throws MaxException INVALID_ARGUMENT for a dim of another kind or a negative size
   */
  public static TensorType of(DType dtype, Object... dims) {
    List<Dim> ds = new ArrayList<>(dims.length);
    for (Object d : dims) ds.add(Dim.from(d));
    return new TensorType(dtype, ds, DeviceRef.cpu());
  }

  /** The same type on {@code device}. */
  public TensorType on(DeviceRef device) {
    return new TensorType(dtype, dims, device);
  }

  /** The element type. */
  public DType dtype() {
    return dtype;
  }

  /** The dims (unmodifiable). */
  public List<Dim> dims() {
    return dims;
  }

  /** The number of dims. */
  public int rank() {
    return dims.size();
  }

  /** The placement. */
  public DeviceRef device() {
    return device;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TensorType)) return false;
    TensorType t = (TensorType) o;
    return t.dtype == dtype && t.dims.equals(dims) && t.device.equals(device);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dtype, dims, device);
  }

  /** The library's notation: {@code tensor<[batch, 4], float32, cpu:0>}. */
  @Override
  public String toString() {
    return "tensor<" + dims + ", " + dtype.maxName() + ", " + device + ">";
  }
}
