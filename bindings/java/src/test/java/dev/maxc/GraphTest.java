package dev.maxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GraphTest {
  static final DType F32 = DType.FLOAT32;

  /** relu(x @ w + b) with x float32[batch, 4], weights w float32[4, 8] and b float32[8]. */
  static Graph mlp() {
    Graph g = new Graph("mlp");
    Value x = g.addInput("input0", F32, "batch", 4);
    Value w = g.addWeight("w", F32, 4, 8);
    Value b = g.addWeight("b", F32, 8);
    g.output(x.matmul(w).add(b).relu());
    return g;
  }

  /**
   * ABI 1.5: a constant placed on a GPU carries that device in its type (a GPU graph's scalars
   * need not span devices); no GPU is needed to build such a graph.
   */
  @Test
  void constantsArePlacedWhereAsked() {
    try (Graph g = new Graph("placed"); Tensor half = Tensor.of(new float[] {0.5f})) {
      Value onHost = g.addConstant(half);
      Value onGpu = g.addConstant(half, DeviceRef.gpu(1));
      assertEquals(DeviceRef.cpu(), onHost.device());
      assertEquals(DeviceRef.gpu(1), onGpu.device());
      assertEquals("gpu:1", onGpu.device().toString());
      assertEquals("tensor<[], float32, gpu:1>", onGpu.typeString());
      assertEquals(DeviceRef.cpu(), g.addConstant(half, DeviceRef.cpu()).device());
      assertEquals(DeviceRef.gpu(0), Ops.constant(g, half, DeviceRef.gpu(0)).device());
      MaxException bad = assertThrows(MaxException.class, () -> g.addConstant(half, DeviceRef.gpu(-1)));
      assertEquals(StatusCode.INVALID_ARGUMENT, bad.code());
      assertTrue(bad.getMessage().contains("device id -1"), bad.getMessage());
    }
  }

  @Test
  void symbolicBatchFlowsThroughTheTypes() {
    try (Graph g = mlp()) {
      assertEquals("mlp", g.name());
      assertEquals(List.of("input0"), g.inputNames());
      assertEquals(List.of("output0"), g.outputNames());
      Value x = g.inputs().get(0);
      assertEquals("tensor<[batch, 4], float32, cpu:0>", x.typeString());
      assertEquals(TensorType.of(F32, "batch", 4), x.type());
      assertEquals(x.type().toString(), x.typeString());
      Value y = g.outputs().get(0);
      assertEquals(F32, y.dtype());
      assertEquals(2, y.rank());
      assertEquals(Dim.sym("batch"), y.dim(0));
      assertEquals(Dim.of(8), y.dim(1));
      assertEquals(-1, y.dim(0).size());
      assertEquals(DeviceRef.cpu(), y.device());
      assertTrue(g.numOps() >= 3, "matmul, add, relu (and weights, if they count as ops)");
      g.verify();
    }
  }

  @Test
  void dimExpressionsAreCanonical() {
    try (Graph g = new Graph(null)) {
      assertEquals("main", g.name());
      Value x = g.addInput("x", F32, Dim.sym("batch"), 3);
      Value r = Ops.reshape(x, Dim.sym("batch * 3"));
      assertEquals(Dim.sym("batch * 3"), r.dim(0));
      Value t = Ops.transpose(x, 0, 1);
      assertEquals(Arrays.asList(Dim.of(3), Dim.sym("batch")), t.shape());
    }
  }

  @Test
  void opErrorsNameTheOpAndLeaveTheGraphUnchanged() {
    try (Graph g = new Graph("bad")) {
      Value a = g.addInput("a", F32, 2, 3);
      Value b = g.addInput("b", F32, 4, 5);
      MaxException e = assertThrows(MaxException.class, () -> Ops.matmul(a, b));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.statusMessage().contains("matmul"), e.statusMessage());
      assertEquals(0, g.numOps());
      MaxException unknown = assertThrows(MaxException.class, () -> Ops.op("no_such_op", null, a));
      assertEquals(StatusCode.NOT_FOUND, unknown.code());
      assertTrue(unknown.statusMessage().contains("no_such_op"), unknown.statusMessage());
      MaxException dup = assertThrows(MaxException.class, () -> g.addInput("a", F32, 1));
      assertEquals(StatusCode.ALREADY_EXISTS, dup.code());
      MaxException broadcast = assertThrows(MaxException.class, () -> Ops.add(a, b));
      assertEquals(StatusCode.INVALID_ARGUMENT, broadcast.code());
      assertTrue(broadcast.statusMessage().contains("add"), broadcast.statusMessage());
      assertEquals(0, g.numOps());
      Ops.relu(a);
      assertEquals(1, g.numOps());
      try (Graph other = new Graph("other")) {
        Value c = other.addInput("c", F32, 2, 3);
        MaxException foreign = assertThrows(MaxException.class, () -> Ops.add(a, c));
        assertEquals(StatusCode.INVALID_ARGUMENT, foreign.code());
        assertTrue(foreign.statusMessage().contains("another graph"), foreign.statusMessage());
      }
    }
  }

  @Test
  void attrsAndTypedHelpers() {
    try (Graph g = new Graph("attrs")) {
      Value x = g.addInput("x", F32, "n", 10);
      assertEquals(x.type(), Ops.softmax(x).type());
      assertEquals(x.type(), Ops.softmax(x, 0).type());
      MaxException axis = assertThrows(MaxException.class, () -> Ops.softmax(x, 5));
      assertEquals(StatusCode.INVALID_ARGUMENT, axis.code());
      assertEquals(DType.FLOAT64, Ops.cast(x, DType.FLOAT64).dtype());
      // The generic entry point with an Attrs handle.
      try (Attrs a = new Attrs().setInt("axis_1", -1).setInt("axis_2", -2)) {
        List<Value> out = g.addOp("transpose", List.of(x), a);
        assertEquals(1, out.size());
        assertEquals(Arrays.asList(Dim.of(10), Dim.sym("n")), out.get(0).shape());
      }
      Value y = x.mul(x).sub(x).div(x);
      assertEquals(x.type(), y.type());
      try (Attrs a = new Attrs().setString("nope", "x")) {
        MaxException e = assertThrows(MaxException.class, () -> g.addOp("relu", List.of(x), a));
        assertTrue(e.statusMessage().contains("nope"), e.statusMessage());
      }
      Attrs closed = new Attrs();
      closed.close();
      assertThrows(IllegalStateException.class, () -> closed.setInt("axis", 1));
    }
  }

  @Test
  void constants() {
    try (Graph g = new Graph("c"); Tensor t = Tensor.of(new float[] {1, 2, 3}, 3)) {
      Value c = Ops.constant(g, t);
      assertEquals(TensorType.of(F32, 3), c.type());
      Value x = g.addInput("x", F32, 3);
      assertEquals(TensorType.of(F32, 3), x.add(c).type());
    }
  }

  @Test
  void serializeDeserializeRoundTrip(@TempDir Path dir) {
    try (Graph g = mlp()) {
      byte[] image = g.serialize();
      assertTrue(image.length > 0);
      try (Graph back = Graph.deserialize(image)) {
        assertEquals(g.name(), back.name());
        assertEquals(g.inputNames(), back.inputNames());
        assertEquals(g.outputNames(), back.outputNames());
        assertEquals(g.numOps(), back.numOps());
        assertEquals(g.inputs().get(0).type(), back.inputs().get(0).type());
        assertEquals(g.outputs().get(0).type(), back.outputs().get(0).type());
        assertEquals(g.toText(), back.toText());
        assertTrue(back.toDot().contains("matmul"), back.toDot());
      }
      Path file = dir.resolve("mlp.maxg");
      g.save(file);
      try (Graph loaded = Graph.load(file)) {
        assertEquals(g.toText(), loaded.toText());
      }
      byte[] truncated = Arrays.copyOf(image, image.length / 2);
      MaxException e = assertThrows(MaxException.class, () -> Graph.deserialize(truncated));
      assertEquals(StatusCode.DATA_LOSS, e.code());
      MaxException missing = assertThrows(MaxException.class, () -> Graph.load(dir.resolve("absent.maxg")));
      assertEquals(StatusCode.NOT_FOUND, missing.code());
    }
  }

  @Test
  void opRegistryDescribesOps() {
    OpInfo softmax = OpInfo.get("softmax", 0);
    assertEquals(1, softmax.inputs().size());
    assertEquals(new OpInfo.Attr("axis", OpInfo.AttrKind.INT, OpInfo.Presence.DEFAULTED), softmax.attrs().get(0));
    OpInfo matmul = OpInfo.get("matmul", 0);
    assertEquals(List.of("lhs", "rhs"), matmul.inputs().stream().map(OpInfo.Input::name).collect(Collectors.toList()));
    List<String> names = OpInfo.all().stream().map(OpInfo::name).collect(Collectors.toList());
    assertTrue(names.containsAll(List.of("add", "mul", "matmul", "relu", "softmax")), names.toString());
    assertEquals(StatusCode.NOT_FOUND, assertThrows(MaxException.class, () -> OpInfo.get("nope", 0)).code());
  }

  @Test
  void namesAreUtf8() {
    try (Graph g = new Graph("grafo_é")) {
      Value x = g.addInput("entrée_λ", F32, "n", 2); // symbols are ASCII identifiers
      g.setOutputs(List.of(x.relu()), List.of("sortie_ü"));
      assertEquals("grafo_é", g.name());
      assertEquals(List.of("entrée_λ"), g.inputNames());
      assertEquals(List.of("sortie_ü"), g.outputNames());
    }
  }

  @Test
  void valuesKeepTheirGraph() {
    try (Graph g = new Graph("v")) {
      Value x = g.addInput("x", F32, 1);
      assertSame(g, x.graph());
      assertSame(g, x.relu().graph());
      assertNotEquals("", x.toString());
    }
  }
}
