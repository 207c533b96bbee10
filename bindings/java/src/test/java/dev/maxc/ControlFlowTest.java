package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Control flow (ABI 1.6) through the generic op API: subgraphs passed as graph attributes of
 * {@code cond}, {@code while_loop} and {@code call}, compiled on the CPU and executed.
 */
class ControlFlowTest {
  /** A subgraph of one float32 [2] input giving op(input). */
  private static Graph unary(String name, String op) {
    Graph g = new Graph(name);
    Value v = g.addInput("v", DType.FLOAT32, 2);
    g.setOutputs(List.of(Ops.op1(op, null, v)), null);
    return g;
  }

  @Test
  void condRunsTheBranchThePredicatePicks() {
    try (Graph negate = unary("negate", "negate");
        Graph abs = unary("abs", "abs");
        Graph g = new Graph("select")) {
      Value p = g.addInput("p", DType.BOOL);
      Value x = g.addInput("x", DType.FLOAT32, 2);
      // A Graph attribute is added to g as a subgraph; the index form goes through addSubgraph.
      long elseIndex = g.addSubgraph(abs);
      List<Value> out = Ops.call(g, "cond", List.of(p, x), Map.of("then_graph", negate, "else_graph", elseIndex));
      assertEquals(1, out.size());
      g.setOutputs(out, null);
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
          Tensor xt = Tensor.of(new float[] {1.5f, -2f}, 2)) {
        assertArrayEquals(new float[] {-1.5f, 2f}, runBool(m, true, xt));
        assertArrayEquals(new float[] {1.5f, 2f}, runBool(m, false, xt));
      }
    }
  }

  private static float[] runBool(Model m, boolean pred, Tensor x) {
    try (Tensor p = Tensor.of(new boolean[] {pred})) {
      List<Tensor> out = m.execute(p, x);
      float[] values = out.get(0).toFloatArray();
      out.forEach(Tensor::close);
      return values;
    }
  }

  /** The body of a factorial loop over (i, acc, n): (i + 1, acc * i, n). */
  private static Graph factorialStep() {
    Graph body = new Graph("step");
    Value i = body.addInput("i", DType.INT64);
    Value acc = body.addInput("acc", DType.INT64);
    Value n = body.addInput("n", DType.INT64);
    try (Tensor one = Tensor.of(new long[] {1})) {
      Value next = Ops.add(i, body.addConstant(one));
      body.setOutputs(List.of(next, Ops.mul(acc, i), n), null);
    }
    return body;
  }

  @Test
  void whileLoopComputesAFactorial() {
    try (Graph pred = new Graph("i_le_n"); Graph body = factorialStep(); Graph g = new Graph("factorial");
        Tensor one = Tensor.of(new long[] {1})) {
      Value i = pred.addInput("i", DType.INT64);
      pred.addInput("acc", DType.INT64);
      pred.setOutputs(List.of(Ops.lessEqual(i, pred.addInput("n", DType.INT64))), null);
      Value n = g.addInput("n", DType.INT64);
      Value start = g.addConstant(one);
      List<Value> out = Ops.call(g, "while_loop", List.of(start, start, n), Map.of("predicate", pred, "body", body));
      assertEquals(3, out.size());
      g.setOutputs(List.of(out.get(1)), null);
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of())) {
        long[][] cases = {{0, 1}, {1, 1}, {5, 120}, {10, 3628800}};
        for (long[] c : cases) {
          try (Tensor nt = Tensor.of(new long[] {c[0]})) {
            List<Tensor> res = m.execute(nt);
            assertArrayEquals(new long[] {c[1]}, res.get(0).toLongArray(), c[0] + "!");
            res.forEach(Tensor::close);
          }
        }
      }
    }
  }

  @Test
  void callNamesTheSubgraphsWeightsWithItsPrefix() {
    try (Graph layer = new Graph("layer"); Graph g = new Graph("two_layers")) {
      Value v = layer.addInput("v", DType.FLOAT32, "batch", 2);
      layer.setOutputs(List.of(Ops.relu(Ops.matmul(v, layer.addWeight("w", DType.FLOAT32, 2, 2)))), null);
      Value x = g.addInput("x", DType.FLOAT32, "batch", 2);
      Value h = Ops.call(g, "call", List.of(x), Map.of("graph", layer, "prefix", "l0.")).get(0);
      g.setOutputs(Ops.call(g, "call", List.of(h), Map.of("graph", layer, "prefix", "l1.")), null);
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g);
          Tensor w0 = Tensor.of(new float[] {1, -1, 2, 0.5f}, 2, 2);
          Tensor w1 = Tensor.of(new float[] {0.5f, 1, -1, 3}, 2, 2);
          Model m = cm.createModel(Map.of("l0.w", w0, "l1.w", w1));
          Tensor xt = Tensor.of(new float[] {1, 2, -3, 1}, 2, 2)) {
        List<Tensor> out = m.execute(xt);
        // relu(x @ w0) = [[5, 0], [0, 3.5]]; relu(that @ w1) = [[2.5, 5], [0, 10.5]].
        assertArrayEquals(new float[] {2.5f, 5, 0, 10.5f}, out.get(0).toFloatArray());
        out.forEach(Tensor::close);
      }
    }
  }

  @Test
  void aCallThatDoesNotFitItsSubgraphIsRefusedAndTheRegistrySaysAny() {
    try (Graph pairs = unary("pairs", "negate"); Graph g = new Graph("misfit")) {
      Value x = g.addInput("x", DType.FLOAT32, 3);
      MaxException e = assertThrows(MaxException.class, () -> Ops.call(g, "call", List.of(x), Map.of("graph", pairs)));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("pairs"), e.getMessage());
      assertEquals(0, g.numOps());
    }
    OpInfo cond = OpInfo.get("cond", 0);
    assertEquals(List.of(new OpInfo.Input("pred", OpInfo.Arity.ONE), new OpInfo.Input("args", OpInfo.Arity.ANY)), cond.inputs());
  }

  /** i = 0; while i < n: i++ — with n = 2^52, the endless ONNX Loop the fuzzer found. */
  @Test
  void runOptionsStopAnEndlessLoopAndTheModelRunsOn() throws Exception {
    try (Graph pred = new Graph("i_lt_n"); Graph body = new Graph("step"); Graph g = new Graph("count");
        Tensor one = Tensor.of(new long[] {1}); Tensor zero = Tensor.of(new long[] {0})) {
      pred.setOutputs(List.of(Ops.less(pred.addInput("i", DType.INT64), pred.addInput("n", DType.INT64))), null);
      Value bi = body.addInput("i", DType.INT64);
      Value bn = body.addInput("n", DType.INT64);
      body.setOutputs(List.of(Ops.add(bi, body.addConstant(one)), bn), null);
      Value n = g.addInput("n", DType.INT64);
      List<Value> out =
          Ops.call(g, "while_loop", List.of(g.addConstant(zero), n), Map.of("predicate", pred, "body", body));
      g.setOutputs(List.of(out.get(0)), null);
      try (Context ctx = Context.create(1); CompiledModel cm = ctx.compile(g); Model m = cm.createModel(Map.of());
          Tensor endless = Tensor.of(new long[] {1L << 52}); Tensor three = Tensor.of(new long[] {3})) {
        long began = System.nanoTime();
        MaxException e = assertThrows(MaxException.class,
            () -> m.execute(List.of(endless), new RunOptions().timeout(java.time.Duration.ofMillis(50))));
        assertEquals(StatusCode.DEADLINE_EXCEEDED, e.code());
        assertTrue(e.getMessage().contains("op 'while_loop' (iteration "), e.getMessage());
        assertTrue(System.nanoTime() - began < 5_000_000_000L);

        RunOptions options = new RunOptions();
        Thread canceller = new Thread(() -> {
          try {
            Thread.sleep(50);
          } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
          }
          options.cancel();
        });
        canceller.start();
        e = assertThrows(MaxException.class, () -> m.execute(List.of(endless), options));
        canceller.join();
        assertEquals(StatusCode.CANCELLED, e.code());
        options.reset();
        List<Tensor> res = m.execute(List.of(three), options);
        assertArrayEquals(new long[] {3}, res.get(0).toLongArray());
        res.forEach(Tensor::close);
      }
    }
  }
}
