// GELU written out in elementwise ops (as ONNX exporters emit it) becomes one gelu, which
// then joins the matmul's epilogue; the results stay those of the written-out form.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

ValueId scalar(Graph& g, float v) {
  return g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&v), 4}));
}

using Op = std::function<ValueId(const char*, std::vector<ValueId>)>;

// y = act(x @ w + b), act written out by `write` over h = x @ w + b.
Graph dense(const std::function<ValueId(Graph&, const Op&, ValueId)>& write) {
  Graph g("dense");
  ValueId x = g.add_input("x", f32({"batch", 24}));
  ValueId w = g.add_weight("w", f32({24, 40}));
  ValueId b = g.add_weight("b", f32({40}));
  Op op = [&g](const char* name, std::vector<ValueId> in) { return g.add_op(name, 0, in, {})[0]; };
  ValueId h = op("add", {op("matmul", {x, w}), b});
  g.set_outputs({{"y", write(g, op, h)}});
  return g;
}

// torch.onnx's erf form: ((x * (erf(x / √2) + 1)) * 0.5.
ValueId erf_torch(Graph& g, const Op& op, ValueId x) {
  ValueId e = op("erf", {op("div", {x, scalar(g, 1.4142135f)})});
  return op("mul", {op("mul", {x, op("add", {e, scalar(g, 1.f)})}), scalar(g, 0.5f)});
}

// The same, grouped and ordered otherwise: (0.5 * x) * (1 + erf(x * (1/√2))).
ValueId erf_regrouped(Graph& g, const Op& op, ValueId x) {
  ValueId e = op("erf", {op("mul", {scalar(g, 0.70710678f), x})});
  return op("mul", {op("mul", {scalar(g, 0.5f), x}), op("add", {scalar(g, 1.f), e})});
}

// GPT-2's: 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * x³))), x³ as pow(x, 3).
ValueId tanh_gpt2(Graph& g, const Op& op, ValueId x) {
  ValueId cube = op("mul", {scalar(g, 0.044715f), op("pow", {x, scalar(g, 3.f)})});
  ValueId inner = op("mul", {scalar(g, 0.7978845608f), op("add", {x, cube})});
  ValueId s = op("add", {scalar(g, 1.f), op("tanh", {inner})});
  return op("mul", {op("mul", {scalar(g, 0.5f), x}), s});
}

// x³ as x * x * x.
ValueId tanh_products(Graph& g, const Op& op, ValueId x) {
  ValueId cube = op("mul", {op("mul", {x, x}), x});
  ValueId inner = op("mul", {op("add", {x, op("mul", {cube, scalar(g, 0.044715f)})}), scalar(g, 0.7978845608f)});
  return op("mul", {x, op("mul", {op("add", {op("tanh", {inner}), scalar(g, 1.f)}), scalar(g, 0.5f)})});
}

std::string fused_activation(const CompiledModel& cm) {
  const auto& nodes = cm.program().nodes;
  if (nodes.size() != 1 || nodes[0].op != "fused_matmul") return "not one fused_matmul";
  return std::get<std::string>(*nodes[0].attrs.find("activation"));
}

void expect_same_results(const Graph& g) {
  NamedTensors weights = {{"w", random_tensor({24, 40}, 1)}, {"b", random_tensor({40}, 2)}};
  auto ctx = Context::create({});
  CompileSettings plain_settings;
  plain_settings.fuse = false;
  auto fused = Model::create(CompiledModel::compile(ctx, g, {}), weights);
  auto plain = Model::create(CompiledModel::compile(ctx, g, plain_settings), weights);
  for (int64_t batch : {1, 7, 130}) {
    std::vector<Ref<Tensor>> in = {random_tensor({batch, 24}, 3 + static_cast<uint32_t>(batch), -2.f, 2.f)};
    const auto a = fused->execute(in)[0], b = plain->execute(in)[0];
    const auto* pa = reinterpret_cast<const float*>(a->data());
    const auto* pb = reinterpret_cast<const float*>(b->data());
    for (int64_t i = 0; i < a->num_elements(); ++i) ASSERT_NEAR(pa[i], pb[i], 1e-4f) << "batch " << batch << " at " << i;
  }
}

TEST(GeluFusion, ErfFormsBecomeTheMatmulEpilogue) {
  for (auto write : {erf_torch, erf_regrouped}) {
    Graph g = dense(write);
    EXPECT_EQ(fused_activation(*CompiledModel::compile(Context::create({}), g, {})), "gelu");
    expect_same_results(g);
  }
}

TEST(GeluFusion, TanhFormsBecomeTheMatmulEpilogue) {
  for (auto write : {tanh_gpt2, tanh_products}) {
    Graph g = dense(write);
    EXPECT_EQ(fused_activation(*CompiledModel::compile(Context::create({}), g, {})), "gelu_tanh");
    expect_same_results(g);
  }
}

// A constant that is not GELU's, or an intermediate read elsewhere, leaves the ops as written.
TEST(GeluFusion, NearMissesStayAsWritten) {
  Graph other_scale = dense([](Graph& g, const Op& op, ValueId x) {
    ValueId e = op("erf", {op("div", {x, scalar(g, 1.5f)})});
    return op("mul", {op("mul", {x, op("add", {e, scalar(g, 1.f)})}), scalar(g, 0.5f)});
  });
  EXPECT_NE(fused_activation(*CompiledModel::compile(Context::create({}), other_scale, {})), "gelu");
  expect_same_results(other_scale);

  Graph two_outputs("two");
  ValueId x = two_outputs.add_input("x", f32({"batch", 24}));
  ValueId e = two_outputs.add_op("erf", {two_outputs.add_op("div", {x, scalar(two_outputs, 1.4142135f)})[0]})[0];
  ValueId s = two_outputs.add_op("add", {e, scalar(two_outputs, 1.f)})[0];
  ValueId y = two_outputs.add_op("mul", {two_outputs.add_op("mul", {x, s})[0], scalar(two_outputs, 0.5f)})[0];
  two_outputs.set_outputs({{"y", y}, {"erf", e}});  // erf's result is read outside
  auto cm = CompiledModel::compile(Context::create({}), two_outputs, {});
  for (const Node& n : cm->program().nodes)
    if (n.op == "fused_elementwise")
      for (const Node& step : n.steps) EXPECT_NE(step.op, "gelu");
    else
      EXPECT_NE(n.op, "gelu");
}

}  // namespace
}  // namespace maxc
