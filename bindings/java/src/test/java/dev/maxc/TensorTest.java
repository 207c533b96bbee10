package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class TensorTest {
  @Test
  void floatRoundTripKeepsDtypeShapeAndValues() {
    float[] data = {1.5f, -2f, 3.25f, 0f, 1e-3f, -7f};
    try (Tensor t = Tensor.of(data, 2, 3)) {
      assertEquals(DType.FLOAT32, t.dtype());
      assertArrayEquals(new long[] {2, 3}, t.shape());
      assertEquals(2, t.rank());
      assertEquals(6, t.numElements());
      assertEquals(24, t.byteSize());
      assertTrue(t.isContiguous());
      assertFalse(t.isReadOnly());
      assertArrayEquals(data, t.toFloatArray());
      assertEquals("Tensor(float32, [2, 3])", t.toString());
    }
  }

  @Test
  void everyJavaArrayKindRoundTrips() {
    double[] d = {1, -2.5, Math.PI};
    int[] i = {Integer.MIN_VALUE, 0, 7};
    long[] l = {Long.MAX_VALUE, -1};
    short[] s = {-3, 4};
    byte[] b = {-128, 0, 127, 5};
    boolean[] z = {true, false, true};
    try (Tensor td = Tensor.of(d, 3); Tensor ti = Tensor.of(i, 3, 1); Tensor tl = Tensor.of(l, 2);
        Tensor ts = Tensor.of(s, 1, 2); Tensor tb = Tensor.of(b, 2, 2); Tensor tz = Tensor.of(z, 3)) {
      assertArrayEquals(d, td.toDoubleArray());
      assertEquals(DType.FLOAT64, td.dtype());
      assertArrayEquals(i, ti.toIntArray());
      assertEquals(DType.INT32, ti.dtype());
      assertArrayEquals(l, tl.toLongArray());
      assertEquals(DType.INT64, tl.dtype());
      assertArrayEquals(s, ts.toShortArray());
      assertEquals(DType.INT16, ts.dtype());
      assertArrayEquals(b, tb.toByteArray());
      assertEquals(DType.INT8, tb.dtype());
      assertArrayEquals(z, tz.toBooleanArray());
      assertEquals(DType.BOOL, tz.dtype());
    }
  }

  @Test
  void scalarsEmptyTensorsAndZeros() {
    try (Tensor s = Tensor.scalar(2.5f); Tensor e = Tensor.of(new float[0], 0, 3);
        Tensor z = Tensor.zeros(DType.INT64, 2, 2)) {
      assertEquals(0, s.rank());
      assertArrayEquals(new long[0], s.shape());
      assertEquals(1, s.numElements());
      assertArrayEquals(new float[] {2.5f}, s.toFloatArray());
      assertArrayEquals(new long[] {0, 3}, e.shape());
      assertEquals(0, e.toFloatArray().length);
      assertArrayEquals(new long[4], z.toLongArray());
    }
  }

  @Test
  void byteBuffersInAndOut() {
    ByteBuffer direct = ByteBuffer.allocateDirect(8 + 12).order(ByteOrder.nativeOrder());
    direct.putLong(99); // skipped: the tensor takes position..limit
    direct.putFloat(1f).putFloat(2f).putFloat(3f);
    direct.position(8);
    try (Tensor t = Tensor.fromBuffer(DType.FLOAT32, direct, 3)) {
      assertEquals(8, direct.position(), "position unchanged");
      assertArrayEquals(new float[] {1, 2, 3}, t.toFloatArray());
      ByteBuffer out = t.toByteBuffer();
      assertTrue(out.isDirect());
      assertEquals(12, out.remaining());
      assertEquals(2f, out.getFloat(4));
    }
    ByteBuffer heap = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(5).putInt(-6);
    heap.flip();
    try (Tensor t = Tensor.fromBuffer(DType.INT32, heap, 2)) {
      assertArrayEquals(new int[] {5, -6}, t.toIntArray());
      ByteBuffer wrong = ByteBuffer.allocateDirect(4);
      MaxException e = assertThrows(MaxException.class, () -> t.copyTo(wrong));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  void rawBytesForAnyDtype() {
    short[] halfBits = {0x3C00, (short) 0xC000}; // float16 1.0 and -2.0
    ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
    b.putShort(halfBits[0]).putShort(halfBits[1]);
    try (Tensor t = Tensor.fromBytes(DType.FLOAT16, b.array(), 2)) {
      assertEquals(DType.FLOAT16, t.dtype());
      assertArrayEquals(halfBits, t.toShortArray());
      assertArrayEquals(b.array(), t.toByteArray());
    }
  }

  @Test
  void mismatchedArraysAndAccessorsAreInvalidArgument() {
    MaxException count = assertThrows(MaxException.class, () -> Tensor.of(new float[5], 2, 3));
    assertEquals(StatusCode.INVALID_ARGUMENT, count.code());
    assertTrue(count.getMessage().contains("6") && count.getMessage().contains("5"), count.getMessage());
    try (Tensor t = Tensor.of(new int[] {1, 2}, 2)) {
      MaxException dtype = assertThrows(MaxException.class, t::toFloatArray);
      assertEquals(StatusCode.INVALID_ARGUMENT, dtype.code());
      assertTrue(dtype.getMessage().contains("int32"), dtype.getMessage());
    }
  }

  @Test
  void copiesAndViews() {
    try (Tensor a = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2); Tensor c = a.copy();
        Tensor dst = Tensor.zeros(DType.FLOAT32, 2, 2); Tensor v = a.view(DType.FLOAT32, 4);
        Tensor bits = a.view(DType.INT32, 2, 2)) {
      assertArrayEquals(a.toFloatArray(), c.toFloatArray());
      dst.copyFrom(a);
      assertArrayEquals(new float[] {1, 2, 3, 4}, dst.toFloatArray());
      assertArrayEquals(new long[] {4}, v.shape());
      assertEquals(Float.floatToRawIntBits(1f), bits.toIntArray()[0]);
      try (Tensor other = Tensor.zeros(DType.FLOAT32, 3)) {
        assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> dst.copyFrom(other)).code());
      }
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> a.view(DType.FLOAT32, 5)).code());
    }
  }

  @Test
  void devicesAreCpuSingletons() {
    try (Tensor t = Tensor.of(new float[] {1}, 1); Device d = t.device(); Device cpu = Device.cpu()) {
      assertEquals(cpu, d);
      assertEquals(cpu.hashCode(), d.hashCode());
      assertEquals(Device.Kind.CPU, d.kind());
      assertEquals(0, d.id());
      assertEquals("cpu", d.label());
      assertEquals("cpu", d.api());
      assertTrue(d.isHost());
      assertEquals(DeviceRef.cpu(), d.ref());
      d.synchronize();
      assertTrue(Device.acceleratorCount() >= 0);
    }
  }

  @Test
  void dlpackExportAndImportShareTheElements() {
    try (Tensor t = Tensor.of(new float[] {4, 5, 6}, 3)) {
      Pointer managed = t.toDLPack();
      assertNotNull(managed);
      try (Tensor u = Tensor.fromDLPack(managed)) { // u owns the struct now
        assertArrayEquals(new float[] {4, 5, 6}, u.toFloatArray());
        assertArrayEquals(new long[] {3}, u.shape());
        try (Tensor ones = Tensor.of(new float[] {1, 1, 1}, 3)) {
          u.copyFrom(ones); // shared memory: t sees the write
        }
        assertArrayEquals(new float[] {1, 1, 1}, t.toFloatArray());
      }
    }
  }

  @Test
  void dtypesAgreeWithTheLibrary() {
    MaxC lib = MaxLibrary.raw();
    for (DType d : DType.values()) {
      assertEquals(1, lib.max_dtype_is_valid(d.code()), d.toString());
      assertEquals(d.maxName(), lib.max_dtype_name(d.code()));
      assertEquals(lib.max_dtype_size_in_bits(d.code()), d.sizeInBits(), d.toString());
      assertEquals(lib.max_dtype_size_in_bytes(d.code()), d.sizeInBytes(), d.toString());
      assertEquals(d, DType.fromMaxName(d.maxName()));
      assertEquals(d, DType.fromCode(d.code()));
    }
    assertEquals(81, DType.FLOAT32.code());
    assertEquals(141, DType.INT64.code());
    assertTrue(DType.BFLOAT16.isFloat());
    assertTrue(DType.UINT8.isIntegral() && !DType.UINT8.isSignedIntegral());
    assertEquals(133, DType.INT4.code());
    assertEquals(2, DType.UINT2.sizeInBits());
    assertEquals(1, DType.UINT2.sizeInBytes());
    assertTrue(DType.INT2.isSignedIntegral() && DType.UINT4.isIntegral() && !DType.UINT4.isSignedIntegral());
    assertTrue(!DType.INT4.isFloat());
    assertEquals(73, DType.FLOAT8_E8M0FNU.code());
    assertEquals("float8_e8m0fnu", DType.FLOAT8_E8M0FNU.maxName());
    assertTrue(DType.FLOAT8_E8M0FNU.isFloat() && !DType.FLOAT8_E8M0FNU.isIntegral());
    assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> DType.fromCode(3)).code());
  }
}
