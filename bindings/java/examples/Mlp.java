/*
 * Builds a two-layer MLP graph, compiles it, binds its weights and runs it from several threads
 * sharing one model. Its comparable result is the three "batch" lines, which every binding's MLP
 * example prints alike.
 *
 * Run from the repository root (compiles the binding, then runs this file with Java's
 * single-file source launcher; JDK 17):
 *
 *   mvn -q -B -Dstyle.color=never -f bindings/java/pom.xml -Dmaven.repo.local=$PWD/.m2 compile && MAX_C_LIBRARY=$PWD/build/libmax_c.so java -cp bindings/java/target/classes:.m2/net/java/dev/jna/jna/5.19.1/jna-5.19.1.jar bindings/java/examples/Mlp.java
 */

import dev.maxc.CompiledModel;
import dev.maxc.Context;
import dev.maxc.DType;
import dev.maxc.Graph;
import dev.maxc.MaxException;
import dev.maxc.MaxLibrary;
import dev.maxc.Model;
import dev.maxc.Tensor;
import dev.maxc.TensorSpec;
import dev.maxc.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public final class Mlp {
  private Mlp() {}

  /** logits = relu(x @ w1 + b1) @ w2 with a symbolic batch. */
  static Graph buildGraph() {
    Graph g = new Graph("mlp");
    Value x = g.addInput("x", DType.FLOAT32, "batch", 4);
    Value w1 = g.addWeight("w1", DType.FLOAT32, 4, 16);
    Value b1 = g.addWeight("b1", DType.FLOAT32, 16);
    Value w2 = g.addWeight("w2", DType.FLOAT32, 16, 3);
    g.setOutputs(List.of(x.matmul(w1).add(b1).relu().matmul(w2)), List.of("logits"));
    return g;
  }

  /** A float32 tensor whose element i is ((i*7 % 11) - 5) * scale, as in the other bindings' examples. */
  static Tensor pattern(float scale, long... shape) {
    long n = 1;
    for (long d : shape) n *= d;
    float[] data = new float[(int) n];
    for (int i = 0; i < data.length; i++) data[i] = ((i * 7 % 11) - 5) * scale;
    return Tensor.of(data, shape);
  }

  /** The first row of the logits for a batch of {@code batch} rows. */
  static float[] firstRow(Model model, long batch) {
    try (Tensor x = pattern(0.5f, batch, 4)) {
      List<Tensor> out = model.execute(x);
      try {
        float[] logits = out.get(0).toFloatArray();
        return new float[] {logits[0], logits[1], logits[2]};
      } finally {
        out.forEach(Tensor::close);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    System.out.println("libmax_c " + MaxLibrary.versionString());
    try (Context ctx = Context.create(); Graph g = buildGraph(); CompiledModel cm = ctx.compile(g);
        Tensor w1 = pattern(0.1f, 4, 16); Tensor b1 = pattern(0.01f, 16); Tensor w2 = pattern(0.05f, 16, 3);
        Model model = cm.createModel(Map.of("w1", w1, "b1", b1, "w2", w2))) {
      List<TensorSpec> specs = new ArrayList<>(cm.inputs());
      specs.addAll(cm.outputs());
      specs.addAll(cm.weights());
      for (TensorSpec s : specs) System.out.println("  " + s);

      // One model serves any batch size, from many threads at once.
      long[] batches = {1, 7, 64};
      ExecutorService pool = Executors.newFixedThreadPool(batches.length);
      try {
        List<Future<float[]>> rows = new ArrayList<>();
        for (long b : batches) rows.add(pool.submit(() -> firstRow(model, b)));
        for (int i = 0; i < batches.length; i++) {
          float[] r = rows.get(i).get();
          System.out.println(String.format(Locale.ROOT, "batch %2d: first row %.6f %.6f %.6f", batches[i], r[0], r[1], r[2]));
        }
      } finally {
        pool.shutdown();
      }

      // A bad input is an exception naming the input; the model stays usable.
      try (Tensor bad = pattern(1f, 2, 5)) {
        model.execute(bad);
      } catch (MaxException e) {
        System.out.println("as expected: " + e.getMessage());
      }
    }
  }
}
