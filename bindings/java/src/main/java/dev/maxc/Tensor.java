package dev.maxc;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A tensor (MAX's driver Tensor): storage on a device plus dtype, shape and strides. Data goes
 * in by copy (from Java arrays or ByteBuffers) and comes out by copy ({@code to*Array},
 * {@link #toByteBuffer()}), in row-major order and the platform's byte order; a strided view is
 * packed on the way out.
 *
 * <p>Each {@code Tensor} object owns one reference, dropped by {@link #close()} or the Cleaner.
 * Thread-safe: any thread may read a tensor; writing its contents ({@link #copyFrom}) while
 * another thread reads them is the caller's race, as in C.
 */
public final class Tensor extends NativeHandle {
  Tensor(Pointer peer) {
    super("Tensor", peer, MaxLibrary.lib()::max_tensor_release);
  }

  // ---- creation ----

  /**
   * A zero-filled contiguous CPU tensor; the caller owns it.
   *
   * @throws MaxException for a negative dim
   */
  public static Tensor zeros(DType dtype, long... shape) {
    return zeros(null, dtype, shape);
  }

  /**
   * A zero-filled contiguous tensor on {@code device} (null: the CPU); the caller owns it.
   *
   * @throws MaxException INVALID_ARGUMENT for a negative dim or a rank over 64
   */
  public static Tensor zeros(Device device, DType dtype, long... shape) {
    PointerByReference out = new PointerByReference();
    if (device == null) {
      Status.check(MaxLibrary.lib().max_tensor_create(null, dtype.code(), dimsOrNull(shape), shape.length, out));
    } else {
      device.with("zeros", d -> {
        Status.check(MaxLibrary.lib().max_tensor_create(d, dtype.code(), dimsOrNull(shape), shape.length, out));
        return null;
      });
    }
    return new Tensor(out.getValue());
  }

  /** A float32 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(float[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.FLOAT32, shape, (long) data.length * 4, m -> m.write(0, data, 0, data.length));
  }

  /** A float64 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(double[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.FLOAT64, shape, (long) data.length * 8, m -> m.write(0, data, 0, data.length));
  }

  /** An int32 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(int[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.INT32, shape, (long) data.length * 4, m -> m.write(0, data, 0, data.length));
  }

  /** An int64 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(long[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.INT64, shape, (long) data.length * 8, m -> m.write(0, data, 0, data.length));
  }

  /** An int16 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(short[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.INT16, shape, (long) data.length * 2, m -> m.write(0, data, 0, data.length));
  }

  /** An int8 tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(byte[] data, long... shape) {
    checkCount(data.length, shape);
    return fromHost(DType.INT8, shape, data.length, m -> m.write(0, data, 0, data.length));
  }

  /** A bool tensor holding a copy of {@code data}; {@code shape} must hold data.length elements. */
  public static Tensor of(boolean[] data, long... shape) {
    checkCount(data.length, shape);
    byte[] bytes = new byte[data.length];
    for (int i = 0; i < data.length; i++) bytes[i] = (byte) (data[i] ? 1 : 0);
    return fromHost(DType.BOOL, shape, bytes.length, m -> m.write(0, bytes, 0, bytes.length));
  }

  /** A rank-0 float32 tensor. */
  public static Tensor scalar(float value) {
    return of(new float[] {value});
  }

  /** A rank-0 float64 tensor. */
  public static Tensor scalar(double value) {
    return of(new double[] {value});
  }

  /** A rank-0 int32 tensor. */
  public static Tensor scalar(int value) {
    return of(new int[] {value});
  }

  /** A rank-0 int64 tensor. */
  public static Tensor scalar(long value) {
    return of(new long[] {value});
  }

  /**
   * A tensor of any dtype holding a copy of {@code data}: the elements' bytes in row-major order
   * and the platform's byte order (sub-byte types packed).
   *
   * @throws MaxException INVALID_ARGUMENT when the byte count does not fit dtype and shape
   */
  public static Tensor fromBytes(DType dtype, byte[] data, long... shape) {
    return fromHost(dtype, shape, data.length, m -> m.write(0, data, 0, data.length));
  }

  /**
   * A tensor of any dtype holding a copy of the bytes between {@code data}'s position and limit
   * (row-major, platform byte order; the buffer's own order setting is ignored). A direct buffer is
   * copied straight from its memory; a heap buffer goes through one extra copy. The buffer's
   * position is not changed.
   *
   * @throws MaxException INVALID_ARGUMENT when the byte count does not fit dtype and shape
   */
  public static Tensor fromBuffer(DType dtype, ByteBuffer data, long... shape) {
    int n = data.remaining();
    if (!data.isDirect()) {
      byte[] copy = new byte[n];
      data.duplicate().get(copy);
      return fromBytes(dtype, copy, shape);
    }
    Pointer base = n == 0 ? null : Native.getDirectBufferPointer(data).share(data.position());
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_tensor_create_from_host(null, dtype.code(), dimsOrNull(shape), shape.length,
        base, new SizeT(n), out));
    java.lang.ref.Reference.reachabilityFence(data); // its memory was read during the call
    return new Tensor(out.getValue());
  }

  private interface Fill {
    void into(Memory m);
  }

  private static Tensor fromHost(DType dtype, long[] shape, long bytes, Fill fill) {
    PointerByReference out = new PointerByReference();
    if (bytes == 0) {
      // JNA cannot allocate 0 bytes; the library takes NULL data with num_bytes 0.
      Status.check(MaxLibrary.lib().max_tensor_create_from_host(null, dtype.code(), dimsOrNull(shape), shape.length,
          null, new SizeT(0), out));
    } else {
      try (Memory m = new Memory(bytes)) {
        fill.into(m);
        Status.check(MaxLibrary.lib().max_tensor_create_from_host(null, dtype.code(), dimsOrNull(shape), shape.length,
            m, new SizeT(bytes), out));
      }
    }
    return new Tensor(out.getValue());
  }

  private static void checkCount(int length, long[] shape) {
    long n = 1;
    for (long d : shape) n *= d;
    if (n != length) {
      throw Status.invalid("shape " + Arrays.toString(shape) + " holds " + n + " elements but the array has " + length);
    }
  }

  static long[] dimsOrNull(long[] shape) {
    return shape.length == 0 ? null : shape;
  }

  // ---- queries ----

  /**
   * The element type.
   *
   * @throws IllegalStateException when closed
   */
  public DType dtype() {
    return with("dtype", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_dtype(p, out));
      return DType.fromCode(out.getValue());
    });
  }

  /**
   * The number of dimensions (0 for a scalar).
   *
   * @throws IllegalStateException when closed
   */
  public int rank() {
    return with("rank", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_rank(p, out));
      return out.getValue();
    });
  }

  /**
   * The dims, a new array ({} for a scalar).
   *
   * @throws IllegalStateException when closed
   */
  public long[] shape() {
    return with("shape", p -> {
      IntByReference rank = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_rank(p, rank));
      if (rank.getValue() == 0) return new long[0];
      PointerByReference dims = new PointerByReference();
      Status.check(MaxLibrary.lib().max_tensor_dims(p, dims));
      return dims.getValue().getLongArray(0, rank.getValue());
    });
  }

  /**
   * The number of elements (1 for a scalar).
   *
   * @throws IllegalStateException when closed
   */
  public long numElements() {
    return with("numElements", p -> {
      LongByReference out = new LongByReference();
      Status.check(MaxLibrary.lib().max_tensor_num_elements(p, out));
      return out.getValue();
    });
  }

  /**
   * The bytes the elements occupy when packed contiguously.
   *
   * @throws IllegalStateException when closed
   */
  public long byteSize() {
    return with("byteSize", p -> {
      SizeTByReference out = new SizeTByReference();
      Status.check(MaxLibrary.lib().max_tensor_byte_size(p, out));
      return out.getValue();
    });
  }

  /**
   * Whether the elements are contiguous in row-major order.
   *
   * @throws IllegalStateException when closed
   */
  public boolean isContiguous() {
    return with("isContiguous", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_is_contiguous(p, out));
      return out.getValue() != 0;
    });
  }

  /**
   * Whether writes through the library fail.
   *
   * @throws IllegalStateException when closed
   */
  public boolean isReadOnly() {
    return with("isReadOnly", p -> {
      IntByReference out = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_is_read_only(p, out));
      return out.getValue() != 0;
    });
  }

  /**
   * The tensor's device; the caller owns the returned object.
   *
   * @throws IllegalStateException when closed
   */
  public Device device() {
    return with("device", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_tensor_device(p, out));
      return new Device(out.getValue());
    });
  }

  // ---- data out ----

  /**
   * The elements of a float32 tensor, copied.
   *
   * @throws MaxException for another dtype; IllegalStateException when closed
   */
  public float[] toFloatArray() {
    Memory m = host("toFloatArray", DType.FLOAT32);
    float[] a = new float[count(m, 4)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /**
   * The elements of a float64 tensor, copied.
   *
   * @throws MaxException for another dtype; IllegalStateException when closed
   */
  public double[] toDoubleArray() {
    Memory m = host("toDoubleArray", DType.FLOAT64);
    double[] a = new double[count(m, 8)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /**
   * The elements of an int32 or uint32 tensor, copied.
   *
   * @throws MaxException for another dtype
   */
  public int[] toIntArray() {
    Memory m = host("toIntArray", DType.INT32, DType.UINT32);
    int[] a = new int[count(m, 4)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /**
   * The elements of an int64 or uint64 tensor, copied.
   *
   * @throws MaxException for another dtype
   */
  public long[] toLongArray() {
    Memory m = host("toLongArray", DType.INT64, DType.UINT64);
    long[] a = new long[count(m, 8)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /** The elements of an int16, uint16, float16 or bfloat16 tensor (raw bits), copied. */
  public short[] toShortArray() {
    Memory m = host("toShortArray", DType.INT16, DType.UINT16, DType.FLOAT16, DType.BFLOAT16);
    short[] a = new short[count(m, 2)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /**
   * The elements of a bool tensor, copied.
   *
   * @throws MaxException for another dtype
   */
  public boolean[] toBooleanArray() {
    Memory m = host("toBooleanArray", DType.BOOL);
    byte[] b = new byte[count(m, 1)];
    if (m != null) try (m) { m.read(0, b, 0, b.length); }
    boolean[] a = new boolean[b.length];
    for (int i = 0; i < b.length; i++) a[i] = b[i] != 0;
    return a;
  }

  /**
   * The elements' bytes in row-major order (platform byte order, sub-byte types packed), any
   * dtype, copied. @throws MaxException when closed
   */
  public byte[] toByteArray() {
    Memory m = host("toByteArray");
    byte[] a = new byte[count(m, 1)];
    if (m != null) try (m) { m.read(0, a, 0, a.length); }
    return a;
  }

  /**
   * The elements' bytes in a new direct buffer in the platform's byte order, copied once straight
   * from the tensor; the caller owns the buffer. @throws MaxException when closed
   */
  public ByteBuffer toByteBuffer() {
    long n = byteSize();
    if (n > Integer.MAX_VALUE) throw Status.invalid("Tensor.toByteBuffer: " + n + " bytes do not fit a ByteBuffer");
    ByteBuffer b = ByteBuffer.allocateDirect((int) n).order(ByteOrder.nativeOrder());
    copyTo(b);
    return b;
  }

  /**
   * Copies the elements' bytes into a direct buffer at its position; the buffer must have exactly
   * {@link #byteSize()} bytes remaining. The position is not changed.
   *
   * @throws MaxException INVALID_ARGUMENT for a heap buffer or a size mismatch (naming both)
   */
  public void copyTo(ByteBuffer dst) {
    if (!dst.isDirect()) throw Status.invalid("Tensor.copyTo: the buffer must be direct");
    int n = dst.remaining();
    with("copyTo", p -> {
      Pointer at = n == 0 ? null : Native.getDirectBufferPointer(dst).share(dst.position());
      Status.check(MaxLibrary.lib().max_tensor_to_host(p, at, new SizeT(n)));
      return null;
    });
    java.lang.ref.Reference.reachabilityFence(dst);
  }

  private static int count(Memory m, int elementSize) {
    return m == null ? 0 : (int) (m.size() / elementSize);
  }

  /** The packed bytes in new native memory (null when there are none), after a dtype check. */
  private Memory host(String method, DType... allowed) {
    return with(method, p -> {
      if (allowed.length > 0) {
        IntByReference dt = new IntByReference();
        Status.check(MaxLibrary.lib().max_tensor_dtype(p, dt));
        DType actual = DType.fromCode(dt.getValue());
        if (!Arrays.asList(allowed).contains(actual)) {
          throw Status.invalid("Tensor." + method + ": the tensor is " + actual.maxName() + ", expected "
              + (allowed.length == 1 ? allowed[0].maxName() : Arrays.toString(allowed)));
        }
      }
      SizeTByReference size = new SizeTByReference();
      Status.check(MaxLibrary.lib().max_tensor_byte_size(p, size));
      long n = size.getValue();
      if (n > Integer.MAX_VALUE) throw Status.invalid("Tensor." + method + ": " + n + " bytes do not fit a Java array");
      if (n == 0) return null;
      Memory m = new Memory(n);
      try {
        Status.check(MaxLibrary.lib().max_tensor_to_host(p, m, new SizeT(n)));
      } catch (RuntimeException e) {
        m.close();
        throw e;
      }
      return m;
    });
  }

  // ---- copies and views ----

  /**
   * A deep contiguous copy on the same device; the caller owns it.
   *
   * @throws IllegalStateException when closed
   */
  public Tensor copy() {
    return copy(null);
  }

  /** A deep contiguous copy on {@code device} (null: the same); the caller owns it. */
  public Tensor copy(Device device) {
    return with("copy", p -> {
      PointerByReference out = new PointerByReference();
      if (device == null) {
        Status.check(MaxLibrary.lib().max_tensor_copy(p, null, out));
      } else {
        device.with("copy", d -> {
          Status.check(MaxLibrary.lib().max_tensor_copy(p, d, out));
          return null;
        });
      }
      return new Tensor(out.getValue());
    });
  }

  /**
   * Copies {@code src}'s elements into this tensor (MAX's inplace_copy_from).
   *
   * @throws MaxException INVALID_ARGUMENT for another dtype or shape; FAILED_PRECONDITION when
   *     this tensor is read-only
   */
  public void copyFrom(Tensor src) {
    with("copyFrom", d -> src.with("copyFrom", s -> {
      Status.check(MaxLibrary.lib().max_tensor_copy_from(d, s));
      return null;
    }));
  }

  /**
   * A view of this contiguous tensor's memory with another dtype and/or shape (MAX's view); the
   * byte size must stay the same. The caller owns the view; the memory lives while any view does.
   *
   * @throws MaxException INVALID_ARGUMENT when not contiguous or the sizes differ
   */
  public Tensor view(DType dtype, long... shape) {
    return with("view", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_tensor_view(p, dtype.code(), dimsOrNull(shape), shape.length, out));
      return new Tensor(out.getValue());
    });
  }

  // ---- DLPack ----

  /**
   * Exports the tensor as a {@code DLManagedTensorVersioned*} (DLPack 1.x) sharing its memory, for
   * another native library. The caller owns the struct and must call its {@code deleter} exactly
   * once (or hand it to a consumer that will); this tensor may be closed before or after.
   *
   * @throws MaxException when closed or the dtype has no DLPack equivalent
   */
  public Pointer toDLPack() {
    return with("toDLPack", p -> {
      PointerByReference out = new PointerByReference();
      Status.check(MaxLibrary.lib().max_tensor_to_dlpack(p, out));
      return out.getValue();
    });
  }

  /**
   * Imports a producer's {@code DLManagedTensorVersioned*} without copying. On success the
   * returned tensor owns the struct (its deleter runs once, when the last view goes away); on
   * failure nothing is taken and the struct stays the caller's.
   *
   * @throws MaxException INVALID_ARGUMENT / UNIMPLEMENTED naming an unsupported version, device or dtype
   */
  public static Tensor fromDLPack(Pointer managed) {
    PointerByReference out = new PointerByReference();
    Status.check(MaxLibrary.lib().max_tensor_from_dlpack(managed, out));
    return new Tensor(out.getValue());
  }

  @Override
  public String toString() {
    if (isClosed()) return "Tensor(<closed>)";
    return "Tensor(" + dtype().maxName() + ", " + Arrays.toString(shape()) + ")";
  }
}
