#include "graph/graph.h"

#include <gtest/gtest.h>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::tensor;
using D = DType;

// What a caller can observe of a graph, to check that a failed call changed nothing.
std::string snapshot(const Graph& g) {
  return str_cat(g.to_string(), "|values=", g.num_values(), "|constants=", g.constants().size(),
                 "|weights=", g.weights().size());
}

TEST(Graph, BuildsTypedValues) {
  Graph g("mlp");
  ValueId x = g.add_input("x", tensor(D::kFloat32, {"batch", 10}));
  ValueId w = g.add_weight("w", tensor(D::kFloat32, {10}));
  ValueId y = g.add_op("mul", {x, w})[0];
  ValueId z = g.add_op("gelu", {y}, Attrs{{"approximate", std::string("tanh")}})[0];
  g.set_outputs({{"z", z}});

  EXPECT_EQ(g.name(), "mlp");
  EXPECT_EQ(g.type(z), tensor(D::kFloat32, {"batch", 10}));
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0].name, "x");
  EXPECT_EQ(g.value(x).op, -1);
  EXPECT_EQ(g.value(y).op, 1);
  EXPECT_EQ(g.value(y).index, 0u);
  ASSERT_EQ(g.ops().size(), 3u);
  EXPECT_EQ(g.ops()[1].schema->name, "mul");
  EXPECT_EQ(g.ops()[1].inputs, (std::vector<ValueId>{x, w}));
  EXPECT_EQ(g.outputs()[0].name, "z");
  EXPECT_NO_THROW(g.verify());
}

TEST(Graph, AlgebraicDimsFlowThroughOps) {
  Graph g;
  Dim n = Dim("n") * 2 + 1;
  ValueId a = g.add_input("a", tensor(D::kFloat16, {n, 1}));
  ValueId b = g.add_input("b", tensor(D::kFloat32, {1, floordiv(Dim("m"), 2)}));
  ValueId s = g.add_op("add", {a, b})[0];
  ValueId c = g.add_op("greater", {s, a})[0];
  ValueId r = g.add_op("where", {c, s, b})[0];
  EXPECT_EQ(g.type(r), tensor(D::kFloat32, {n, floordiv(Dim("m"), 2)}));
  EXPECT_NO_THROW(g.verify());
}

TEST(Graph, InputErrors) {
  Graph g("g");
  g.add_input("x", tensor(D::kFloat32, {2}));
  expect_error([&] { g.add_input("x", tensor(D::kFloat32, {2})); }, Code::kAlreadyExists,
               {"graph 'g'", "input named 'x'"});
  expect_error([&] { g.add_input("", tensor(D::kFloat32, {2})); }, Code::kInvalidArgument, {"empty name"});
  expect_error([&] { g.add_input("y", tensor(static_cast<D>(0), {2})); }, Code::kInvalidArgument,
               {"graph 'g': input 'y'", "unknown dtype code 0"});
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.num_values(), 1u);
}

TEST(Graph, AddOpErrors) {
  Graph g("g");
  ValueId x = g.add_input("x", tensor(D::kFloat32, {2}));
  expect_error([&] { g.add_op("frobnicate", {x}); }, Code::kNotFound, {"unknown op 'frobnicate'"});
  expect_error([&] { g.add_op("add", 7, std::vector<ValueId>{x, x}); }, Code::kNotFound,
               {"op 'add' has no version 7"});
  expect_error([&] { g.add_op("add", {x, 42}); }, Code::kInvalidArgument,
               {"op 'add'", "input 1 'rhs' is value %42", "graph 'g' does not have", "1 values"});
  expect_error([&] { g.value(9); }, Code::kInvalidArgument, {"graph 'g' has no value %9"});
}

TEST(Graph, FailedAddOpLeavesTheGraphUnchanged) {
  Graph g;
  ValueId x = g.add_input("x", tensor(D::kFloat32, {"b", 3}));
  ValueId i = g.add_input("i", tensor(D::kInt32, {4}));
  g.add_weight("w", tensor(D::kFloat32, {3}));
  g.add_op("exp", {x});
  std::string before = snapshot(g);

  expect_error([&] { g.add_op("add", {x, i}); }, Code::kInvalidArgument, {"op 'add'", "cannot broadcast"});
  expect_error([&] { g.add_op("exp", {i}); }, Code::kInvalidArgument, {"op 'exp'", "input 0 'x'"});
  expect_error([&] { g.add_op("cast", {x}); }, Code::kInvalidArgument, {"op 'cast'", "missing required"});
  expect_error([&] { g.add_weight("w", tensor(D::kFloat32, {4})); }, Code::kInvalidArgument, {"weight 'w'"});
  expect_error([&] { g.add_constant(Constant::copy_of(tensor(D::kFloat32, {2}), std::vector<uint8_t>(3))); },
               Code::kInvalidArgument, {"takes 8 bytes, got 3"});
  expect_error([&] { g.set_outputs({{"a", x}, {"a", i}}); }, Code::kInvalidArgument, {"two outputs are named 'a'"});
  expect_error([&] { g.set_outputs({{"a", 99}}); }, Code::kInvalidArgument, {"no value %99"});

  EXPECT_EQ(snapshot(g), before);
  EXPECT_NO_THROW(g.verify());
  // And it still works.
  EXPECT_EQ(g.type(g.add_op("add", {x, x})[0]), tensor(D::kFloat32, {"b", 3}));
}

// Shape products are bounded where types are made: broadcast_to a product of (2^32 + 1)^2,
// which wraps to 2^33 + 1, once reached the CPU kernel and read out of bounds.
TEST(Graph, ShapesPastTheElementLimitAreRefusedAtBuild) {
  Graph g("g");
  ValueId x = g.add_input("x", tensor(D::kFloat32, {1, 1}));
  const int64_t wraps = (int64_t{1} << 32) + 1;
  std::string before = snapshot(g);
  expect_error([&] { g.add_op("broadcast_to", {x}, Attrs{{"shape", std::vector<Dim>{wraps, wraps}}}); },
               Code::kInvalidArgument, {"op 'broadcast_to'", "inferred output 0", "multiply to more than"});
  // Symbolic dims cannot rescue static ones that already multiply past the limit.
  expect_error([&] { g.add_op("broadcast_to", {x}, Attrs{{"shape", std::vector<Dim>{"n", wraps, wraps}}}); },
               Code::kInvalidArgument, {"op 'broadcast_to'", "multiply to more than"});
  expect_error([&] { g.add_input("big", tensor(D::kFloat64, {(int64_t{1} << 58) + 1})); }, Code::kInvalidArgument,
               {"input 'big'", "multiply to more than"});
  EXPECT_EQ(snapshot(g), before);
  EXPECT_EQ(g.type(g.add_op("broadcast_to", {x}, Attrs{{"shape", std::vector<Dim>{1 << 20, 1 << 20}}})[0]),
            tensor(D::kFloat32, {1 << 20, 1 << 20}));
}

TEST(Graph, Outputs) {
  Graph g;
  ValueId x = g.add_input("x", tensor(D::kFloat32, {2}));
  g.set_outputs({{"", x}, {"y", x}});
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.outputs()[0].name, "output0");
  EXPECT_EQ(g.outputs()[1].name, "y");
  g.set_outputs({});
  EXPECT_TRUE(g.outputs().empty());
}

TEST(Graph, SharesConstantBytes) {
  auto owner = std::make_shared<std::vector<uint8_t>>(8);
  Constant c{tensor(D::kInt32, {2}), std::shared_ptr<const uint8_t>(owner, owner->data()), owner->size()};
  Graph g;
  g.add_constant(c);
  Graph copy = g;
  EXPECT_EQ(copy.constants()[0].data.get(), owner->data());  // no copy of the bytes
  EXPECT_NO_THROW(copy.verify());
}

TEST(Graph, PrintsAsText) {
  Graph g("main");
  ValueId x = g.add_input("x", tensor(D::kFloat32, {"batch", 10}));
  ValueId y = g.add_op("max", {x}, Attrs{{"axis", int64_t{1}}})[0];
  g.set_outputs({{"y", y}});
  EXPECT_EQ(g.to_string(),
            "graph main(%0 x: tensor<[batch, 10], float32, cpu:0>) {\n"
            "  %1 = max(%0) {axis = 1} : tensor<[batch, 1], float32, cpu:0>\n"
            "  output(y = %1)\n"
            "}\n");
}

// An op that takes a subgraph, registered in a registry of the test's own.
OpRegistry registry_with_call() {
  OpRegistry r;
  r.add(OpSchema{.name = "call",
                 .inputs = {{"args", Arity::kVariadic}},
                 .attrs = {AttrSpec::required("graph", AttrKind::kGraph)},
                 .infer = [](const InferContext& ctx) -> std::vector<TensorType> { return {ctx.input(0)}; }});
  return r;
}

TEST(Graph, SubgraphsAndGraphReferences) {
  static const OpRegistry r = registry_with_call();
  Graph g("main", r);
  ValueId x = g.add_input("x", tensor(D::kFloat32, {2}));
  expect_error([&] { g.add_op("call", {x}, Attrs{{"graph", GraphRef{0}}}); }, Code::kInvalidArgument,
               {"op 'call'", "attribute 'graph' refers to subgraph 0", "has 0 subgraphs"});
  Graph body("body", r);
  body.set_outputs({{"out", body.add_input("a", tensor(D::kFloat32, {2}))}});
  EXPECT_EQ(g.add_subgraph(body), 0);
  ValueId y = g.add_op("call", {x}, Attrs{{"graph", GraphRef{0}}})[0];
  EXPECT_EQ(g.type(y), tensor(D::kFloat32, {2}));
  EXPECT_EQ(g.subgraphs()[0].name(), "body");
  EXPECT_NO_THROW(g.verify());
  EXPECT_NE(g.to_string().find("subgraph 0: graph body("), std::string::npos);
}

// A model file carries no placement: place_on moves every value, constant and device
// attribute of a host graph onto the device, and refuses a graph placed elsewhere already.
TEST(Graph, PlaceOnMovesAHostGraphWhole) {
  Graph g("m");
  ValueId x = g.add_input("x", tensor(D::kFloat32, {"batch", 4}));
  ValueId w = g.add_weight("w", tensor(D::kFloat32, {4}));
  ValueId c = g.add_constant(Constant::copy_of(tensor(D::kFloat32, {}), std::vector<uint8_t>(4, 0)));
  g.set_outputs({{"y", g.add_op("mul", {g.add_op("add", {x, w})[0], c})[0]}});
  g.place_on(DeviceRef::gpu(0));
  for (ValueId v = 0; v < g.num_values(); ++v) EXPECT_EQ(g.type(v).device, DeviceRef::gpu(0)) << "value " << v;
  EXPECT_EQ(g.constants()[0].type.device, DeviceRef::gpu(0));
  EXPECT_NO_THROW(g.verify());
  EXPECT_NE(g.to_string().find("gpu:0"), std::string::npos);
  EXPECT_EQ(g.to_string().find("cpu:0"), std::string::npos) << g.to_string();

  const std::string before = snapshot(g);
  expect_error([&] { g.place_on(DeviceRef::gpu(1)); }, Code::kFailedPrecondition, {"already placed on gpu:0"});
  EXPECT_EQ(snapshot(g), before);
}

}  // namespace
}  // namespace maxc
