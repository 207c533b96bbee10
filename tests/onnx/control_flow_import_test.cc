// If, Loop and Scan: how each lowers (cond, while_loop, inlined or unrolled), run against
// results worked out here from the ONNX specs; and the forms we refuse: UNIMPLEMENTED naming
// the node, INVALID_ARGUMENT for a malformed subgraph.
#include <gtest/gtest.h>

#include <cstring>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;

Ref<Tensor> bool_scalar(bool v) {
  auto t = Tensor::create(Device::cpu(), DType::kBool, {});
  t->data()[0] = v ? 1 : 0;
  return t;
}

Ref<Tensor> i64_scalar(int64_t v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, {});
  std::memcpy(t->data(), &v, sizeof v);
  return t;
}

size_t count_ops(const Graph& g, std::string_view name) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += op.schema->name == name;
  return n;
}

// ---- If ----

// z = If(c) then (x * x) + w else x - w: y = x * x is the outer graph's, w an initializer.
std::string if_over_outer_values() {
  GraphSpec then_g, else_g, g;
  then_g.nodes = {node("Add", {"y", "w"}, {"t"})};
  then_g.outputs = {value_info("t", kFloat, {3})};
  else_g.nodes = {node("Sub", {"x", "w"}, {"e"})};
  else_g.outputs = {value_info("e", kFloat, {3})};
  g.inputs = {value_info("c", kBool, {}), value_info("x", kFloat, {3})};
  g.initializers = {tensor_f32("w", {3}, {10, 20, 30})};
  g.nodes = {node("Mul", {"x", "x"}, {"y"}),
             node("If", {"c"}, {"z"},
                  {attr_graph("then_branch", then_g, "then_g"), attr_graph("else_branch", else_g, "else_g")}, "if")};
  g.outputs = {value_info("z", kFloat, {3})};
  return model(g, 13);
}

TEST(OnnxIf, ARunTimeConditionIsACondOverTheOuterValuesEitherBranchUses) {
  ImportedModel m = import_string(if_over_outer_values());
  EXPECT_EQ(count_ops(m.graph, "cond"), 1u);
  ASSERT_EQ(m.graph.subgraphs().size(), 2u);
  auto model = compile_imported(std::move(m));
  Ref<Tensor> x = f32_tensor({3}, {1, 2, 3});
  expect_near(floats_of(model->execute(std::vector<Ref<Tensor>>{bool_scalar(true), x})[0]), {11, 24, 39});
  expect_near(floats_of(model->execute(std::vector<Ref<Tensor>>{bool_scalar(false), x})[0]), {-9, -18, -27});
}

TEST(OnnxIf, AConditionKnownAtImportInlinesItsBranchAndKeepsShapesKnown) {
  // The picked branch computes a Reshape's shape; only an inlined branch keeps it known.
  GraphSpec then_g, else_g, g;
  then_g.nodes = {node("Constant", {}, {"s"}, {attr_tensor("value", tensor_i64("", {2}, {3, 2}))})};
  then_g.outputs = {value_info("s", kInt64, {2})};
  else_g.nodes = {node("Shape", {"x"}, {"s2"})};
  else_g.outputs = {value_info("s2", kInt64, {2})};
  g.inputs = {value_info("x", kFloat, {2, 3})};
  g.initializers = {tensor_i64("six", {}, {6})};
  g.nodes = {node("Size", {"x"}, {"n"}), node("Equal", {"n", "six"}, {"is6"}),
             node("If", {"is6"}, {"shape"}, {attr_graph("then_branch", then_g, "a"), attr_graph("else_branch", else_g, "b")}),
             node("Reshape", {"x", "shape"}, {"y"})};
  g.outputs = {value_info("y", kFloat, {3, 2})};
  ImportedModel m = import_string(model(g, 13));
  EXPECT_EQ(count_ops(m.graph, "cond"), 0u);
  EXPECT_TRUE(m.graph.subgraphs().empty());
  EXPECT_EQ(m.graph.type(m.graph.outputs()[0].value).dims, (std::vector<Dim>{Dim(3), Dim(2)}));
}

TEST(OnnxIf, BranchesGivingDifferentShapesAreUnimplemented) {
  GraphSpec then_g, else_g, g;
  then_g.nodes = {node("Constant", {}, {"a"}, {attr_tensor("value", tensor_f32("", {2}, {1, 2}))})};
  then_g.outputs = {value_info("a", kFloat, {2})};
  else_g.nodes = {node("Constant", {}, {"b"}, {attr_tensor("value", tensor_f32("", {3}, {1, 2, 3}))})};
  else_g.outputs = {value_info("b", kFloat, {3})};
  g.inputs = {value_info("c", kBool, {})};
  g.nodes = {node("If", {"c"}, {"z"}, {attr_graph("then_branch", then_g, "a"), attr_graph("else_branch", else_g, "b")},
                  "ragged")};
  g.outputs = {value_info("z", kFloat, {})};
  expect_unimplemented_naming(model(g, 13), {"'ragged' (If)", "else_branch"});
}

TEST(OnnxIf, AMissingBranchIsInvalid) {
  GraphSpec then_g, g;
  then_g.nodes = {node("Identity", {"x"}, {"t"})};
  then_g.outputs = {value_info("t", kFloat, {1})};
  g.inputs = {value_info("c", kBool, {}), value_info("x", kFloat, {1})};
  g.nodes = {node("If", {"c"}, {"z"}, {attr_graph("then_branch", then_g, "a")})};
  g.outputs = {value_info("z", kFloat, {1})};
  Error e = import_error(model(g, 13));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("else_branch"), std::string::npos) << e.what();
}

// ---- Scan ----

TEST(OnnxScan, ReverseDirectionAlongAxisOneIntoOutputAxisOne) {
  // s accumulates the columns of x [2, 4] from the last; y's column t is the running sum
  // seen at step t times w (an outer initializer), written back from the last column too.
  GraphSpec body, g;
  body.inputs = {value_info("s_in", kFloat, {2}), value_info("col", kFloat, {2})};
  body.nodes = {node("Add", {"s_in", "col"}, {"s_out"}), node("Mul", {"s_out", "w"}, {"y_t"})};
  body.outputs = {value_info("s_out", kFloat, {2}), value_info("y_t", kFloat, {2})};
  g.inputs = {value_info("s0", kFloat, {2}), value_info("x", kFloat, {2, 4})};
  g.initializers = {tensor_f32("w", {}, {2})};
  g.nodes = {node("Scan", {"s0", "x"}, {"s", "y"},
                  {attr_graph("body", body, "step"), attr_int("num_scan_inputs", 1), attr_ints("scan_input_axes", {1}),
                   attr_ints("scan_input_directions", {1}), attr_ints("scan_output_axes", {1}),
                   attr_ints("scan_output_directions", {1})})};
  g.outputs = {value_info("s", kFloat, {2}), value_info("y", kFloat, {2, 4})};
  auto out = run_model(model(g, 16), {f32_tensor({2}, {0, 100}), f32_tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  expect_near(floats_of(out[0]), {10, 126});
  // Row 0 from the right: sums 4, 7, 9, 10 at steps 0..3, written at columns 3, 2, 1, 0.
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{2, 4}));
  expect_near(floats_of(out[1]), {20, 18, 14, 8, 252, 242, 230, 216});
}

TEST(OnnxScan, Opset8ScansEachBatchRowOnItsOwn) {
  GraphSpec body, g;
  body.inputs = {value_info("s_in", kFloat, {2}), value_info("x_t", kFloat, {2})};
  body.nodes = {node("Add", {"s_in", "x_t"}, {"s_out"}), node("Identity", {"s_out"}, {"y_t"})};
  body.outputs = {value_info("s_out", kFloat, {2}), value_info("y_t", kFloat, {2})};
  g.inputs = {value_info("s0", kFloat, {2, 2}), value_info("x", kFloat, {2, 3, 2})};
  g.nodes = {node("Scan", {"", "s0", "x"}, {"s", "y"},
                  {attr_graph("body", body, "step"), attr_int("num_scan_inputs", 1), attr_ints("directions", {1})})};
  g.outputs = {value_info("s", kFloat, {2, 2}), value_info("y", kFloat, {2, 3, 2})};
  auto out = run_model(model(g, 8), {f32_tensor({2, 2}, {0, 0, 100, 200}),
                                     f32_tensor({2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60})});
  expect_near(floats_of(out[0]), {9, 12, 190, 320});
  // Batch row 1 from its last step: 150,260 then 180,300 then 190,320, in step order.
  expect_near(floats_of(out[1]), {5, 6, 8, 10, 9, 12, 150, 260, 180, 300, 190, 320});
}

TEST(OnnxScan, Opset8SequenceLensShorterThanTheScanIsUnimplemented) {
  GraphSpec body, g;
  body.inputs = {value_info("s_in", kFloat, {1}), value_info("x_t", kFloat, {1})};
  body.nodes = {node("Add", {"s_in", "x_t"}, {"s_out"})};
  body.outputs = {value_info("s_out", kFloat, {1})};
  g.inputs = {value_info("s0", kFloat, {1, 1}), value_info("x", kFloat, {1, 3, 1})};
  g.initializers = {tensor_i64("lens", {1}, {2})};
  g.nodes = {node("Scan", {"lens", "s0", "x"}, {"s"}, {attr_graph("body", body, "step"), attr_int("num_scan_inputs", 1)},
                  "short")};
  g.outputs = {value_info("s", kFloat, {1, 1})};
  expect_unimplemented_naming(model(g, 8), "'short' (Scan)", "sequence_lens");
}

// ---- Loop ----

// v = 0; for i < M while v < 10: v += x (x outer). No scan outputs: the body's condition
// may stop it early.
std::string loop_until_ten() {
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {}), value_info("v_in", kFloat, {})};
  body.nodes = {node("Add", {"v_in", "x"}, {"v_out"}), node("Less", {"v_out", "ten"}, {"c_out"})};
  body.outputs = {value_info("c_out", kBool, {}), value_info("v_out", kFloat, {})};
  g.inputs = {value_info("m", kInt64, {}), value_info("x", kFloat, {})};
  g.initializers = {tensor_f32("ten", {}, {10}), tensor_f32("zero", {}, {0})};
  g.nodes = {node("Constant", {}, {"go"}, {attr_tensor("value", tensor_raw("", kBool, {}, std::string(1, '\1')))}),
             node("Loop", {"m", "go", "zero"}, {"v"}, {attr_graph("body", body, "b")}, "loop")};
  g.outputs = {value_info("v", kFloat, {})};
  return model(g, 13);
}

TEST(OnnxLoop, ARunTimeTripCountAndAnEarlyExitMakeAWhileLoop) {
  ImportedModel m = import_string(loop_until_ten());
  EXPECT_EQ(count_ops(m.graph, "while_loop"), 1u);
  auto model = compile_imported(std::move(m));
  auto x = f32_tensor({}, {3});
  expect_near(floats_of(model->execute(std::vector<Ref<Tensor>>{i64_scalar(100), x})[0]), {12});  // stopped by v >= 10
  expect_near(floats_of(model->execute(std::vector<Ref<Tensor>>{i64_scalar(2), x})[0]), {6});    // by the trip count
  expect_near(floats_of(model->execute(std::vector<Ref<Tensor>>{i64_scalar(0), x})[0]), {0});
}

TEST(OnnxLoop, AKnownTripCountUnrollsSoTheBodyMaySliceAtTheIterationNumber) {
  // As ONNX's loop11 case: y += x[i:i+1], each iteration's y a row of the scan output.
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {}), value_info("y_in", kFloat, {1})};
  body.nodes = {node("Add", {"i", "one"}, {"end"}), node("Unsqueeze", {"i", "axes"}, {"start1"}),
                node("Unsqueeze", {"end", "axes"}, {"end1"}), node("Slice", {"x", "start1", "end1"}, {"xi"}),
                node("Add", {"y_in", "xi"}, {"y_out"}), node("Identity", {"c_in"}, {"c_out"}),
                node("Identity", {"y_out"}, {"row"})};
  body.outputs = {value_info("c_out", kBool, {}), value_info("y_out", kFloat, {1}), value_info("row", kFloat, {1})};
  g.inputs = {value_info("y0", kFloat, {1})};
  g.initializers = {tensor_i64("m", {}, {4}), tensor_i64("one", {}, {1}), tensor_i64("axes", {1}, {0}),
                    tensor_f32("x", {5}, {1, 2, 3, 4, 5})};
  g.nodes = {node("Loop", {"m", "", "y0"}, {"y", "rows"}, {attr_graph("body", body, "b")})};
  g.outputs = {value_info("y", kFloat, {1}), value_info("rows", kFloat, {4, 1})};
  ImportedModel m = import_string(model(g, 13));
  EXPECT_EQ(count_ops(m.graph, "while_loop"), 0u);
  auto out = compile_imported(std::move(m))->execute(std::vector<Ref<Tensor>>{f32_tensor({1}, {-1})});
  expect_near(floats_of(out[0]), {9});
  expect_near(floats_of(out[1]), {0, 2, 5, 9});
}

TEST(OnnxLoop, ScanOutputsOfALoopThatMayStopEarlyAreUnimplemented) {
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {}), value_info("v_in", kFloat, {})};
  body.nodes = {node("Add", {"v_in", "v_in"}, {"v_out"}), node("Less", {"v_out", "ten"}, {"c_out"})};
  body.outputs = {value_info("c_out", kBool, {}), value_info("v_out", kFloat, {}), value_info("v_out", kFloat, {})};
  // Known trip count and condition: the first unrolled iteration's condition depends on v0.
  g.inputs = {value_info("v0", kFloat, {})};
  g.initializers = {tensor_f32("ten", {}, {10}), tensor_i64("m", {}, {5}),
                    tensor_raw("c", kBool, {}, std::string(1, '\1'))};
  g.nodes = {node("Loop", {"m", "c", "v0"}, {"v", "all"}, {attr_graph("body", body, "b")}, "doubling")};
  g.outputs = {value_info("v", kFloat, {}), value_info("all", kFloat, {})};
  expect_unimplemented_naming(model(g, 13), "'doubling' (Loop)", "may stop early");
}

TEST(OnnxLoop, NeitherTripCountNorConditionIsUnimplemented) {
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {}), value_info("v_in", kFloat, {})};
  body.nodes = {node("Identity", {"v_in"}, {"v_out"}), node("Identity", {"c_in"}, {"c_out"})};
  body.outputs = {value_info("c_out", kBool, {}), value_info("v_out", kFloat, {})};
  g.inputs = {value_info("v0", kFloat, {})};
  g.nodes = {node("Loop", {"", "", "v0"}, {"v"}, {attr_graph("body", body, "b")}, "forever")};
  g.outputs = {value_info("v", kFloat, {})};
  expect_unimplemented_naming(model(g, 13), "'forever' (Loop)", "never end");
}

TEST(OnnxLoop, ABodyOfTheWrongArityIsInvalid) {
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {})};
  body.nodes = {node("Identity", {"c_in"}, {"c_out"})};
  body.outputs = {value_info("c_out", kBool, {})};
  g.inputs = {value_info("m", kInt64, {}), value_info("v0", kFloat, {})};
  g.nodes = {node("Loop", {"m", "", "v0"}, {"v"}, {attr_graph("body", body, "b")})};
  g.outputs = {value_info("v", kFloat, {})};
  Error e = import_error(model(g, 13));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("body 'b'"), std::string::npos) << e.what();
}

TEST(OnnxLoop, AnErrorInsideTheBodyNamesTheLoopTheBodyAndTheInnerNode) {
  GraphSpec body, g;
  body.inputs = {value_info("i", kInt64, {}), value_info("c_in", kBool, {}), value_info("v_in", kFloat, {})};
  body.nodes = {node("NoSuchOp", {"v_in"}, {"v_out"}, {}, "inner"), node("Identity", {"c_in"}, {"c_out"})};
  body.outputs = {value_info("c_out", kBool, {}), value_info("v_out", kFloat, {})};
  g.inputs = {value_info("m", kInt64, {}), value_info("v0", kFloat, {})};
  g.nodes = {node("Loop", {"m", "", "v0"}, {"v"}, {attr_graph("body", body, "b")}, "outer")};
  g.outputs = {value_info("v", kFloat, {})};
  expect_unimplemented_naming(model(g, 13), {"'outer' (Loop): body 'b'", "'inner' (NoSuchOp)"});
}

}  // namespace
}  // namespace maxc::onnx::testing
