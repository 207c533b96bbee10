package dev.maxc;

import java.util.Objects;

/**
 * Where a graph value lives (MAX's DeviceRef): a kind and an id, with no handle behind it.
 * Immutable and thread-safe.
 */
public final class DeviceRef {
  /** {@code MAX_DEVICE_REF_*}. */
  public enum Kind {
    CPU(0),
    GPU(1);

    final int code;

    Kind(int code) {
      this.code = code;
    }

    static Kind fromCode(int code) {
      return code == GPU.code ? GPU : CPU;
    }
  }

  private static final DeviceRef CPU0 = new DeviceRef(Kind.CPU, 0);

  private final Kind kind;
  private final int id;

  private DeviceRef(Kind kind, int id) {
    this.kind = kind;
    this.id = id;
  }

  /** The host, {@code cpu:0}. */
  public static DeviceRef cpu() {
    return CPU0;
  }

  /** Accelerator {@code id}, {@code gpu:<id>}. */
  public static DeviceRef gpu(int id) {
    return new DeviceRef(Kind.GPU, id);
  }

  static DeviceRef of(int kindCode, int id) {
    Kind k = Kind.fromCode(kindCode);
    return k == Kind.CPU && id == 0 ? CPU0 : new DeviceRef(k, id);
  }

  /** The kind (CPU or GPU). */
  public Kind kind() {
    return kind;
  }

  /** The device id within its kind. */
  public int id() {
    return id;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DeviceRef && ((DeviceRef) o).kind == kind && ((DeviceRef) o).id == id;
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, id);
  }

  /** {@code "cpu:0"}, {@code "gpu:1"}. */
  @Override
  public String toString() {
    return kind.name().toLowerCase(java.util.Locale.ROOT) + ":" + id;
  }
}
