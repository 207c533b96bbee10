package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tensors over caller memory (direct ByteBuffers, strided) and both DLPack structs. */
class BorrowAndDLPackTest {
  static ByteBuffer direct(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
  }

  /** Waits for the Cleaner and the library to give every lent buffer back. */
  static void waitForLoans(int expected) throws InterruptedException {
    for (int i = 0; i < 100 && Tensor.lentBuffers() != expected; i++) {
      System.gc();
      Thread.sleep(10);
    }
    assertEquals(expected, Tensor.lentBuffers(), "buffers still lent to the library");
  }

  @Test
  void borrowedBuffersShareMemory() throws InterruptedException {
    int before = Tensor.lentBuffers();
    ByteBuffer buf = direct(8 + 6 * 4);
    buf.putLong(-1); // skipped: the tensor starts at the position
    for (int i = 0; i < 6; i++) buf.putFloat(i);
    buf.position(8);
    try (Tensor t = Tensor.borrow(DType.FLOAT32, buf, 2, 3)) {
      assertEquals(8, buf.position(), "position unchanged");
      assertEquals(before + 1, Tensor.lentBuffers());
      assertArrayEquals(new float[] {0, 1, 2, 3, 4, 5}, t.toFloatArray());
      buf.putFloat(8 + 4 * 4, 40f); // the tensor sees the buffer's memory
      assertEquals(40f, t.toFloatArray()[4]);
      try (Tensor ones = Tensor.of(new float[] {1, 1, 1, 1, 1, 1}, 2, 3)) {
        t.copyFrom(ones); // and the buffer sees the tensor's writes
      }
      assertEquals(1f, buf.getFloat(8 + 5 * 4));
      assertFalse(t.isReadOnly());
    }
    waitForLoans(before);

    ByteBuffer ro = direct(8).putInt(3).putInt(4).flip().asReadOnlyBuffer();
    try (Tensor t = Tensor.borrow(DType.INT32, ro, 2); Tensor src = Tensor.of(new int[] {0, 0}, 2)) {
      assertTrue(t.isReadOnly(), "a read-only buffer gives a read-only tensor");
      assertArrayEquals(new int[] {3, 4}, t.toIntArray());
      assertEquals(StatusCode.FAILED_PRECONDITION, assertThrows(MaxException.class, () -> t.copyFrom(src)).code());
    }
    waitForLoans(before);
  }

  @Test
  void stridedViewsOfABuffer() {
    // A 3x4 row-major float64 matrix: a column, its transpose and its rows reversed, no copies.
    ByteBuffer buf = direct(12 * 8);
    DoubleBuffer m = buf.asDoubleBuffer();
    for (int r = 0; r < 3; r++) for (int c = 0; c < 4; c++) m.put(r * 4 + c, 10 * r + c);
    try (Tensor col = Tensor.borrow(DType.FLOAT64, buf, new long[] {3}, new long[] {4});
        Tensor tr = Tensor.borrow(DType.FLOAT64, buf, new long[] {4, 3}, new long[] {1, 4});
        Tensor rev = Tensor.borrow(DType.FLOAT64, buf, new long[] {3, 4}, new long[] {-4, 1})) {
      assertArrayEquals(new double[] {0, 10, 20}, col.toDoubleArray());
      assertArrayEquals(new long[] {4}, col.strides());
      assertFalse(col.isContiguous());
      assertArrayEquals(new double[] {0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}, tr.toDoubleArray());
      assertArrayEquals(new double[] {20, 21, 22, 23, 10, 11, 12, 13, 0, 1, 2, 3}, rev.toDoubleArray());
      m.put(8, -1);
      assertEquals(-1, col.toDoubleArray()[2]);
    }
    long[][][] bad = {
      {{3, 4}, {4}}, // one stride short
      {{4}, {4}}, // reaches element 12
      {{2, 7}, {1, 2}}, // reaches element 13
      {{-1}, {1}}, // negative dim
      {{3}, {Long.MIN_VALUE}},
      {{1L << 40}, {1L << 40}},
    };
    for (long[][] b : bad) {
      MaxException e = assertThrows(MaxException.class, () -> Tensor.borrow(DType.FLOAT64, buf, b[0], b[1]));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("Tensor.borrow"), e.getMessage());
    }
    MaxException small = assertThrows(MaxException.class, () -> Tensor.borrow(DType.FLOAT64, buf, 13));
    assertTrue(small.getMessage().contains("104") && small.getMessage().contains("96"), small.getMessage());
    MaxException heap = assertThrows(MaxException.class, () -> Tensor.borrow(DType.INT8, ByteBuffer.allocate(4), 4));
    assertTrue(heap.getMessage().contains("direct"), heap.getMessage());
    try (Tensor empty = Tensor.borrow(DType.FLOAT32, buf, 0, 5)) {
      assertEquals(0, empty.numElements());
    }
  }

  @Test
  void aModelKeepsBorrowedWeightsAndTheCleanerGivesThemBack() throws InterruptedException {
    int before = Tensor.lentBuffers();
    float[] w = EngineTest.gaussian(EngineTest.IN * EngineTest.OUT, 70);
    float[] b = EngineTest.gaussian(EngineTest.OUT, 71);
    float[] x = EngineTest.gaussian(3 * EngineTest.IN, 72);
    ByteBuffer wb = direct(w.length * 4);
    wb.asFloatBuffer().put(w);
    ByteBuffer bb = direct(b.length * 4);
    bb.asFloatBuffer().put(b);
    try (Context ctx = Context.create(1); Graph g = GraphTest.mlp(); CompiledModel cm = ctx.compile(g);
        Tensor in = Tensor.of(x, 3, EngineTest.IN)) {
      Model m;
      try (Tensor wt = Tensor.borrow(DType.FLOAT32, wb, EngineTest.IN, EngineTest.OUT);
          Tensor bt = Tensor.borrow(DType.FLOAT32, bb, EngineTest.OUT)) {
        m = cm.createModel(Map.of("w", wt, "b", bt));
      }
      wb = null; // only the binding's loan keeps the buffers now
      bb = null;
      System.gc();
      try (m) {
        assertEquals(before + 2, Tensor.lentBuffers(), "the model still reads them");
        EngineTest.assertClose(EngineTest.reference(x, 3, w, b), EngineTest.run(m, in));
      }
      waitForLoans(before);

      // Dropped without close, in a loop: the Cleaner releases every tensor and model.
      for (int i = 0; i < 200; i++) {
        ByteBuffer loose = direct(w.length * 4);
        loose.asFloatBuffer().put(w);
        Tensor t = Tensor.borrow(DType.FLOAT32, loose, EngineTest.IN, EngineTest.OUT);
        if (i % 20 == 0) {
          try (Tensor bias = Tensor.of(b, EngineTest.OUT)) {
            Model dropped = cm.createModel(Map.of("w", t, "b", bias));
            EngineTest.assertClose(EngineTest.reference(x, 3, w, b), EngineTest.run(dropped, in));
          }
        }
        DLPack.delete(t.toDLPack()); // exports hold the memory too, until deleted
        if (i % 50 == 0) System.gc();
      }
    }
    waitForLoans(before); // every dropped tensor and model was released by the Cleaner
  }

  @Test
  void unversionedDLPackRoundTrip() {
    try (Tensor t = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 3, 2)) {
      assertEquals(new DLPack.Device(DLPack.DEVICE_CPU, 0), t.dlpackDevice());
      Pointer managed = t.toDLPackUnversioned();
      DLPack.Info info = DLPack.infoUnversioned(managed);
      assertEquals(0, info.versionMajor());
      assertEquals(new DLPack.Device(DLPack.DEVICE_CPU, 0), info.device());
      assertEquals(2, info.code()); // kDLFloat
      assertEquals(32, info.bits());
      assertEquals(1, info.lanes());
      assertArrayEquals(new long[] {3, 2}, info.shape());
      assertArrayEquals(new long[] {2, 1}, info.strides());
      try (Tensor u = Tensor.fromDLPackUnversioned(managed); Tensor twos = Tensor.of(new float[] {2, 2, 2, 2, 2, 2}, 3, 2)) {
        u.copyFrom(twos); // shared memory
        assertArrayEquals(new float[] {2, 2, 2, 2, 2, 2}, t.toFloatArray());
      }
      // An export nobody imports is deleted through its own deleter.
      DLPack.deleteUnversioned(t.toDLPackUnversioned());
      Pointer versioned = t.toDLPack();
      DLPack.Info v = DLPack.info(versioned);
      assertEquals(1, v.versionMajor());
      assertFalse(v.readOnly());
      DLPack.delete(versioned);
    }
    assertEquals(StatusCode.INVALID_ARGUMENT,
        assertThrows(MaxException.class, () -> Tensor.fromDLPackUnversioned(null)).code());
    assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> DLPack.info(null)).code());
  }

  @Test
  void readOnlyFlagTravelsThroughVersionedDLPack() {
    ByteBuffer ro = direct(4).putFloat(0, 9f).asReadOnlyBuffer();
    try (Tensor t = Tensor.borrow(DType.FLOAT32, ro, 1)) {
      Pointer managed = t.toDLPack();
      assertTrue(DLPack.info(managed).readOnly());
      try (Tensor u = Tensor.fromDLPack(managed)) {
        assertTrue(u.isReadOnly());
        assertArrayEquals(new float[] {9f}, u.toFloatArray());
      }
    }
  }
}
