package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** The weights registry (ABI 1.3): safetensors and GGUF files, tensors from memory, quantization. */
class WeightsTest {
  static final int IN = EngineTest.IN;
  static final int OUT = EngineTest.OUT;

  @TempDir Path dir;

  /** The MLP's w and b plus one tensor the graph does not declare. */
  Path writeMlp(String name, float[] w, float[] b) throws IOException {
    Path p = dir.resolve(name);
    TestFiles.writeSafetensors(p,
        new TestFiles.StTensor("w", "F32", new long[] {IN, OUT}, TestFiles.f32(w)),
        new TestFiles.StTensor("b", "F32", new long[] {OUT}, TestFiles.f32(b)),
        new TestFiles.StTensor("step", "I64", new long[] {3}, TestFiles.i64(7, -8, 9)));
    return p;
  }

  static MaxException fails(StatusCode code, String says, Executable call) {
    MaxException e = assertThrows(MaxException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(says), e.getMessage() + " does not say " + says);
    return e;
  }

  @Test
  void safetensorsBindAModelAndReloadFromMemory() throws IOException {
    float[] w = EngineTest.gaussian(IN * OUT, 31);
    float[] b = EngineTest.gaussian(OUT, 32);
    float[] x = EngineTest.gaussian(5 * IN, 33);
    Weights reg = Weights.open(writeMlp("mlp.safetensors", w, b));
    try (Context ctx = Context.create(1); Graph g = GraphTest.mlp(); Tensor in = Tensor.of(x, 5, IN)) {
      assertEquals(3, reg.size());
      assertEquals(Set.of("w", "b", "step"), Set.copyOf(reg.names()));
      assertEquals(new Weights.Info(DType.FLOAT32, new long[] {IN, OUT}, QuantEncoding.NONE), reg.info("w"));
      assertTrue(reg.contains("b"));
      assertFalse(reg.contains("nope"));
      fails(StatusCode.NOT_FOUND, "'nope'", () -> reg.info("nope"));
      try (Tensor step = reg.tensor("step")) {
        assertArrayEquals(new long[] {7, -8, 9}, step.toLongArray());
        assertTrue(step.isReadOnly(), "a view of a weights file is read-only");
      }

      Model m = ctx.load(g, reg); // binds w and b, ignores step
      try (m) {
        reg.close(); // the model keeps what it bound
        EngineTest.assertClose(EngineTest.reference(x, 5, w, b), EngineTest.run(m, in));
        assertThrows(IllegalStateException.class, reg::names);

        float[] w2 = EngineTest.gaussian(IN * OUT, 34);
        try (Weights mem = new Weights(); Tensor wt = Tensor.of(w2, IN, OUT)) {
          mem.addTensor("w", wt);
          m.reload(mem); // only w changes
          EngineTest.assertClose(EngineTest.reference(x, 5, w2, b), EngineTest.run(m, in));
        }
      }
    } finally {
      reg.close(); // idempotent
    }
  }

  @Test
  void errorsNameTheWeightOrTheFile() throws IOException {
    try (Weights reg = new Weights(); Tensor w = Tensor.of(new float[IN * OUT], IN, OUT);
        Tensor b7 = Tensor.of(new float[7], 7); Context ctx = Context.create(1); Graph g = GraphTest.mlp();
        CompiledModel cm = ctx.compile(g)) {
      reg.addTensor("w", w);
      fails(StatusCode.ALREADY_EXISTS, "'w'", () -> reg.addTensor("w", w));
      fails(StatusCode.INVALID_ARGUMENT, "name", () -> reg.addTensor("", w));
      fails(StatusCode.INVALID_ARGUMENT, "uint8", () -> reg.addTensor("wq", w, QuantEncoding.Q8_0));
      fails(StatusCode.NOT_FOUND, "'b'", () -> cm.createModel(reg));
      fails(StatusCode.NOT_FOUND, "absent.safetensors", () -> reg.addFile(dir.resolve("absent.safetensors")));
      fails(StatusCode.INVALID_ARGUMENT, "path is null", () -> reg.addFile(null));
      fails(StatusCode.INVALID_ARGUMENT, "tensor is null", () -> reg.addTensor("t", null));
      fails(StatusCode.INVALID_ARGUMENT, "name", () -> reg.addTensor(null, w));
      fails(StatusCode.INVALID_ARGUMENT, "name", () -> reg.info(null));
      fails(StatusCode.INVALID_ARGUMENT, "weights is null", () -> cm.createModel((Weights) null));

      byte[] full = Files.readAllBytes(writeMlp("full.safetensors", new float[IN * OUT], new float[OUT]));
      Path cut = Files.write(dir.resolve("cut.safetensors"), Arrays.copyOf(full, full.length - 10));
      fails(StatusCode.DATA_LOSS, "cut.safetensors", () -> reg.addFile(cut));
      assertEquals(1, reg.size(), "a failed addFile adds nothing");

      reg.addTensor("b", b7);
      fails(StatusCode.INVALID_ARGUMENT, "'b' is float32[7]", () -> cm.createModel(reg));
      Tensor closed = Tensor.of(new float[] {1}, 1);
      closed.close();
      assertThrows(IllegalStateException.class, () -> reg.addTensor("c", closed));
    }
  }

  @Test
  void quantEncodingsKnowTheirBlocks() {
    assertEquals("q8_0", QuantEncoding.Q8_0.maxName());
    assertEquals(32, QuantEncoding.Q8_0.elementsPerBlock());
    assertEquals(34, QuantEncoding.Q8_0.blockBytes());
    assertEquals(18, QuantEncoding.Q4_0.blockBytes());
    assertEquals(256, QuantEncoding.Q4_K.elementsPerBlock());
    assertEquals(144, QuantEncoding.Q4_K.blockBytes());
    assertEquals(176, QuantEncoding.Q5_K.blockBytes());
    assertEquals(210, QuantEncoding.Q6_K.blockBytes());
    assertEquals("none", QuantEncoding.NONE.maxName());
    fails(StatusCode.INVALID_ARGUMENT, "NONE", QuantEncoding.NONE::blockBytes);
    for (QuantEncoding e : QuantEncoding.values()) assertEquals(e, QuantEncoding.fromCode(e.code()));
    assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> QuantEncoding.fromCode(99)).code());
  }

  /** Q8_0 quantization round-trips through a GGUF file and dequantizes within one step of max|block| / 127. */
  @Test
  void quantizeSaveGgufAndDequantize() {
    int rows = 2;
    int k = 64;
    float[] x = EngineTest.gaussian(rows * k, 40);
    for (int i = 0; i < x.length; i++) x[i] = Math.max(-1f, Math.min(1f, x[i] / 3)); // |x| <= 1
    Path gguf = dir.resolve("q.gguf");
    try (Tensor xt = Tensor.of(x, rows, k); Tensor q = xt.quantize(QuantEncoding.Q8_0); Weights reg = new Weights()) {
      assertEquals(DType.UINT8, q.dtype());
      assertArrayEquals(new long[] {rows, k / 32 * 34}, q.shape());
      reg.addTensor("x", xt);
      reg.addTensor("q", q, QuantEncoding.Q8_0);
      reg.saveGguf(gguf, "roundtrip");
      fails(StatusCode.NOT_FOUND, "x.gguf", () -> reg.saveGguf(dir.resolve("no/dir/x.gguf"), null));
      fails(StatusCode.INVALID_ARGUMENT, "int64", () -> Tensor.of(new long[] {1, 2}, 2).quantize(QuantEncoding.Q8_0));
      fails(StatusCode.INVALID_ARGUMENT, "30", () -> Tensor.of(new float[30], 1, 30).quantize(QuantEncoding.Q8_0));
      fails(StatusCode.INVALID_ARGUMENT, "none", () -> xt.quantize(QuantEncoding.NONE));
    }
    try (Weights back = Weights.open(gguf); Graph g = new Graph("dequant"); Context ctx = Context.create(1);
        Tensor in = Tensor.of(x, rows, k)) {
      assertEquals(new Weights.Info(DType.UINT8, new long[] {rows, 68}, QuantEncoding.Q8_0), back.info("q"));
      try (Tensor xb = back.tensor("x")) {
        assertArrayEquals(x, xb.toFloatArray());
      }
      Value input = g.addInput("x", DType.FLOAT32, rows, k);
      Value qv = g.addWeight("q", DType.UINT8, rows, 68);
      g.output(input.sub(Ops.dequantize(qv, QuantEncoding.Q8_0)));
      try (Model m = ctx.load(g, back)) {
        float worst = 0;
        for (float d : EngineTest.run(m, in)) worst = Math.max(worst, Math.abs(d));
        assertTrue(worst <= 1f / 127, "x - dequantize(quantize(x)) reaches " + worst);
      }
    }
  }

  @Test
  void qmatmulMatchesTheFloatProduct() {
    // y = x @ dequantize(q).T for q = quantize(w), w [n=3, k=32]; qmatmul also quantizes x's blocks.
    float[] w = EngineTest.gaussian(3 * 32, 50);
    float[] x = EngineTest.gaussian(32, 51);
    try (Tensor wt = Tensor.of(w, 3, 32); Tensor q = wt.quantize(QuantEncoding.Q8_0); Graph g = new Graph("qmm");
        Context ctx = Context.create(1); Tensor in = Tensor.of(x, 1, 32)) {
      Value xv = g.addInput("x", DType.FLOAT32, 1, 32);
      Value qv = g.addWeight("q", DType.UINT8, 3, 34);
      g.output(Ops.qmatmul(xv, qv, QuantEncoding.Q8_0));
      try (Weights reg = new Weights()) {
        reg.addTensor("q", q, QuantEncoding.Q8_0);
        try (Model m = ctx.load(g, reg)) {
          float[] y = EngineTest.run(m, in);
          assertEquals(3, y.length);
          for (int j = 0; j < 3; j++) {
            double exact = 0;
            double scale = 0;
            for (int i = 0; i < 32; i++) {
              exact += (double) x[i] * w[j * 32 + i];
              scale += Math.abs(x[i] * w[j * 32 + i]);
            }
            assertTrue(Math.abs(y[j] - exact) <= 0.02 * scale + 1e-4, "row " + j + ": " + y[j] + " vs " + exact);
          }
        }
      }
    }
  }

  @Test
  void registriesAreSharedByThreads() throws Exception {
    float[] w = EngineTest.gaussian(IN * OUT, 60);
    float[] b = EngineTest.gaussian(OUT, 61);
    float[] x = EngineTest.gaussian(IN, 62);
    float[] want = EngineTest.reference(x, 1, w, b);
    try (Weights reg = Weights.open(writeMlp("shared.safetensors", w, b)); Context ctx = Context.create(1);
        Graph g = GraphTest.mlp(); CompiledModel cm = ctx.compile(g); Tensor in = Tensor.of(x, 1, IN)) {
      List<Thread> threads = new java.util.ArrayList<>();
      List<Throwable> failures = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
      for (int t = 0; t < 4; t++) {
        Thread th = new Thread(() -> {
          try {
            for (int i = 0; i < 20; i++) {
              try (Model m = cm.createModel(reg)) {
                EngineTest.assertClose(want, EngineTest.run(m, in));
              }
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        });
        th.start();
        threads.add(th);
      }
      for (Thread th : threads) th.join();
      assertEquals(List.of(), failures);
    }
  }
}
