package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A tiny ONNX model written here: Y = MatMul(X, W) + B, W and B initializers, opset 13. */
class OnnxTest {
  static final float[] W = {1, -2, 0.5f, 3, -1, 0.25f};
  static final float[] B = {0.5f, -1.5f};

  @TempDir Path dir;

  static byte[] tiny(long opset, String matmulOp) {
    return TestFiles.model(opset,
        new TestFiles.Pb[] {
          TestFiles.node(matmulOp, "mm", new String[] {"X", "W"}, new String[] {"XW"}),
          TestFiles.node("Add", "bias", new String[] {"XW", "B"}, new String[] {"Y"}),
        },
        new TestFiles.Pb[] {
          TestFiles.floatTensor("W", new long[] {3, 2}, W, true),
          TestFiles.floatTensor("B", new long[] {2}, B, false),
        },
        new TestFiles.Pb[] {TestFiles.valueInfo("X", TestFiles.ONNX_FLOAT, "N", 3)},
        new TestFiles.Pb[] {TestFiles.valueInfo("Y", TestFiles.ONNX_FLOAT, "N", 2)});
  }

  /** x @ w + b for x [rows, 3], w [3, 2]. */
  static float[] reference(float[] x, float[] w, float[] b) {
    int rows = x.length / 3;
    float[] y = new float[rows * 2];
    for (int r = 0; r < rows; r++) {
      for (int j = 0; j < 2; j++) {
        float s = b[j];
        for (int k = 0; k < 3; k++) s += x[r * 3 + k] * w[k * 2 + j];
        y[r * 2 + j] = s;
      }
    }
    return y;
  }

  Path write(String name, byte[] data) throws IOException {
    return Files.write(dir.resolve(name), data);
  }

  @Test
  void compilesAndRunsWithItsInitializers() throws IOException {
    Path file = write("tiny.onnx", tiny(13, "MatMul"));
    float[] x = {1, 2, 3, -1, 0, 4};
    try (Context ctx = Context.create(1); CompiledModel cm = ctx.compileFile(file); Tensor in = Tensor.of(x, 2, 3)) {
      TensorSpec input = cm.inputs().get(0);
      assertEquals("X", input.name());
      assertArrayEquals(new long[] {-1, 3}, input.shape());
      assertEquals("N", input.dimNames().get(0));
      assertEquals("Y", cm.outputs().get(0).name());
      assertEquals(new TreeSet<>(List.of("B", "W")),
          cm.weights().stream().map(TensorSpec::name).collect(Collectors.toCollection(TreeSet::new)));

      try (Model m = cm.createModel(Map.of())) { // the file's initializers are bound
        EngineTest.assertClose(reference(x, W, B), EngineTest.run(m, in));
        List<Tensor> named = m.execute(Map.of("X", in));
        EngineTest.assertClose(reference(x, W, B), named.get(0).toFloatArray());
        named.forEach(Tensor::close);
      }
      float[] b2 = {10, 20};
      try (Tensor bt = Tensor.of(b2, 2); Model m = cm.createModel(Map.of("B", bt))) { // given by name: replaces B
        EngineTest.assertClose(reference(x, W, b2), EngineTest.run(m, in));
      }
    }
    try (Context ctx = Context.create(1); Model m = ctx.load(file); Tensor in = Tensor.of(x, 2, 3)) {
      EngineTest.assertClose(reference(x, W, B), EngineTest.run(m, in));
    }
  }

  /**
   * ABI 1.5: an ONNX model carries no placement; a file device moves it onto one of the context's
   * devices (here the host, which every machine has) and it runs there.
   */
  @Test
  void fileDevicePlacesTheModel() throws IOException {
    Path file = write("placed.onnx", tiny(13, "MatMul"));
    float[] x = {1, 2, 3, -1, 0, 4};
    try (Context ctx = Context.create(1); Device cpu = Device.cpu(); Tensor in = Tensor.of(x, 2, 3)) {
      CompileOptions options = new CompileOptions().fileDevice(cpu);
      assertSame(cpu, options.fileDevice());
      try (CompiledModel cm = ctx.compileFile(file, options); Model m = cm.createModel(Map.of())) {
        assertEquals(DeviceRef.cpu(), cm.inputs().get(0).device());
        EngineTest.assertClose(reference(x, W, B), EngineTest.run(m, in));
      }
      try (Model m = ctx.load(file, cpu)) { // MAX's InferenceSession.load(path, device=CPU())
        assertEquals(DeviceRef.cpu(), m.inputMetadata().get(0).device());
        EngineTest.assertClose(reference(x, W, B), EngineTest.run(m, in));
      }
      Device closed = Device.cpu();
      closed.close();
      assertThrows(IllegalStateException.class, () -> ctx.compileFile(file, new CompileOptions().fileDevice(closed)));
    }
  }

  @Test
  void badFilesNameTheProblem() throws IOException {
    byte[] good = tiny(13, "MatMul");
    byte[] truncated = java.util.Arrays.copyOf(good, good.length - 7);
    try (Context ctx = Context.create(1)) {
      MaxException op = assertThrows(MaxException.class, () -> ctx.compileFile(write("op.onnx", tiny(13, "Frobnicate"))));
      assertEquals(StatusCode.UNIMPLEMENTED, op.code());
      assertTrue(op.getMessage().contains("operator 'Frobnicate'"), op.getMessage());
      MaxException opset = assertThrows(MaxException.class, () -> ctx.compileFile(write("old.onnx", tiny(6, "MatMul"))));
      assertEquals(StatusCode.UNIMPLEMENTED, opset.code());
      assertTrue(opset.getMessage().contains("opset 6"), opset.getMessage());
      MaxException cut = assertThrows(MaxException.class, () -> ctx.compileFile(write("cut.onnx", truncated)));
      assertEquals(StatusCode.DATA_LOSS, cut.code());
      assertTrue(cut.getMessage().contains("truncated"), cut.getMessage());
      MaxException missing = assertThrows(MaxException.class, () -> ctx.compileFile(dir.resolve("absent.onnx")));
      assertEquals(StatusCode.NOT_FOUND, missing.code());
      assertTrue(missing.getMessage().contains("absent.onnx"), missing.getMessage());
    }
  }
}
