package dev.maxc;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import java.util.Arrays;

/**
 * Reading and deleting the DLPack structs that {@link Tensor#toDLPack()} and
 * {@link Tensor#toDLPackUnversioned()} hand out, or that another native library produced: a
 * {@code DLManagedTensorVersioned*} (DLPack 1.x) or an unversioned {@code DLManagedTensor*}
 * (before 1.0). The layouts are declared as JNA structures, so the offsets are the C compiler's.
 *
 * <p>Whoever holds a struct owns it until it calls its deleter (here, {@link #delete} or
 * {@link #deleteUnversioned}) or hands it to a consumer such as {@link Tensor#fromDLPack}.
 * Stateless; thread-safe for distinct structs.
 */
public final class DLPack {
  private DLPack() {}

  /** {@code DLDataType}. */
  @Structure.FieldOrder({"code", "bits", "lanes"})
  public static class DLDataType extends Structure {
    public byte code;
    public byte bits;
    public short lanes;
  }

  /** {@code DLTensor}. */
  @Structure.FieldOrder({"data", "device", "ndim", "dtype", "shape", "strides", "byte_offset"})
  public static class DLTensor extends Structure {
    public Pointer data;
    public MaxC.DLDevice device;
    public int ndim;
    public DLDataType dtype;
    public Pointer shape;
    public Pointer strides;
    public long byte_offset;
  }

  /** {@code DLManagedTensor}, the unversioned struct. */
  @Structure.FieldOrder({"dl_tensor", "manager_ctx", "deleter"})
  public static class ManagedTensor extends Structure {
    public DLTensor dl_tensor;
    public Pointer manager_ctx;
    public Pointer deleter;

    public ManagedTensor() {}

    ManagedTensor(Pointer p) {
      super(p);
      read();
    }
  }

  /** {@code DLManagedTensorVersioned}. */
  @Structure.FieldOrder({"major", "minor", "manager_ctx", "deleter", "flags", "dl_tensor"})
  public static class ManagedTensorVersioned extends Structure {
    public int major;
    public int minor;
    public Pointer manager_ctx;
    public Pointer deleter;
    public long flags;
    public DLTensor dl_tensor;

    public ManagedTensorVersioned() {}

    ManagedTensorVersioned(Pointer p) {
      super(p);
      read();
    }
  }

  /** {@code DLPACK_FLAG_BITMASK_READ_ONLY}. */
  public static final long FLAG_READ_ONLY = 1L;
  /** {@code kDLCPU}. */
  public static final int DEVICE_CPU = 1;

  /** A DLPack device ({@code __dlpack_device__}): the DLDeviceType and the id. */
  public record Device(int type, int id) {}

  /**
   * What a DLPack struct describes, copied into Java values. {@code strides} is null when the
   * producer left them out (row-major); the version is 0.0 and readOnly false for an unversioned
   * struct, which has neither.
   */
  public record Info(int versionMajor, int versionMinor, Device device, int code, int bits, int lanes, long[] shape,
      long[] strides, long byteOffset, boolean readOnly) {
    @Override
    public String toString() {
      return "DLPack.Info(v" + versionMajor + "." + versionMinor + ", " + device + ", code " + code + " bits " + bits
          + " lanes " + lanes + ", shape " + Arrays.toString(shape) + ", strides " + Arrays.toString(strides) + ")";
    }
  }

  private static Pointer nonNull(Pointer managed, String method) {
    if (managed == null) throw Status.invalid("DLPack." + method + ": the struct pointer is null");
    return managed;
  }

  /**
   * Reads a {@code DLManagedTensorVersioned*}.
   *
   * @throws MaxException INVALID_ARGUMENT for null
   */
  public static Info info(Pointer managed) {
    ManagedTensorVersioned m = new ManagedTensorVersioned(nonNull(managed, "info"));
    return info(m.major, m.minor, m.dl_tensor, (m.flags & FLAG_READ_ONLY) != 0);
  }

  /**
   * Reads an unversioned {@code DLManagedTensor*}.
   *
   * @throws MaxException INVALID_ARGUMENT for null
   */
  public static Info infoUnversioned(Pointer managed) {
    return info(0, 0, new ManagedTensor(nonNull(managed, "infoUnversioned")).dl_tensor, false);
  }

  private static Info info(int major, int minor, DLTensor t, boolean readOnly) {
    int n = t.ndim;
    long[] shape = n > 0 && t.shape != null ? t.shape.getLongArray(0, n) : new long[0];
    long[] strides = n > 0 && t.strides != null ? t.strides.getLongArray(0, n) : null;
    return new Info(major, minor, new Device(t.device.device_type, t.device.device_id), t.dtype.code & 0xFF,
        t.dtype.bits & 0xFF, t.dtype.lanes & 0xFFFF, shape, strides, t.byte_offset, readOnly);
  }

  /**
   * Calls a {@code DLManagedTensorVersioned}'s deleter (once: the struct is gone afterwards), for
   * an export nobody imported.
   *
   * @throws MaxException INVALID_ARGUMENT for null
   */
  public static void delete(Pointer managed) {
    callDeleter(new ManagedTensorVersioned(nonNull(managed, "delete")).deleter, managed);
  }

  /**
   * Calls an unversioned {@code DLManagedTensor}'s deleter (once: the struct is gone afterwards).
   *
   * @throws MaxException INVALID_ARGUMENT for null
   */
  public static void deleteUnversioned(Pointer managed) {
    callDeleter(new ManagedTensor(nonNull(managed, "deleteUnversioned")).deleter, managed);
  }

  private static void callDeleter(Pointer deleter, Pointer managed) {
    if (deleter != null) Function.getFunction(deleter).invokeVoid(new Object[] {managed});
  }
}
