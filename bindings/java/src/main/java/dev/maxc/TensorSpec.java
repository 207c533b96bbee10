package dev.maxc;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * One input, output or weight of a compiled model (MAX's TensorSpec): its name, dtype, shape and
 * device. A snapshot copied out of the library's spec handle (which is released at once), so it
 * owns nothing and needs no closing. Immutable and thread-safe.
 */
public final class TensorSpec {
  private final String name;
  private final DType dtype;
  private final long[] shape;
  private final List<String> dimNames;
  private final DeviceRef device;

  private TensorSpec(String name, DType dtype, long[] shape, List<String> dimNames, DeviceRef device) {
    this.name = name;
    this.dtype = dtype;
    this.shape = shape;
    this.dimNames = dimNames;
    this.device = device;
  }

  /** Reads a spec handle and releases it (always). */
  static TensorSpec take(Pointer spec) {
    MaxC lib = MaxLibrary.lib();
    try {
      PointerByReference name = new PointerByReference();
      Status.check(lib.max_tensor_spec_name(spec, name));
      IntByReference dtype = new IntByReference();
      Status.check(lib.max_tensor_spec_dtype(spec, dtype));
      SizeTByReference rank = new SizeTByReference();
      Status.check(lib.max_tensor_spec_rank(spec, rank));
      int r = (int) rank.getValue();
      long[] shape = new long[r];
      List<String> names = new ArrayList<>(r);
      for (int i = 0; i < r; i++) {
        LongByReference dim = new LongByReference();
        PointerByReference expr = new PointerByReference();
        Status.check(lib.max_tensor_spec_dim(spec, new SizeT(i), dim, expr));
        shape[i] = dim.getValue();
        names.add(Status.string(expr.getValue()));
      }
      PointerByReference dev = new PointerByReference();
      Status.check(lib.max_tensor_spec_device(spec, dev));
      DeviceRef ref;
      try (Device d = new Device(dev.getValue())) {
        ref = d.ref();
      }
      return new TensorSpec(Status.string(name.getValue()), DType.fromCode(dtype.getValue()), shape,
          Collections.unmodifiableList(names), ref);
    } finally {
      lib.max_tensor_spec_release(spec);
    }
  }

  /** The name: the graph's input or output name, or the weight's name. */
  public String name() {
    return name;
  }

  /** The element type. */
  public DType dtype() {
    return dtype;
  }

  /** The number of dims. */
  public int rank() {
    return shape.length;
  }

  /** The dims, a new array: the size of each static dim, -1 for a symbolic one (MAX's None). */
  public long[] shape() {
    return shape.clone();
  }

  /** Dim {@code axis}: its size, or -1 when symbolic. */
  public long dim(int axis) {
    return shape[axis];
  }

  /** Per axis, the symbolic dim's text ("batch", "seq + 1"), or null for a static dim. */
  public List<String> dimNames() {
    return dimNames;
  }

  /** Whether every dim is static. */
  public boolean isStatic() {
    return Arrays.stream(shape).allMatch(d -> d >= 0);
  }

  /** Where the tensor must live. */
  public DeviceRef device() {
    return device;
  }

  /** e.g. {@code TensorSpec(input0: float32[batch, 4] on cpu:0)}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("TensorSpec(").append(name).append(": ").append(dtype.maxName()).append('[');
    for (int i = 0; i < shape.length; i++) {
      if (i > 0) b.append(", ");
      b.append(shape[i] >= 0 ? Long.toString(shape[i]) : dimNames.get(i));
    }
    return b.append("] on ").append(device).append(')').toString();
  }
}
