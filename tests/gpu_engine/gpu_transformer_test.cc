// The transformer ops of the GPU engine (engine/lower_gpu/attention.cc, normalization.cc's
// add_layer_norm) on the emulated GPU (tests/emulated_gpu): the fusion passes make one fused
// node that launches one catalog kernel, run from its real source, with the values of plain
// loops. Variants the kernels lack (attention, add_layer_norm, argmax, cumsum) fail naming
// the op; the op suite checks argmax's and cumsum's values.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "driver/test_util.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

// softmax(q kᵀ / 2 + mask) v by plain loops: what the graph of the tests computes.
std::vector<float> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                       const std::vector<float>& v, const std::vector<float>& mask, int64_t batch,
                                       int64_t lq, int64_t lk, int64_t d, int64_t dv) {
  std::vector<float> out(static_cast<size_t>(batch * lq * dv));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i) {
      std::vector<double> s(static_cast<size_t>(lk));
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += q[(b * lq + i) * d + t] * k[(b * lk + j) * d + t];
        s[j] = std::exp(dot / 2 + mask[j]);
        sum += s[j];
      }
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += s[j] / sum * v[(b * lk + j) * dv + c];
        out[(b * lq + i) * dv + c] = static_cast<float>(acc);
      }
    }
  return out;
}

using GpuTransformer = EngineOnEmulatedGpu;

// softmax(q @ kᵀ / 2 + mask) @ v, with q, k, v [B, L, D]: the graph BERT's self-attention
// makes (per head). Built with the transpose of k, so the fused node reads k as it is.
ValueId attention_graph(Graph& g, ValueId q, ValueId k, ValueId v, ValueId mask) {
  Attrs t;
  t.set("axis_1", int64_t{-2});
  t.set("axis_2", int64_t{-1});
  const float two = 2.0f;
  ValueId c = g.add_constant(Constant::copy_of(TensorType{DType::kFloat32, {}, DeviceRef::gpu(0)},
                                               {reinterpret_cast<const uint8_t*>(&two), sizeof two}));
  ValueId scores = g.add_op("matmul", {q, g.add_op("transpose", {k}, t)[0]})[0];
  ValueId masked = g.add_op("add", {g.add_op("div", {scores, c})[0], mask})[0];
  Attrs axis;
  axis.set("axis", int64_t{-1});
  return g.add_op("matmul", {g.add_op("softmax", {masked}, axis)[0], v})[0];
}

TEST_F(GpuTransformer, AttentionPatternIsOneLaunchWithItsScaleAndMask) {
  constexpr int64_t B = 2, L = 3, D = 4;
  Graph g("self_attention");
  ValueId q = g.add_input("q", f32_on_gpu({B, L, D}));
  ValueId k = g.add_input("k", f32_on_gpu({B, L, D}));
  ValueId v = g.add_input("v", f32_on_gpu({B, L, D}));
  ValueId mask = g.add_input("mask", f32_on_gpu({L}));
  g.set_outputs({{"y", attention_graph(g, q, k, v, mask)}});

  Ref<Model> model = compile(g);
  const std::vector<float> qv = ramp(B * L * D, 0.3f), kv = ramp(B * L * D, -0.2f, 0.5f), vv = ramp(B * L * D, 1.0f),
                           mv = {0.0f, -1.0f, -10000.0f};
  std::vector<Ref<Tensor>> inputs;
  for (const auto& [values, dims] : {std::pair{qv, std::vector<int64_t>{B, L, D}}, std::pair{kv, std::vector<int64_t>{B, L, D}},
                                     std::pair{vv, std::vector<int64_t>{B, L, D}}, std::pair{mv, std::vector<int64_t>{L}}})
    inputs.push_back(host_tensor(dims, values)->copy(gpu_));
  const std::vector<float> y = values_of(*model->execute(inputs)[0]);
  EXPECT_EQ(driver_log().launches.size(), 1u) << "the pattern is one fused node";
  EXPECT_EQ(launches_of("attention_rows"), 1u);
  const std::vector<float> want = attention_reference(qv, kv, vv, mv, B, L, L, D, D);
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
}

// [B, S, H, D] -> [B, H, S, D], or back with `back`.
std::vector<float> swap_heads(const std::vector<float>& x, int64_t b, int64_t s, int64_t h, int64_t d, bool back) {
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t k = 0; k < h; ++k)
        for (int64_t t = 0; t < d; ++t) {
          const size_t bshd = static_cast<size_t>(((i * s + j) * h + k) * d + t),
                       bhsd = static_cast<size_t>(((i * h + k) * s + j) * d + t);
          (back ? y[bshd] : y[bhsd]) = back ? x[bhsd] : x[bshd];
        }
  return y;
}

// The heads of [B, S, H, D] q, k and v permuted to [B, H, S, D] and the output permuted back,
// as BERT's exports have them: the permutes go into the node (layout "bshd"), so the one
// launch is the attention's, reading and writing the heads where they lie.
TEST_F(GpuTransformer, AttentionReadsAndWritesHeadsInPlace) {
  constexpr int64_t B = 2, S = 3, H = 2, D = 4;
  Graph g("heads");
  Attrs swap;
  swap.set("dims", std::vector<int64_t>{0, 2, 1, 3});
  std::vector<ValueId> heads;
  for (const char* name : {"q", "k", "v"})
    heads.push_back(g.add_op("permute", {g.add_input(name, f32_on_gpu({B, S, H, D}))}, swap)[0]);
  ValueId mask = g.add_input("mask", f32_on_gpu({S}));
  g.set_outputs({{"y", g.add_op("permute", {attention_graph(g, heads[0], heads[1], heads[2], mask)}, swap)[0]}});

  Ref<Model> model = compile(g);
  const std::vector<float> qv = ramp(B * S * H * D, 0.3f), kv = ramp(B * S * H * D, -0.2f, 0.5f),
                           vv = ramp(B * S * H * D, 1.0f), mv = {0.0f, -1.0f, -10000.0f};
  std::vector<Ref<Tensor>> inputs;
  for (const std::vector<float>* x : {&qv, &kv, &vv}) inputs.push_back(host_tensor({B, S, H, D}, *x)->copy(gpu_));
  inputs.push_back(host_tensor({S}, mv)->copy(gpu_));
  const std::vector<float> y = values_of(*model->execute(inputs)[0]);
  EXPECT_EQ(driver_log().launches.size(), 1u) << "no permute launches: they are the node's strides";
  EXPECT_EQ(launches_of("attention_rows"), 1u);
  const std::vector<float> want = swap_heads(
      attention_reference(swap_heads(qv, B, S, H, D, false), swap_heads(kv, B, S, H, D, false),
                          swap_heads(vv, B, S, H, D, false), mv, B * H, S, S, D, D),
      B, S, H, D, true);
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
}

// The scores' row per block of the grid is the step's scratch, sized for the whole grid.
TEST_F(GpuTransformer, AttentionScratchHoldsOneScoreRowPerBlock) {
  const Shape q{DType::kFloat32, {2, 5, 8}}, k{DType::kFloat32, {2, 8, 7}}, v{DType::kFloat32, {2, 7, 3}};
  Attrs a;
  a.set("scale", 0.25);
  a.set("k_transposed", true);
  const Lowered l = lower("attention", a, {q, k, v}, {Shape{DType::kFloat32, {2, 5, 3}}});
  EXPECT_EQ(l.scratch_bytes, sizeof(float) * 10 * 7) << "10 (batch, row) items, one block each, 7 keys";
  EXPECT_EQ(l.inplace_input, -1) << "out may not overwrite q: later rows read it";
}

TEST_F(GpuTransformer, AttentionHalfAndBfloat16CompileWithEitherMaskDtype) {
  for (DType d : {DType::kFloat16, DType::kBFloat16}) {
    const Shape q{d, {1, 4, 8}}, mask{DType::kFloat32, {4, 4}}, own_mask{d, {1, 1, 4}};
    Attrs a;
    a.set("scale", 0.125);
    a.set("k_transposed", false);
    EXPECT_NO_THROW(lower("attention", a, {q, q, q, mask}, {q}));
    EXPECT_NO_THROW(lower("attention", a, {q, q, q, own_mask}, {q}));
    EXPECT_NO_THROW(lower("attention", a, {q, q, q}, {q}));
  }
}

// A bool mask selects (a decoder's where(causal, scores, fill)): it needs the fill.
TEST_F(GpuTransformer, AttentionBoolMaskSelectsWithItsFill) {
  for (DType d : {DType::kFloat32, DType::kFloat16}) {
    const Shape q{d, {1, 4, 8}}, mask{DType::kBool, {4, 4}};
    Attrs a;
    a.set("scale", 0.125);
    a.set("k_transposed", false);
    EXPECT_MAXC_ERROR(lower("attention", a, {q, q, q, mask}, {q}), Code::kInternal,
                      "a bool mask without attribute 'mask_fill'");
    a.set("mask_fill", -1e4);
    EXPECT_NO_THROW(lower("attention", a, {q, q, q, mask}, {q}));
  }
}

TEST_F(GpuTransformer, AttentionVariantsWithoutAKernelAreRefusedNamingTheOp) {
  Attrs a;
  a.set("scale", 1.0);
  a.set("k_transposed", false);
  const Shape f32{DType::kFloat32, {2, 4}}, f64{DType::kFloat64, {2, 4}}, f16{DType::kFloat16, {2, 4}},
      i32{DType::kInt32, {2, 4}};
  EXPECT_MAXC_ERROR(lower("attention", a, {f64, f64, f64}, {f64}), Code::kUnimplemented, "op 'attention'");
  EXPECT_MAXC_ERROR(lower("attention", a, {i32, i32, i32}, {i32}), Code::kUnimplemented, "op 'attention'");
  EXPECT_MAXC_ERROR(lower("attention", a, {f32, f16, f32}, {f32}), Code::kUnimplemented,
                    "op 'attention': no GPU kernel for q, k and v of different dtypes");
  EXPECT_MAXC_ERROR(lower("attention", a, {f16, f16, f16, Shape{DType::kInt32, {2, 2}}}, {f16}), Code::kUnimplemented,
                    "op 'attention': attention: a mask of int32");
  EXPECT_MAXC_ERROR(lower("attention", a, {f32, Shape{DType::kFloat32, {3, 4}}, f32}, {f32}), Code::kInternal,
                    "op 'attention': q float32[2, 4], k float32[3, 4] and v float32[2, 4] do not fit");
  EXPECT_MAXC_ERROR(lower("attention", a, {f32, f32, f32, Shape{DType::kFloat32, {3}}}, {f32}), Code::kInternal,
                    "op 'attention': mask float32[3] does not broadcast to the scores");
}

// layer_norm(x + r) is one add_layer_norm launch, its residual one row for all rows.
TEST_F(GpuTransformer, ResidualLayerNormIsOneFusedLaunch) {
  Graph g("residual_norm");
  ValueId x = g.add_input("x", f32_on_gpu({2, 4}));
  ValueId r = g.add_input("r", f32_on_gpu({4}));
  ValueId gamma = g.add_weight("gamma", f32_on_gpu({4}));
  ValueId beta = g.add_weight("beta", f32_on_gpu({4}));
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  g.set_outputs({{"y", g.add_op("layer_norm", {g.add_op("add", {x, r})[0], gamma, beta}, attrs)[0]}});
  Ref<Model> model = compile(g, {{"gamma", host_tensor({4}, {1, 1, 2, 2})}, {"beta", host_tensor({4}, {0, 0, 0, 1})}});
  const std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{
      host_tensor({2, 4}, {1, 2, 3, 4, 0, 0, 0, 0})->copy(gpu_), host_tensor({4}, {1, 2, 3, 4})->copy(gpu_)})[0]);
  ASSERT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("add_layer_norm"), 1u);
  // Row 0 is 2, 4, 6, 8 (mean 5, variance 5) and row 1 is 1, 2, 3, 4 (mean 2.5, variance 1.25).
  const double a = 1 / std::sqrt(5 + 1e-5), b = 1 / std::sqrt(1.25 + 1e-5);
  const std::vector<double> want = {-3 * a, -a, 2 * a, 6 * a + 1, -1.5 * b, -0.5 * b, 1 * b, 3 * b + 1};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
}

// When x + r is also an output, the fused kernel writes it too.
TEST_F(GpuTransformer, ResidualLayerNormWritesTheSumWhenItIsRead) {
  Graph g("residual_norm_sum");
  ValueId x = g.add_input("x", f32_on_gpu({2, 4}));
  ValueId r = g.add_input("r", f32_on_gpu({2, 4}));
  ValueId gamma = g.add_weight("gamma", f32_on_gpu({4}));
  ValueId beta = g.add_weight("beta", f32_on_gpu({4}));
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  ValueId sum = g.add_op("add", {x, r})[0];
  g.set_outputs({{"y", g.add_op("layer_norm", {sum, gamma, beta}, attrs)[0]}, {"sum", sum}});
  Ref<Tensor> ones = host_tensor({4}, {1, 1, 1, 1});
  Ref<Model> model = compile(g, {{"gamma", ones}, {"beta", ones}});
  Ref<Tensor> in = host_tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})->copy(gpu_);
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{in, in});
  ASSERT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("add_layer_norm"), 1u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values_of(*out[1]), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
  // Both rows of the sum step by 2 (variance 5): normalized (-3, -1, 1, 3) / √5, then + beta 1.
  const std::vector<float> y = values_of(*out[0]);
  const double sd = std::sqrt(5 + 1e-5);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(y[i], (2 * (i % 4) - 3) / sd + 1, 1e-5) << i;
}

TEST_F(GpuTransformer, AddLayerNormMismatchesAreRefusedNamingTheOp) {
  Attrs a;
  a.set("epsilon", 1e-5);
  const Shape x{DType::kFloat32, {2, 4}}, row{DType::kFloat32, {4}}, bad{DType::kFloat32, {3}};
  const Shape i32{DType::kInt32, {2, 4}}, i32_row{DType::kInt32, {4}};
  EXPECT_MAXC_ERROR(lower("add_layer_norm", a, {x, bad, row, row}, {x}), Code::kInternal,
                    "op 'add_layer_norm': residual float32[3] is neither the shape of input");
  EXPECT_MAXC_ERROR(lower("add_layer_norm", a, {x, x, bad, row}, {x}), Code::kInvalidArgument,
                    "op 'add_layer_norm': input 2 is float32[3]");
  EXPECT_MAXC_ERROR(lower("add_layer_norm", a, {i32, i32, i32_row, i32_row}, {i32}), Code::kUnimplemented,
                    "op 'add_layer_norm'");
  EXPECT_MAXC_ERROR(lower("add_layer_norm", a, {x, x, row}, {x}), Code::kInternal,
                    "op 'add_layer_norm': expected 4 inputs");
}

TEST_F(GpuTransformer, ScanAndArgVariantsWithoutAKernelAreRefusedNamingTheOp) {
  Attrs axis0;
  axis0.set("axis", int64_t{0});
  const Shape empty{DType::kFloat32, {0, 3}}, u8{DType::kUInt8, {4}};
  EXPECT_MAXC_ERROR(lower("argmin", axis0, {empty}, {Shape{DType::kInt64, {1, 3}}}), Code::kInvalidArgument,
                    "op 'argmin': cannot reduce over axis 0");
  EXPECT_MAXC_ERROR(lower("argmax", axis0, {u8}, {Shape{DType::kInt64, {1}}}), Code::kUnimplemented,
                    "op 'argmax': argmax: the GPU kernel handles float types, int32 and int64, not uint8");
  Attrs scan = axis0;
  scan.set("exclusive", false);
  scan.set("reverse", false);
  EXPECT_MAXC_ERROR(lower("cumsum", scan, {u8}, {u8}), Code::kUnimplemented, "op 'cumsum'");
}

}  // namespace
}  // namespace maxc::testing
