// The generic passes on small programs: what they remove, merge and fold.
#include <gtest/gtest.h>

#include "compiler/passes.h"

namespace maxc {
namespace {

TensorType f32(std::vector<Dim> dims) { return TensorType{DType::kFloat32, std::move(dims), DeviceRef::cpu()}; }

size_t count_op(const Program& p, std::string_view op) {
  size_t n = 0;
  for (const Node& node : p.nodes) n += node.op == op;
  return n;
}

CompileOptions no_fusion() {
  CompileOptions o;
  o.fuse = false;
  return o;
}

TEST(Passes, DeadCodeIsRemovedButWeightsStay) {
  Graph g;
  ValueId x = g.add_input("x", f32({"n"}));
  ValueId w = g.add_weight("unused", f32({3}));
  (void)w;
  g.add_op("exp", {x});  // never used
  ValueId y = g.add_op("relu", {x})[0];
  g.set_outputs({{"y", y}});
  Program p = compile_program(g, no_fusion());
  EXPECT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].op, "relu");
  ASSERT_EQ(p.weights.size(), 1u);
  EXPECT_EQ(p.weights[0].name, "unused");
}

TEST(Passes, CommonSubexpressionsMerge) {
  Graph g;
  ValueId x = g.add_input("x", f32({"n"}));
  ValueId a = g.add_op("exp", {x})[0];
  ValueId b = g.add_op("exp", {x})[0];
  ValueId c = g.add_op("add", {a, b})[0];
  ValueId s1 = g.add_op("softmax", {c}, {{"axis", int64_t{0}}})[0];
  ValueId s2 = g.add_op("softmax", {c}, {{"axis", int64_t{-1}}})[0];  // same op, other attrs
  g.set_outputs({{"s1", s1}, {"s2", s2}});
  Program p = compile_program(g, no_fusion());
  EXPECT_EQ(count_op(p, "exp"), 1u);
  EXPECT_EQ(count_op(p, "softmax"), 2u);
  const Node& add = p.nodes[1];
  ASSERT_EQ(add.op, "add");
  EXPECT_EQ(add.inputs[0], add.inputs[1]);
}

TEST(Passes, ReshapeOfReshapeReadsTheSource) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 6}));
  ValueId r1 = g.add_op("reshape", {x}, {{"shape", std::vector<Dim>{3, 4}}})[0];
  ValueId r2 = g.add_op("reshape", {r1}, {{"shape", std::vector<Dim>{12}}})[0];
  g.set_outputs({{"y", r2}});
  Program p = compile_program(g, no_fusion());
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].inputs[0], x);
}

TEST(Passes, DoubleTransposeDisappears) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  Attrs t{{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}};
  ValueId t1 = g.add_op("transpose", {x}, t)[0];
  ValueId t2 = g.add_op("transpose", {t1}, t)[0];
  ValueId y = g.add_op("relu", {t2})[0];
  g.set_outputs({{"y", y}});
  Program p = compile_program(g, no_fusion());
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].inputs[0], x);
}

TEST(Passes, ConstantsFoldThroughTheEvaluatorWithinTheBound) {
  Graph g;
  ValueId x = g.add_input("x", f32({4}));
  std::vector<float> four(4, 1.5f);
  ValueId c = g.add_constant(Constant::copy_of(f32({4}), {reinterpret_cast<const uint8_t*>(four.data()), 16}));
  ValueId e = g.add_op("exp", {c})[0];  // constant-only: folds
  ValueId y = g.add_op("add", {x, e})[0];
  g.set_outputs({{"y", y}});
  int calls = 0;
  CompileOptions o = no_fusion();
  o.evaluate = [&](const Node& n, const Program&, std::span<const Constant* const> in) {
    ++calls;
    EXPECT_EQ(n.op, "exp");
    EXPECT_EQ(in.size(), 1u);
    return std::vector<Constant>{*in[0]};  // any data of the right type will do here
  };
  Program p = compile_program(g, o);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(count_op(p, "exp"), 0u);
  EXPECT_EQ(p.constants.size(), 1u);

  o.fold_limit_bytes = 8;  // 16 bytes of result: over the bound, stays a node
  calls = 0;
  Program q = compile_program(g, o);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(count_op(q, "exp"), 1u);
}

// A target without the fused op keeps the pattern as the ops it has: the add, then the
// layer_norm. With the op, the two become one add_layer_norm.
TEST(Passes, FusionMakesOnlyTheFusedOpsTheTargetHas) {
  Graph g("residual_norm");
  ValueId x = g.add_input("x", f32({2, 4}));
  ValueId r = g.add_input("r", f32({2, 4}));
  ValueId gamma = g.add_input("gamma", f32({4}));
  ValueId beta = g.add_input("beta", f32({4}));
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  g.set_outputs({{"y", g.add_op("layer_norm", {g.add_op("add", {x, r})[0], gamma, beta}, attrs)[0]}});
  const auto fused_for = [&g](bool has_add_layer_norm) {
    CompileOptions o;
    o.has_kernel = [has_add_layer_norm](std::string_view op) { return op != "add_layer_norm" || has_add_layer_norm; };
    Program p = prepare_program(g, o);
    fuse_program(p, o);
    return p;
  };
  const Program without = fused_for(false);
  EXPECT_EQ(count_op(without, "add_layer_norm"), 0u);
  EXPECT_EQ(count_op(without, "layer_norm"), 1u);
  EXPECT_EQ(count_op(without, "add"), 1u);
  const Program with = fused_for(true);
  EXPECT_EQ(count_op(with, "add_layer_norm"), 1u);
  EXPECT_EQ(count_op(with, "layer_norm"), 0u);
}

TEST(Passes, GraphWithoutOutputsIsRefused) {
  Graph g;
  g.add_input("x", f32({2}));
  EXPECT_THROW(compile_program(g, {}), Error);
}

}  // namespace
}  // namespace maxc
