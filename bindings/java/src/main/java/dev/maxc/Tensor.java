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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tensor (MAX's driver Tensor): storage on a device plus dtype, shape and strides. Data goes
 * in by copy (from Java arrays or ByteBuffers) or, for direct ByteBuffers, by borrowing their
 * memory ({@link #borrow}); it comes out by copy ({@code to*Array}, {@link #toByteBuffer()}), in
 * row-major order and the platform's byte order; a strided view is packed on the way out.
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

  // ---- borrowing caller memory ----

  /** Direct buffers lent to the library, by loan id, kept reachable until it lets go. */
  private static final Map<Long, ByteBuffer> LENT = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_LOAN = new AtomicLong(1);
  /** The one release callback; static, so JNA never frees it while C may still call it. */
  private static final MaxC.ReleaseFn GIVE_BACK = new GiveBack();

  /** Ends a loan; the library calls it once per borrowed tensor, on any thread. */
  private static final class GiveBack implements MaxC.ReleaseFn {
    @Override
    public void invoke(Pointer loanId) {
      LENT.remove(Pointer.nativeValue(loanId));
    }
  }

  /** How many buffers the library still borrows (for tests: it drops as tensors go). */
  static int lentBuffers() {
    return LENT.size();
  }

  /**
   * A CPU tensor over a direct buffer's memory, without copying: row-major elements of
   * {@code dtype} from the buffer's position, in the platform's byte order. See
   * {@link #borrow(DType, ByteBuffer, long[], long[])}.
   */
  public static Tensor borrow(DType dtype, ByteBuffer data, long... shape) {
    return borrow(dtype, data, shape, null);
  }

  /**
   * A CPU tensor over a direct buffer's memory, without copying: element {@code (i0, i1, ...)}
   * is at byte {@code position + (base + i0*strides[0] + ...) * elementSize}, strides counted in
   * elements (DLPack's convention; null means row-major), where {@code base} makes the lowest
   * element the one at the position (0 unless a stride is negative). Every element must lie
   * before the buffer's limit. A read-only buffer gives a read-only tensor.
   *
   * <p>The binding keeps the buffer reachable until the library lets go of its memory: when the
   * last view of the tensor goes (close, the Cleaner, or a model or registry that used it as a
   * weight going away). Writing to the buffer while the tensor or a model using it may read it is
   * a data race; use {@link #fromBuffer} for a copy instead. The buffer's position is not changed.
   *
   * @throws MaxException INVALID_ARGUMENT for a heap buffer (the GC may move it), a negative dim,
   *     strides of another length than the shape, strides for a sub-byte dtype, or a view that
   *     reaches past the limit (naming the sizes)
   */
  public static Tensor borrow(DType dtype, ByteBuffer data, long[] shape, long[] strides) {
    Status.nonNull(dtype, "Tensor.borrow: dtype");
    Status.nonNull(shape, "Tensor.borrow: shape");
    if (!Status.nonNull(data, "Tensor.borrow: data").isDirect()) {
      throw Status.invalid("Tensor.borrow: the buffer must be direct (a heap buffer may move; fromBuffer copies one)");
    }
    long[] offsets = Borrowing.extent(dtype, shape, strides, data.remaining());
    if (offsets == null) return zeros(dtype, shape); // no elements: nothing to borrow
    Pointer at = Native.getDirectBufferPointer(data).share(data.position() + offsets[0]);
    long loan = NEXT_LOAN.getAndIncrement();
    LENT.put(loan, data);
    PointerByReference out = new PointerByReference();
    try {
      Status.check(MaxLibrary.lib().max_tensor_create_borrowed(dtype.code(), dimsOrNull(shape), shape.length,
          strides == null || strides.length == 0 ? null : strides, at, data.isReadOnly() ? 1 : 0, GIVE_BACK,
          new Pointer(loan), out));
    } catch (RuntimeException e) {
      LENT.remove(loan); // on failure the library never calls release
      throw e;
    }
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

  /** A C call that returns its status and puts its result in one pointer out-parameter. */
  private interface OutCall {
    Pointer call(PointerByReference out);
  }

  /** What {@code call} puts out; a failing status throws. */
  private static Pointer out(OutCall call) {
    PointerByReference out = new PointerByReference();
    Status.check(call.call(out));
    return out.getValue();
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
   * The strides in elements, a new array ({} for a scalar).
   *
   * @throws IllegalStateException when closed
   */
  public long[] strides() {
    return with("strides", p -> {
      IntByReference rank = new IntByReference();
      Status.check(MaxLibrary.lib().max_tensor_rank(p, rank));
      if (rank.getValue() == 0) return new long[0];
      PointerByReference strides = new PointerByReference();
      Status.check(MaxLibrary.lib().max_tensor_strides(p, strides));
      return strides.getValue().getLongArray(0, rank.getValue());
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
    return with("device", p -> new Device(out(o -> MaxLibrary.lib().max_tensor_device(p, o))));
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
    return with("view", p -> new Tensor(out(o ->
        MaxLibrary.lib().max_tensor_view(p, dtype.code(), dimsOrNull(shape), shape.length, o))));
  }

  /**
   * This float32 CPU tensor {@code [..., k]} quantized into a new uint8 tensor {@code [...,
   * row_bytes]} of {@code encoding}, each block's scales fitted by least squares: what the graph
   * ops {@code qmatmul} and {@code dequantize} read. A slow conversion step, not an inference
   * kernel. The caller owns the result.
   *
   * @throws MaxException INVALID_ARGUMENT for another dtype, a scalar, NONE, or k not a whole
   *     number of blocks; FAILED_PRECONDITION for device memory
   */
  public Tensor quantize(QuantEncoding encoding) {
    Status.nonNull(encoding, "Tensor.quantize: encoding");
    return with("quantize", p -> new Tensor(out(o -> MaxLibrary.lib().max_tensor_quantize(p, encoding.code(), o))));
  }

  // ---- DLPack ----

  /**
   * The tensor's DLPack device, as {@code __dlpack_device__} gives it.
   *
   * @throws IllegalStateException when closed
   */
  public DLPack.Device dlpackDevice() {
    return with("dlpackDevice", p -> {
      MaxC.DLDevice out = new MaxC.DLDevice();
      Status.check(MaxLibrary.lib().max_tensor_dlpack_device(p, out));
      out.read();
      return new DLPack.Device(out.device_type, out.device_id);
    });
  }

  /**
   * Exports the tensor as an unversioned {@code DLManagedTensor*} (DLPack before 1.0, for older
   * consumers), sharing its memory. Ownership as {@link #toDLPack()}: call its deleter once
   * ({@link DLPack#deleteUnversioned}) or hand it to a consumer. A read-only tensor cannot say so
   * in this struct; prefer {@link #toDLPack()} for DLPack 1.x consumers.
   *
   * @throws IllegalStateException when closed
   */
  public Pointer toDLPackUnversioned() {
    return with("toDLPackUnversioned", p -> out(o -> MaxLibrary.lib().max_tensor_to_dlpack_unversioned(p, o)));
  }

  /**
   * Imports a producer's unversioned {@code DLManagedTensor*} without copying, with
   * {@link #fromDLPack}'s ownership rules: on success the tensor owns the struct; on failure it
   * stays the caller's.
   *
   * @throws MaxException INVALID_ARGUMENT for null; INVALID_ARGUMENT / UNIMPLEMENTED naming an
   *     unsupported device, dtype or lanes
   */
  public static Tensor fromDLPackUnversioned(Pointer managed) {
    return importDLPack("fromDLPackUnversioned", managed,
        o -> MaxLibrary.lib().max_tensor_from_dlpack_unversioned(managed, o));
  }

  /**
   * Exports the tensor as a {@code DLManagedTensorVersioned*} (DLPack 1.x) sharing its memory, for
   * another native library. The caller owns the struct and must call its {@code deleter} exactly
   * once (or hand it to a consumer that will); this tensor may be closed before or after.
   *
   * @throws MaxException when closed or the dtype has no DLPack equivalent
   */
  public Pointer toDLPack() {
    return with("toDLPack", p -> out(o -> MaxLibrary.lib().max_tensor_to_dlpack(p, o)));
  }

  /**
   * Imports a producer's {@code DLManagedTensorVersioned*} without copying. On success the
   * returned tensor owns the struct (its deleter runs once, when the last view goes away); on
   * failure nothing is taken and the struct stays the caller's.
   *
   * @throws MaxException INVALID_ARGUMENT / UNIMPLEMENTED naming an unsupported version, device or dtype
   */
  public static Tensor fromDLPack(Pointer managed) {
    return importDLPack("fromDLPack", managed, o -> MaxLibrary.lib().max_tensor_from_dlpack(managed, o));
  }

  /** The versioned and unversioned imports differ only in the C call. */
  private static Tensor importDLPack(String method, Pointer managed, OutCall importer) {
    if (managed == null) throw Status.invalid("Tensor." + method + ": the struct pointer is null");
    return new Tensor(out(importer));
  }

  @Override
  public String toString() {
    if (isClosed()) return "Tensor(<closed>)";
    return "Tensor(" + dtype().maxName() + ", " + Arrays.toString(shape()) + ")";
  }
}
