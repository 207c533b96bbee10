package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compile, execute, metadata, named inputs, reload, input checks, threads, and device graphs
 * (capture, replay, debugVerifyReplay; on the CPU the captured plan is rerun): y = relu(x @ w + b).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EngineTest {
  static final DType F32 = DType.FLOAT32;
  static final int IN = 4;
  static final int OUT = 8;

  Context context;
  float[] w;
  float[] b;
  Model mlp;

  @BeforeAll
  void setUp() {
    context = Context.create(2);
    w = gaussian(IN * OUT, 10);
    b = gaussian(OUT, 11);
    try (Graph g = GraphTest.mlp()) {
      mlp = context.load(g, weights(w, b));
    }
  }

  @AfterAll
  void tearDown() {
    mlp.close();
    context.close();
  }

  static float[] gaussian(int n, long seed) {
    Random r = new Random(seed);
    float[] a = new float[n];
    for (int i = 0; i < n; i++) a[i] = (float) r.nextGaussian();
    return a;
  }

  static Map<String, Tensor> weights(float[] w, float[] b) {
    Map<String, Tensor> m = new LinkedHashMap<>();
    m.put("w", Tensor.of(w, IN, OUT));
    m.put("b", Tensor.of(b, OUT));
    return m;
  }

  /** relu(x @ w + b) in double precision, row-major [n, 8]. */
  static float[] reference(float[] x, int n, float[] w, float[] b) {
    float[] y = new float[n * OUT];
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < OUT; j++) {
        double s = b[j];
        for (int k = 0; k < IN; k++) s += (double) x[i * IN + k] * w[k * OUT + j];
        y[i * OUT + j] = (float) Math.max(s, 0);
      }
    }
    return y;
  }

  static void assertClose(float[] expected, float[] actual) {
    assertEquals(expected.length, actual.length);
    for (int i = 0; i < expected.length; i++) {
      float tol = 1e-5f + 1e-5f * Math.abs(expected[i]);
      if (Math.abs(expected[i] - actual[i]) > tol) {
        fail("element " + i + ": expected " + expected[i] + ", got " + actual[i]);
      }
    }
  }

  static float[] run(Model m, Tensor... inputs) {
    List<Tensor> out = m.execute(inputs);
    try {
      assertEquals(1, out.size());
      return out.get(0).toFloatArray();
    } finally {
      out.forEach(Tensor::close);
    }
  }

  /** Whether an error message names the input (by name, or as "input N"). */
  static boolean namesInput(String message, String name, int index) {
    return message.contains(name) || Pattern.compile("input #?" + index + "\\b").matcher(message).find();
  }

  static Graph pair() {
    Graph g = new Graph("pair");
    Value x = g.addInput("input0", F32, "batch", 2);
    Value y = g.addInput("input1", F32, "batch", 2);
    g.output(x.add(y));
    return g;
  }

  @Test
  void symbolicBatchRunsAnySize() {
    for (int n : new int[] {1, 7, 64, 7}) {
      float[] x = gaussian(n * IN, n);
      try (Tensor in = Tensor.of(x, n, IN)) {
        List<Tensor> out = mlp.execute(in);
        try (Tensor y = out.get(0)) {
          assertArrayEquals(new long[] {n, OUT}, y.shape());
          assertEquals(F32, y.dtype());
          assertClose(reference(x, n, w, b), y.toFloatArray());
        }
        assertArrayEquals(x, in.toFloatArray(), "inputs are only read");
      }
    }
  }

  @Test
  void metadata() {
    List<TensorSpec> inputs = mlp.inputMetadata();
    assertEquals(1, inputs.size());
    TensorSpec x = inputs.get(0);
    assertEquals("input0", x.name());
    assertEquals(F32, x.dtype());
    assertEquals(2, x.rank());
    assertArrayEquals(new long[] {-1, IN}, x.shape());
    assertEquals(Arrays.asList("batch", null), x.dimNames());
    assertFalse(x.isStatic());
    assertEquals(DeviceRef.cpu(), x.device());
    assertEquals("TensorSpec(input0: float32[batch, 4] on cpu:0)", x.toString());
    TensorSpec y = mlp.outputMetadata().get(0);
    assertEquals("output0", y.name());
    assertArrayEquals(new long[] {-1, OUT}, y.shape());
    assertEquals(Arrays.asList("batch", null), y.dimNames());
    try (CompiledModel cm = mlp.compiledModel()) {
      Map<String, TensorSpec> ws = new LinkedHashMap<>();
      for (TensorSpec s : cm.weights()) ws.put(s.name(), s);
      assertEquals(2, ws.size());
      assertArrayEquals(new long[] {IN, OUT}, ws.get("w").shape());
      assertArrayEquals(new long[] {OUT}, ws.get("b").shape());
      assertTrue(ws.get("b").isStatic());
      assertEquals(cm.inputs().get(0).name(), "input0");
    }
  }

  @Test
  void executeByName() {
    try (Graph g = pair(); Model m = context.load(g, Map.of());
        Tensor a = Tensor.of(new float[] {1, 1, 1, 1, 1, 1}, 3, 2);
        Tensor c = Tensor.of(new float[] {0, 1, 2, 3, 4, 5}, 3, 2)) {
      float[] expected = {1, 2, 3, 4, 5, 6};
      Map<String, Tensor> named = new LinkedHashMap<>();
      named.put("input1", c); // any order
      named.put("input0", a);
      List<Tensor> out = m.execute(named);
      assertArrayEquals(expected, out.get(0).toFloatArray());
      out.forEach(Tensor::close);
      assertArrayEquals(expected, run(m, a, c));

      Map<String, Tensor> unknown = new LinkedHashMap<>(named);
      unknown.put("nope", a);
      MaxException e = assertThrows(MaxException.class, () -> m.execute(unknown));
      assertEquals(StatusCode.NOT_FOUND, e.code());
      assertTrue(e.statusMessage().contains("nope"), e.statusMessage());
      MaxException missing = assertThrows(MaxException.class, () -> m.execute(Map.of("input0", a)));
      assertEquals(StatusCode.INVALID_ARGUMENT, missing.code());
      assertTrue(missing.statusMessage().contains("input1"), missing.statusMessage());
      assertArrayEquals(expected, run(m, a, c));
    }
  }

  @Test
  void reloadSwapsWeightsWithoutRecompiling() {
    float[] w2 = gaussian(IN * OUT, 20);
    float[] b2 = gaussian(OUT, 21);
    try (Graph g = GraphTest.mlp(); Model m = context.load(g, weights(w, b));
        Tensor x = Tensor.of(gaussian(4 * IN, 3), 4, IN)) {
      float[] xs = x.toFloatArray();
      float[] before = run(m, x);
      assertClose(reference(xs, 4, w, b), before);
      m.reload(weights(w2, b2));
      float[] after = run(m, x);
      assertClose(reference(xs, 4, w2, b2), after);
      assertFalse(Arrays.equals(before, after));
      m.reload(Map.of("b", Tensor.of(b, OUT))); // only b changes
      assertClose(reference(xs, 4, w2, b), run(m, x));

      float[] now = run(m, x);
      MaxException shape = assertThrows(MaxException.class,
          () -> m.reload(Map.of("w", Tensor.zeros(F32, OUT, IN), "b", Tensor.zeros(F32, OUT))));
      assertEquals(StatusCode.INVALID_ARGUMENT, shape.code());
      assertTrue(Pattern.compile("\\bw\\b").matcher(shape.statusMessage()).find(), shape.statusMessage());
      MaxException unknown = assertThrows(MaxException.class, () -> m.reload(Map.of("nope", Tensor.zeros(F32, OUT))));
      assertTrue(unknown.statusMessage().contains("nope"), unknown.statusMessage());
      assertArrayEquals(now, run(m, x), "a failed reload changes nothing");
    }
  }

  @Test
  void badInputsNameTheInputAndTheModelStaysUsable() {
    try (Graph g = pair(); Model m = context.load(g, Map.of());
        Tensor a = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2)) {
      float[] good = {2, 4, 6, 8};
      Map<String, Tensor> bad = new LinkedHashMap<>();
      bad.put("rank", Tensor.of(new float[] {1, 2, 3, 4}, 4));
      bad.put("dtype", Tensor.of(new double[] {1, 2, 3, 4}, 2, 2));
      bad.put("static dim", Tensor.zeros(F32, 2, 3));
      bad.put("symbol", Tensor.zeros(F32, 5, 2));
      for (Map.Entry<String, Tensor> c : bad.entrySet()) {
        MaxException e = assertThrows(MaxException.class, () -> m.execute(a, c.getValue()), c.getKey());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), c.getKey());
        assertTrue(namesInput(e.statusMessage(), "input1", 1), c.getKey() + ": " + e.statusMessage());
        if (c.getKey().equals("symbol")) assertTrue(e.statusMessage().contains("batch"), e.statusMessage());
        assertArrayEquals(good, run(m, a, a), "usable after " + c.getKey());
        c.getValue().close();
      }
      MaxException count = assertThrows(MaxException.class, () -> m.execute(a));
      assertEquals(StatusCode.INVALID_ARGUMENT, count.code());
      Tensor closed = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
      closed.close();
      assertThrows(IllegalStateException.class, () -> m.execute(a, closed));
      assertArrayEquals(good, run(m, a, a));
    }
  }

  @Test
  void missingAndMismatchedWeights() {
    try (Graph g = GraphTest.mlp(); CompiledModel cm = context.compile(g)) {
      MaxException missing = assertThrows(MaxException.class, () -> cm.createModel(Map.of("w", Tensor.of(w, IN, OUT))));
      assertEquals(StatusCode.NOT_FOUND, missing.code());
      assertTrue(Pattern.compile("\\bb\\b").matcher(missing.statusMessage()).find(), missing.statusMessage());
      Map<String, Tensor> extra = weights(w, b);
      extra.put("extra", Tensor.zeros(F32, 3));
      MaxException e = assertThrows(MaxException.class, () -> cm.createModel(extra));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.statusMessage().contains("extra"), e.statusMessage());
      Map<String, Tensor> wrongDtype = weights(w, b);
      wrongDtype.put("b", Tensor.zeros(DType.FLOAT64, OUT));
      assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> cm.createModel(wrongDtype)).code());
    }
  }

  @Test
  void softmaxAndMulExecute() {
    try (Graph g = new Graph("softmax")) {
      Value x = g.addInput("x", F32, "rows", 4);
      g.output(Ops.softmax(x.mul(x)));
      try (Model m = context.load(g, Map.of()); Tensor in = Tensor.of(gaussian(3 * 4, 7), 3, 4)) {
        float[] xs = in.toFloatArray();
        float[] expected = new float[xs.length];
        for (int r = 0; r < 3; r++) {
          double max = Double.NEGATIVE_INFINITY;
          double sum = 0;
          for (int c = 0; c < 4; c++) max = Math.max(max, (double) xs[r * 4 + c] * xs[r * 4 + c]);
          for (int c = 0; c < 4; c++) sum += Math.exp((double) xs[r * 4 + c] * xs[r * 4 + c] - max);
          for (int c = 0; c < 4; c++) expected[r * 4 + c] = (float) (Math.exp((double) xs[r * 4 + c] * xs[r * 4 + c] - max) / sum);
        }
        assertClose(expected, run(m, in));
      }
    }
  }

  @Test
  void graphsWithoutOutputsDoNotCompile() {
    try (Graph g = new Graph("empty")) {
      g.addInput("x", F32, 1);
      assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> context.compile(g)).code());
    }
  }

  @Test
  void parentsMayBeClosedBeforeChildren() {
    Model m;
    try (Context ctx = Context.create(1, Device.cpu()); Graph g = GraphTest.mlp()) {
      assertEquals(1, ctx.numThreads());
      List<Device> devices = ctx.devices();
      assertEquals(1, devices.size());
      assertEquals(Device.Kind.CPU, devices.get(0).kind());
      devices.forEach(Device::close);
      CompiledModel cm = ctx.compile(g, new CompileOptions().fusion(false).constantFolding(false).planCacheCapacity(1));
      m = cm.createModel(weights(w, b));
      cm.close();
    }
    try (m; Tensor x = Tensor.of(gaussian(3 * IN, 5), 3, IN)) {
      assertClose(reference(x.toFloatArray(), 3, w, b), run(m, x));
    }
    assertThrows(IllegalStateException.class, () -> m.execute(List.of()));
  }

  @Test
  void compileFromMaxgFile(@TempDir Path dir) {
    Path file = dir.resolve("mlp.maxg");
    try (Graph g = GraphTest.mlp()) {
      g.save(file);
    }
    try (CompiledModel cm = context.compileFile(file, null); Model m = cm.createModel(weights(w, b));
        Tensor x = Tensor.of(gaussian(2 * IN, 6), 2, IN)) {
      assertEquals(Arrays.asList("batch", null), m.inputMetadata().get(0).dimNames());
      assertClose(reference(x.toFloatArray(), 2, w, b), run(m, x));
    }
    MaxException e = assertThrows(MaxException.class, () -> context.compileFile(dir.resolve("absent.maxg"), null));
    assertEquals(StatusCode.NOT_FOUND, e.code());
  }

  /**
   * ABI 1.5: a file device moves a MAXG file wholly on the host onto that device; a file that
   * already places a value elsewhere is refused, naming the device. Compiling a graph ignores it.
   */
  @Test
  void fileDevicePlacesAModelFile(@TempDir Path dir) {
    Path hostFile = dir.resolve("mlp.maxg");
    try (Graph g = GraphTest.mlp()) {
      g.save(hostFile);
    }
    Path gpuFile = dir.resolve("on_gpu.maxg");
    try (Graph g = new Graph("on_gpu")) { // building (and saving) a GPU graph needs no GPU
      Value x = g.addInput("x", TensorType.of(F32, 2).on(DeviceRef.gpu(0)));
      g.output(x.add(x));
      g.save(gpuFile);
    }
    try (Device cpu = Device.cpu()) {
      CompileOptions options = new CompileOptions().fileDevice(cpu);
      try (CompiledModel cm = context.compileFile(hostFile, options); Model m = cm.createModel(weights(w, b));
          Tensor x = Tensor.of(gaussian(2 * IN, 7), 2, IN)) {
        assertEquals(DeviceRef.cpu(), cm.inputs().get(0).device());
        assertClose(reference(x.toFloatArray(), 2, w, b), run(m, x));
      }
      MaxException e = assertThrows(MaxException.class, () -> context.compileFile(gpuFile, options));
      assertEquals(StatusCode.FAILED_PRECONDITION, e.code());
      assertEquals("FAILED_PRECONDITION", e.codeName());
      assertTrue(e.getMessage().contains("already placed on gpu:0"), e.getMessage());
      try (Graph g = GraphTest.mlp(); CompiledModel cm = context.compile(g, options)) {
        assertEquals(DeviceRef.cpu(), cm.inputs().get(0).device());
      }
    }
  }

  @Test
  void concurrentExecutesGiveIdenticalResults() throws Exception {
    int threads = 8;
    int iterations = 200;
    List<Tensor> inputs = new ArrayList<>();
    List<float[]> expected = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Tensor x = Tensor.of(gaussian((t + 1) * IN, 100 + t), t + 1, IN);
      inputs.add(x);
      expected.add(run(mlp, x));
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<String>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        results.add(pool.submit(() -> {
          for (int i = 0; i < iterations; i++) {
            float[] got = run(mlp, inputs.get(id));
            if (!Arrays.equals(got, expected.get(id))) return "thread " + id + " iteration " + i + ": results differ";
          }
          return null;
        }));
      }
      for (Future<String> f : results) {
        String failure = f.get(300, TimeUnit.SECONDS);
        if (failure != null) fail(failure);
      }
    } finally {
      pool.shutdownNow();
      inputs.forEach(Tensor::close);
    }
  }

  // ---- capture and replay (MAX's device graphs; on the CPU, the captured plan) ----

  /** A fresh MLP model, so the graphs one test captures stay its own. */
  Model freshMlp() {
    try (Graph g = GraphTest.mlp()) {
      return context.load(g, weights(w, b));
    }
  }

  @Test
  void replayRewritesTheCapturedOutputs() {
    float[] a = gaussian(3 * IN, 40);
    float[] c = gaussian(3 * IN, 41);
    try (Model m = freshMlp(); Tensor at = Tensor.of(a, 3, IN); Tensor ct = Tensor.of(c, 3, IN)) {
      List<Tensor> out = m.capture(11, at);
      assertEquals(1, out.size());
      Tensor y = out.get(0);
      assertArrayEquals(new long[] {3, OUT}, y.shape());
      assertClose(reference(a, 3, w, b), y.toFloatArray());
      assertArrayEquals(run(m, at), y.toFloatArray(), "capture gives execute's result");

      // The same tensor, rewritten in place: no new outputs come back.
      m.replay(11, ct);
      assertClose(reference(c, 3, w, b), y.toFloatArray());
      m.debugVerifyReplay(new long[] {11}, List.of(ct));
      assertClose(reference(c, 3, w, b), y.toFloatArray()); // verifying leaves the outputs be
      m.replay(new long[] {11}, List.of(at)); // an array of one key per device is the same key
      assertClose(reference(a, 3, w, b), y.toFloatArray());
      assertArrayEquals(a, at.toFloatArray(), "inputs are only read");

      // A key is any 64 bits: -1L is the largest uint64.
      List<Tensor> top = m.capture(-1L, at);
      m.replay(-1L, ct);
      assertClose(reference(c, 3, w, b), top.get(0).toFloatArray());

      // Capturing again under a key replaces its graph: new outputs; the old keep their values.
      float[] kept = y.toFloatArray();
      List<Tensor> again = m.capture(11, ct);
      m.replay(11, at);
      assertClose(reference(a, 3, w, b), again.get(0).toFloatArray());
      assertArrayEquals(kept, y.toFloatArray());
      // Closing the outputs is fine: the graph holds its own reference.
      out.forEach(Tensor::close);
      again.forEach(Tensor::close);
      top.forEach(Tensor::close);
      m.replay(11, ct);
    }
  }

  @Test
  void graphCallsCheckKeysAndInputs() {
    float[] x = gaussian(2 * IN, 42);
    Model m = freshMlp(); // closed mid-test, and again (idempotent) at the end
    try (Tensor xt = Tensor.of(x, 2, IN); Tensor five = Tensor.of(gaussian(5 * IN, 43), 5, IN);
        Tensor f64 = Tensor.zeros(DType.FLOAT64, 2, IN)) {
      // One key per device, and the model runs on one.
      for (long[] keys : new long[][] {{1, 1}, {1, 2}, {}}) {
        MaxException e = assertThrows(MaxException.class, () -> m.capture(keys, List.of(xt)), Arrays.toString(keys));
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.getMessage());
        assertTrue(e.statusMessage().contains("one device"), e.getMessage());
        assertEquals(StatusCode.INVALID_ARGUMENT,
            assertThrows(MaxException.class, () -> m.replay(keys, List.of(xt))).code());
      }
      // Null arguments are the binding's INVALID_ARGUMENT, not a crash or an NPE.
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> m.capture(null, List.of(xt))).code());
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> m.replay(new long[] {1}, null)).code());
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> m.debugVerifyReplay(1, (Tensor[]) null)).code());
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> m.replay(1, xt, null)).code());

      // Nothing captured under the key: FAILED_PRECONDITION naming it.
      MaxException none = assertThrows(MaxException.class, () -> m.replay(12345, xt));
      assertEquals(StatusCode.FAILED_PRECONDITION, none.code());
      assertTrue(none.statusMessage().contains("nothing is captured under graph key 12345"), none.getMessage());
      MaxException unverified = assertThrows(MaxException.class, () -> m.debugVerifyReplay(12345, xt));
      assertEquals(StatusCode.FAILED_PRECONDITION, unverified.code());
      assertTrue(unverified.statusMessage().contains("nothing is captured"), unverified.getMessage());
      assertTrue(unverified.statusMessage().contains("12345"), unverified.getMessage());
      MaxException unsigned = assertThrows(MaxException.class, () -> m.replay(-1L, xt));
      assertTrue(unsigned.statusMessage().contains(Long.toUnsignedString(-1L)), unsigned.getMessage());

      // Bad inputs to capture are execute's errors, and record nothing.
      MaxException dtype = assertThrows(MaxException.class, () -> m.capture(12, f64));
      assertEquals(StatusCode.INVALID_ARGUMENT, dtype.code());
      assertTrue(dtype.statusMessage().contains("float64"), dtype.getMessage());
      assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> m.capture(12)).code());
      assertEquals(StatusCode.FAILED_PRECONDITION,
          assertThrows(MaxException.class, () -> m.replay(12, xt)).code());

      // Replays need the captured shapes; a refused one leaves the outputs as they were.
      List<Tensor> out = m.capture(12, xt);
      float[] before = out.get(0).toFloatArray();
      assertClose(reference(x, 2, w, b), before);
      MaxException batch = assertThrows(MaxException.class, () -> m.replay(12, five));
      assertEquals(StatusCode.INVALID_ARGUMENT, batch.code());
      assertTrue(batch.statusMessage().contains("batch=5 but graph key 12 was captured with batch=2"), batch.getMessage());
      assertArrayEquals(before, out.get(0).toFloatArray());
      assertEquals(StatusCode.INVALID_ARGUMENT,
          assertThrows(MaxException.class, () -> m.debugVerifyReplay(12, five)).code());
      assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> m.replay(12, f64)).code());
      assertEquals(StatusCode.INVALID_ARGUMENT, assertThrows(MaxException.class, () -> m.replay(12, xt, xt)).code());
      Tensor closed = Tensor.of(x, 2, IN);
      closed.close();
      assertThrows(IllegalStateException.class, () -> m.replay(12, closed));
      assertArrayEquals(before, out.get(0).toFloatArray());
      m.replay(12, xt);
      assertArrayEquals(before, out.get(0).toFloatArray());
      m.debugVerifyReplay(12, xt);
      assertClose(reference(five.toFloatArray(), 5, w, b), run(m, five)); // execute takes any batch

      // A closed model throws, never crashes; the outputs outlive it.
      m.close();
      assertThrows(IllegalStateException.class, () -> m.replay(12, xt));
      assertThrows(IllegalStateException.class, () -> m.capture(12, xt));
      assertThrows(IllegalStateException.class, () -> m.debugVerifyReplay(12, xt));
      assertArrayEquals(before, out.get(0).toFloatArray());
      out.forEach(Tensor::close);
    } finally {
      m.close();
    }
  }

  @Test
  void replaysOfOneKeyFromManyThreads() throws Exception {
    // Replays take turns; each thread replays and reads under one lock, so no read overlaps
    // another thread's rewrite (the contract of the captured outputs).
    int threads = 4;
    Object lock = new Object();
    List<Tensor> inputs = new ArrayList<>();
    List<float[]> expected = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      float[] x = gaussian(4 * IN, 200 + t);
      inputs.add(Tensor.of(x, 4, IN));
      expected.add(reference(x, 4, w, b));
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (Model m = freshMlp()) {
      List<Tensor> out = m.capture(5, inputs.get(0));
      List<Future<String>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        results.add(pool.submit(() -> {
          for (int i = 0; i < 50; i++) {
            float[] got;
            synchronized (lock) {
              m.replay(5, inputs.get(id));
              got = out.get(0).toFloatArray();
            }
            float[] want = expected.get(id);
            for (int k = 0; k < want.length; k++) {
              if (Math.abs(got[k] - want[k]) > 1e-5f + 1e-5f * Math.abs(want[k])) {
                return "thread " + id + " iteration " + i + ": a result for another input";
              }
            }
          }
          return null;
        }));
      }
      for (Future<String> f : results) {
        String failure = f.get(300, TimeUnit.SECONDS);
        if (failure != null) fail(failure);
      }
      m.replay(5, inputs.get(0));
      assertClose(expected.get(0), out.get(0).toFloatArray());
      out.forEach(Tensor::close);
    } finally {
      pool.shutdownNow();
      inputs.forEach(Tensor::close);
    }
  }
}
