package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every registered op is callable; typed helpers and attribute conversion compute real results. */
class OpsTest {
  @Test
  void everyRegisteredOpIsReachable() {
    List<OpInfo> all = OpInfo.all();
    assertTrue(all.size() >= 50, all.size() + " ops");
    try (Graph g = new Graph("all")) {
      for (OpInfo op : all) {
        // Without inputs or attributes every op is refused by its own checks (never NOT_FOUND),
        // which name it; the graph stays empty.
        MaxException e = assertThrows(MaxException.class, () -> Ops.call(g, op.name(), List.of(), Map.of()), op.name());
        assertNotEquals(StatusCode.NOT_FOUND, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(op.name()), e.getMessage());
      }
      assertEquals(0, g.numOps());
    }
    MaxException unknown = assertThrows(MaxException.class, () -> Ops.call("no_such_op", Map.of(), (Value) null));
    assertEquals(StatusCode.NOT_FOUND, unknown.code());
    assertTrue(unknown.getMessage().contains("no_such_op"), unknown.getMessage());
  }

  @Test
  void attributesAreCheckedByName() {
    try (Graph g = new Graph("attrs")) {
      Value x = g.addInput("x", DType.FLOAT32, 2, 3);
      long before = g.numOps();
      MaxException unknown = assertThrows(MaxException.class, () -> Ops.call1("softmax", Map.of("axes", 1L), x));
      assertEquals(StatusCode.INVALID_ARGUMENT, unknown.code());
      assertTrue(unknown.getMessage().contains("'axes'") && unknown.getMessage().contains("axis"), unknown.getMessage());
      MaxException kind = assertThrows(MaxException.class, () -> Ops.call1("softmax", Map.of("axis", "last"), x));
      assertTrue(kind.getMessage().contains("'axis' (int)") && kind.getMessage().contains("String"), kind.getMessage());
      MaxException split = assertThrows(MaxException.class, () -> Ops.call1("split", Map.of("split_sizes", new Object[] {1, 1}), x));
      assertTrue(split.getMessage().contains("2 outputs, not 1"), split.getMessage());
      Map<String, Object> nulls = new HashMap<>();
      nulls.put("axis", null); // null keeps the default (the last axis)
      assertEquals(List.of(Dim.of(2), Dim.of(3)), Ops.call1("softmax", nulls, x).shape());
      assertEquals(before + 1, g.numOps(), "only the softmax was added");
    }
  }

  /** Runs a graph of one input x = in [2, 3] and the given outputs. */
  static List<float[]> run(Graph g, float[] in) {
    try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
        Tensor x = Tensor.of(in, 2, 3)) {
      List<Tensor> out = m.execute(x);
      List<float[]> values = new ArrayList<>();
      for (Tensor t : out) {
        values.add(t.dtype() == DType.FLOAT32 ? t.toFloatArray() : toFloats(t.toLongArray()));
        t.close();
      }
      return values;
    }
  }

  static float[] toFloats(long[] a) {
    float[] f = new float[a.length];
    for (int i = 0; i < a.length; i++) f[i] = a[i];
    return f;
  }

  @Test
  void typedHelpersCompute() {
    float[] in = {1, 5, 2, -1, -3, 0};
    try (Graph g = new Graph("families")) {
      Value x = g.addInput("x", DType.FLOAT32, 2, 3);
      g.output(
          Ops.sum(x, 1),
          Ops.argmax(x, -1),
          Ops.reshape(Ops.transpose(x, 0, 1), 6),
          Ops.concat(0, x, Ops.negate(x)),
          Ops.clamp(Ops.abs(x), 0.5, 2),
          Ops.where(Ops.greater(x, Ops.mul(x, x)), x, Ops.maximum(x, Ops.sqrt(Ops.abs(x)))),
          Ops.topK(x, 2, -1).get(0),
          Ops.permute(Ops.unsqueeze(x, 0), 2, 1, 0),
          Ops.call1("cumsum", Map.of("axis", 1L, "reverse", true), x),
          Ops.softmax(x, -1));
      List<float[]> out = run(g, in);
      assertArrayEquals(new float[] {8, -4}, out.get(0));
      assertArrayEquals(new float[] {1, 2}, out.get(1));
      assertArrayEquals(new float[] {1, -1, 5, -3, 2, 0}, out.get(2));
      EngineTest.assertClose(new float[] {1, 5, 2, -1, -3, 0, -1, -5, -2, 1, 3, 0}, out.get(3)); // -0 == 0
      assertArrayEquals(new float[] {1, 2, 2, 1, 2, 0.5f}, out.get(4));
      float[] expected = new float[6];
      for (int i = 0; i < 6; i++) {
        float v = in[i];
        expected[i] = v > v * v ? v : Math.max(v, (float) Math.sqrt(Math.abs(v)));
      }
      EngineTest.assertClose(expected, out.get(5));
      assertArrayEquals(new float[] {5, 2, 0, -1}, out.get(6));
      assertArrayEquals(new float[] {1, -1, 5, -3, 2, 0}, out.get(7)); // [3, 2, 1]: the transpose
      assertArrayEquals(new float[] {8, 7, 2, -4, -3, 0}, out.get(8));
      float[] soft = out.get(9);
      for (int r = 0; r < 2; r++) {
        double total = 0;
        for (int c = 0; c < 3; c++) total += Math.exp(in[3 * r + c]);
        for (int c = 0; c < 3; c++) assertEquals(Math.exp(in[3 * r + c]) / total, soft[3 * r + c], 1e-6);
      }
    }
  }

  /**
   * nonzero's count is a symbol no input binds: each execution computes it and runs what follows
   * (a gather_nd of the found elements) for that count, zero included.
   */
  @Test
  void nonzeroCountIsDecidedAtRunTime() {
    try (Graph g = new Graph("nonzero"); Tensor two = Tensor.scalar(2f)) {
      Value x = g.addInput("x", DType.FLOAT32, 2, 3);
      Value indices = Ops.nonzero(x, "count");
      assertEquals(List.of(Dim.sym("count"), Dim.of(2)), indices.shape());
      Value picked = Ops.call1("gather_nd", Map.of("batch_dims", 0L), x, indices);
      g.output(indices, Ops.mul(picked, Ops.constant(g, two)));
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
          Tensor some = Tensor.of(new float[] {0, 1.5f, 0, -2, 0, 3}, 2, 3);
          Tensor none = Tensor.zeros(DType.FLOAT32, 2, 3)) {
        List<Tensor> out = m.execute(some);
        assertArrayEquals(new long[] {3, 2}, out.get(0).shape());
        assertArrayEquals(new long[] {0, 1, 1, 0, 1, 2}, out.get(0).toLongArray());
        assertArrayEquals(new float[] {3, -4, 6}, out.get(1).toFloatArray());
        out.forEach(Tensor::close);
        out = m.execute(none);
        assertArrayEquals(new long[] {0, 2}, out.get(0).shape());
        assertArrayEquals(new long[] {0}, out.get(1).shape());
        out.forEach(Tensor::close);
      }
    }
  }

  /**
   * masked_scatter fills the masked positions, row-major, with the updates in order; the mask
   * broadcasts along rows, and too few updates are an execution error.
   */
  @Test
  void maskedScatterFillsInOrder() {
    try (Graph g = new Graph("masked_scatter")) {
      Value x = g.addInput("x", DType.FLOAT32, 2, 3);
      Value mask = g.addInput("mask", DType.BOOL, 3);
      Value updates = g.addInput("updates", DType.FLOAT32, "u");
      g.output(Ops.maskedScatter(x, mask, updates, "filled"));
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
          Tensor xt = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
          Tensor mt = Tensor.of(new boolean[] {true, false, true}, 3);
          Tensor five = Tensor.of(new float[] {-1, -2, -3, -4, -5}, 5);
          Tensor three = Tensor.of(new float[] {-1, -2, -3}, 3)) {
        List<Tensor> out = m.execute(xt, mt, five);
        assertArrayEquals(new float[] {-1, 2, -2, -3, 5, -4}, out.get(0).toFloatArray());
        out.forEach(Tensor::close);
        assertThrows(MaxException.class, () -> m.execute(xt, mt, three), "4 masked positions, 3 updates");
      }
    }
  }

  @Test
  void bitwiseHelpersCompute() {
    try (Graph g = new Graph("bitwise")) {
      Value a = g.addInput("a", DType.INT32, 4);
      Value b = g.addInput("b", DType.INT32, 4);
      Value f = g.addInput("f", DType.FLOAT32, 2);
      g.output(Ops.bitwiseAnd(a, b), Ops.bitwiseOr(a, b), Ops.bitwiseXor(a, b), Ops.bitwiseNot(a),
          Ops.bitcast(f, DType.INT32));
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
          Tensor at = Tensor.of(new int[] {12, 10, -1, 0}, 4);
          Tensor bt = Tensor.of(new int[] {10, 6, 5, 7}, 4);
          Tensor ft = Tensor.of(new float[] {1.0f, -2.5f}, 2)) {
        List<Tensor> out = m.execute(at, bt, ft);
        assertArrayEquals(new int[] {8, 2, 5, 0}, out.get(0).toIntArray());
        assertArrayEquals(new int[] {14, 14, -1, 7}, out.get(1).toIntArray());
        assertArrayEquals(new int[] {6, 12, -6, 7}, out.get(2).toIntArray());
        assertArrayEquals(new int[] {-13, -11, 0, -1}, out.get(3).toIntArray());
        assertArrayEquals(new int[] {Float.floatToRawIntBits(1.0f), Float.floatToRawIntBits(-2.5f)}, out.get(4).toIntArray());
        out.forEach(Tensor::close);
      }
    }
  }
}
