// The engine below the ABI: fusion changes nothing but speed, the arena is smaller than the
// intermediates it holds, plans are cached per shape within their bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine_test_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/simd.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

// A transformer-ish block: every pattern the fusion passes look for, and an elementwise tail.
//   h = gelu(x @ w1 + b1) @ w2 + b2;  y = layer_norm(h + x);  z = exp(y) * 0.5 - y
Graph block() {
  Graph g("block");
  ValueId x = g.add_input("x", f32({"batch", 16}));
  ValueId w1 = g.add_weight("w1", f32({16, 32}));
  ValueId b1 = g.add_weight("b1", f32({32}));
  ValueId w2 = g.add_weight("w2", f32({32, 16}));
  ValueId b2 = g.add_weight("b2", f32({16}));
  ValueId gamma = g.add_weight("gamma", f32({16}));
  ValueId beta = g.add_weight("beta", f32({16}));
  ValueId h = g.add_op("gelu", {g.add_op("add", {g.add_op("matmul", {x, w1})[0], b1})[0]})[0];
  h = g.add_op("add", {g.add_op("matmul", {h, w2})[0], b2})[0];
  ValueId y = g.add_op("layer_norm", {g.add_op("add", {h, x})[0], gamma, beta}, {{"epsilon", 1e-5}})[0];
  float half = 0.5f;
  ValueId c = g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&half), 4}));
  ValueId z = g.add_op("sub", {g.add_op("mul", {g.add_op("exp", {y})[0], c})[0], y})[0];
  g.set_outputs({{"y", y}, {"z", z}});
  return g;
}

NamedTensors block_weights() {
  return {{"w1", random_tensor({16, 32}, 1)}, {"b1", random_tensor({32}, 2)},   {"w2", random_tensor({32, 16}, 3)},
          {"b2", random_tensor({16}, 4)},     {"gamma", random_tensor({16}, 5)}, {"beta", random_tensor({16}, 6)}};
}

std::vector<float> values(const Ref<Tensor>& t) {
  const auto* p = reinterpret_cast<const float*>(t->data());
  return {p, p + t->num_elements()};
}

Ref<CompiledModel> compile(const Graph& g, bool fuse, int64_t cache = 16) {
  CompileSettings s;
  s.fuse = fuse;
  s.plan_cache_capacity = cache;
  return CompiledModel::compile(Context::create({}), g, s);
}

TEST(Model, FusionGivesTheSameResults) {
  Graph g = block();
  auto fused = Model::create(compile(g, true), block_weights());
  auto plain = Model::create(compile(g, false), block_weights());
  EXPECT_LT(fused->compiled()->program().nodes.size(), plain->compiled()->program().nodes.size());
  for (int64_t batch : {1, 5, 33}) {
    std::vector<Ref<Tensor>> in = {random_tensor({batch, 16}, 7 + static_cast<uint32_t>(batch))};
    auto a = fused->execute(in), b = plain->execute(in);
    ASSERT_EQ(a.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      auto va = values(a[o]), vb = values(b[o]);
      ASSERT_EQ(va.size(), vb.size());
      for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 2e-5f) << "output " << o << " element " << i;
    }
  }
}

// Whether oneDNN reads a weight rhs of x [rows, 40] @ [40, 24] (or its transpose, stored
// [24, 40]) in a layout of its own choosing, which the engine then packs once.
bool onednn_packs(int64_t rows, bool transposed) {
  const std::vector<int64_t> lhs{rows, 40}, rhs{40, 24};
  cpu::MatmulDims d = cpu::matmul_dims(lhs, rhs);
  d.rhs_transposed = transposed;
  return cpu::Matmul(d, DType::kFloat32, {}, /*may_pack_rhs=*/true).rhs_packed();
}

// y = relu(x @ w) and z = x @ transpose(v), v stored [N, K] as torch keeps a Linear weight.
// From 2 to 512 rows (7 with AVX-512) each matmul reads our gemm's packed copy of its weight,
// and elsewhere the copy oneDNN's kernel asks for when it asks for one (with AVX-512, all of
// them), made once per bound weight and layout and anew after a reload. Where oneDNN reads
// the weights as they are, v is transposed through its strides: no transpose runs per call.
TEST(Model, WeightsArePackedOnceAndTransposedWeightsAreReadInPlace) {
  Graph g("linear");
  ValueId x = g.add_input("x", f32({"batch", 40}));
  ValueId w = g.add_weight("w", f32({40, 24}));
  ValueId v = g.add_weight("v", f32({24, 40}));
  ValueId vt = g.add_op("transpose", {v}, {{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}})[0];
  g.set_outputs({{"y", g.add_op("relu", {g.add_op("matmul", {x, w})[0]})[0]}, {"z", g.add_op("matmul", {x, vt})[0]}});
  auto cm = compile(g, true);
  for (const Node& n : cm->program().nodes) EXPECT_NE(n.op, "transpose") << "the transpose is read through";
  // out[i][j] = sum_p x[i][p] * weight(p, j), relu'd when asked.
  auto reference = [](const Ref<Tensor>& in, const std::vector<float>& wv, bool transposed, bool relu) {
    const auto xv = values(in);
    const int64_t rows = in->dims()[0];
    std::vector<float> out(static_cast<size_t>(rows * 24));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 24; ++j) {
        double s = 0;
        for (int64_t p = 0; p < 40; ++p) s += double(xv[i * 40 + p]) * wv[transposed ? j * 40 + p : p * 24 + j];
        out[i * 24 + j] = relu && s < 0 ? 0.f : float(s);
      }
    return out;
  };
  Ref<Tensor> w1 = random_tensor({40, 24}, 11), w2 = random_tensor({40, 24}, 12), v1 = random_tensor({24, 40}, 13);
  auto model = Model::create(cm, {{"w", w1}, {"v", v1}});
  for (int round = 0; round < 2; ++round) {
    const Ref<Tensor>& wt = round == 0 ? w1 : w2;
    for (int64_t batch : {1, 7, 64, 600}) {
      Ref<Tensor> in = random_tensor({batch, 40}, 30 + static_cast<uint32_t>(batch));
      auto plan = cm->plan_for({{"batch", batch}});
      // Our gemm from 2 rows to 512 on an AVX2 CPU, to 7 where oneDNN runs AVX-512 (linalg.cc).
      const bool ours = batch >= 2 && batch <= (cpu::cpu_has_avx512() ? 7 : 512);
      const size_t packed = ours ? 2u : size_t{onednn_packs(batch, false)} + size_t{onednn_packs(batch, true)};
      EXPECT_EQ(plan->prepacks.size(), packed) << "batch " << batch;
      if (cpu::cpu_has_avx512()) EXPECT_EQ(packed, 2u) << "oneDNN's AVX-512 kernels read weights in blocks";
      const auto got = model->execute(std::vector<Ref<Tensor>>{in});
      const auto y = values(got[0]), z = values(got[1]);
      const auto want_y = reference(in, values(wt), false, true), want_z = reference(in, values(v1), true, false);
      for (size_t i = 0; i < want_y.size(); ++i) {
        ASSERT_NEAR(y[i], want_y[i], 1e-4f) << "y, round " << round << " batch " << batch;
        ASSERT_NEAR(z[i], want_z[i], 1e-4f) << "z, round " << round << " batch " << batch;
      }
    }
    model->reload({{"w", w2}});
  }
}

TEST(Model, ArenaIsSmallerThanTheIntermediates) {
  auto compiled = compile(block(), false);
  auto plan = compiled->plan_for({{"batch", 64}});
  EXPECT_GT(plan->intermediate_bytes, 0u);
  EXPECT_LT(plan->arena_bytes, plan->intermediate_bytes);
}

TEST(Model, PlansAreCachedPerShapeWithinTheBound) {
  auto compiled = compile(block(), true, /*cache=*/2);
  auto p1 = compiled->plan_for({{"batch", 1}});
  EXPECT_EQ(compiled->plan_for({{"batch", 1}}), p1);
  compiled->plan_for({{"batch", 2}});
  compiled->plan_for({{"batch", 3}});  // evicts batch 1, the least recently used
  EXPECT_NE(compiled->plan_for({{"batch", 1}}), p1);
}

TEST(Model, MissingKernelIsUnimplementedAtCompileForStaticGraphs) {
  OpRegistry registry;
  registry.add(OpSchema{.name = "mystery", .inputs = {{"x"}},
                        .infer = [](const InferContext& ctx) { return std::vector<TensorType>{ctx.input(0)}; }});
  Graph g("g", registry);
  ValueId x = g.add_input("x", f32({2, 2}));
  ValueId y = g.add_op("mystery", {x})[0];
  g.set_outputs({{"y", y}});
  try {
    compile(g, true);
    FAIL() << "compiled an op without a kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("mystery"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc
