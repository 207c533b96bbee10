// The transformer ops of the GPU engine (engine/lower_gpu/attention.cc, normalization.cc's
// add_layer_norm) on the fake CUDA driver (gpu/fake_cuda.h), with real NVRTC compiles: the
// fusion passes make one fused node that launches one catalog kernel (the fake reports its
// mangled name), with the arguments
// the kernel reads, on device memory; the emulations here are the kernels' loops on the
// host, so the values check the plumbing (which pointer is which input), not the kernels'
// numerics (tests/gpu_emu runs the real kernel sources for that). Variants the kernels lack
// fail naming the op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/nvrtc_api.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "gpu/fake_cuda.h"
#include "gpu/gpu_test_util.h"
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cuda/common/attention_params.cuh"

namespace maxc::testing {
namespace {

// The attention kernel's loop on the host, reading its parameters as the kernel does.
void emulate_attention(void** args) {
  const auto *q = arg<const float*>(args, 0), *k = arg<const float*>(args, 1), *v = arg<const float*>(args, 2),
             *mask = arg<const float*>(args, 3);
  auto* out = arg<float*>(args, 4);
  const auto p = arg<gpu::AttentionParams>(args, 6);
  for (int64_t item = 0; item < p.batch * p.q_len; ++item) {
    const int64_t b = item / p.q_len, i = item % p.q_len;
    const float* q_row = q + gpu::offset_of(b, p.batch_shape, p.q_layout) + i * p.q_row_stride;
    const float* kb = k + gpu::offset_of(b, p.batch_shape, p.k_layout);
    const float* vb = v + gpu::offset_of(b, p.batch_shape, p.v_layout);
    float* out_row = out + gpu::offset_of(b, p.batch_shape, p.out_layout) + i * p.out_row_stride;
    std::vector<double> s(static_cast<size_t>(p.kv_len));
    double peak = -INFINITY, sum = 0;
    for (int64_t j = 0; j < p.kv_len; ++j) {
      double dot = 0;
      for (int64_t t = 0; t < p.head_dim; ++t)
        dot += q_row[t] * (p.k_transposed ? kb[t * p.k_row_stride + j] : kb[j * p.k_row_stride + t]);
      s[j] = p.scale * dot;
      if (mask)
        s[j] += mask[gpu::offset_of(b, p.batch_shape, p.mask_layout) + i * p.mask_row_stride + j * p.mask_col_stride];
      peak = std::max(peak, s[j]);
    }
    for (double& x : s) sum += x = std::exp(x - peak);
    for (int64_t c = 0; c < p.v_dim; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < p.kv_len; ++j) acc += s[j] * vb[j * p.v_row_stride + c];
      out_row[c] = static_cast<float>(acc / sum);
    }
  }
}

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

using GpuTransformerOnFake = EngineOnFake;

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

TEST_F(GpuTransformerOnFake, AttentionPatternIsOneLaunchWithItsExtentsScaleAndMask) {
  constexpr int64_t B = 2, L = 3, D = 4;
  Graph g("self_attention");
  ValueId q = g.add_input("q", f32_on_gpu({B, L, D}));
  ValueId k = g.add_input("k", f32_on_gpu({B, L, D}));
  ValueId v = g.add_input("v", f32_on_gpu({B, L, D}));
  ValueId mask = g.add_input("mask", f32_on_gpu({L}));
  g.set_outputs({{"y", attention_graph(g, q, k, v, mask)}});

  int launches = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("attention_rowsIff"), std::string::npos) << name;
    const auto p = arg<gpu::AttentionParams>(args, 6);
    EXPECT_EQ(p.batch, B);
    EXPECT_EQ(p.q_len, L);
    EXPECT_EQ(p.kv_len, L);
    EXPECT_EQ(p.head_dim, D);
    EXPECT_EQ(p.v_dim, D);
    EXPECT_EQ(p.k_transposed, 0) << "the transpose of k is looked through";
    EXPECT_FLOAT_EQ(p.scale, 0.5f);
    EXPECT_EQ(p.mask_row_stride, 0) << "a mask of [Lk] is the same for every query row";
    EXPECT_EQ(p.mask_col_stride, 1);
    EXPECT_EQ(p.batch_shape.rank, 1);
    EXPECT_EQ(p.mask_layout.strides[0], 0);
    for (size_t i : {0, 1, 2, 3, 4, 5}) EXPECT_TRUE(in_device_memory(arg<const void*>(args, i))) << "argument " << i;
    emulate_attention(args);
    ++launches;
  };
  Ref<Model> model = compile(g);
  const std::vector<float> qv = ramp(B * L * D, 0.3f), kv = ramp(B * L * D, -0.2f, 0.5f), vv = ramp(B * L * D, 1.0f),
                           mv = {0.0f, -1.0f, -10000.0f};
  std::vector<Ref<Tensor>> inputs;
  for (const auto& [values, dims] : {std::pair{qv, std::vector<int64_t>{B, L, D}}, std::pair{kv, std::vector<int64_t>{B, L, D}},
                                     std::pair{vv, std::vector<int64_t>{B, L, D}}, std::pair{mv, std::vector<int64_t>{L}}})
    inputs.push_back(host_tensor(dims, values)->copy(gpu_));
  const std::vector<float> y = values_of(*model->execute(inputs)[0]);
  EXPECT_EQ(launches, 1) << "the pattern is one fused node";
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
TEST_F(GpuTransformerOnFake, AttentionReadsAndWritesHeadsInPlace) {
  constexpr int64_t B = 2, S = 3, H = 2, D = 4;
  Graph g("heads");
  Attrs swap;
  swap.set("dims", std::vector<int64_t>{0, 2, 1, 3});
  std::vector<ValueId> heads;
  for (const char* name : {"q", "k", "v"})
    heads.push_back(g.add_op("permute", {g.add_input(name, f32_on_gpu({B, S, H, D}))}, swap)[0]);
  ValueId mask = g.add_input("mask", f32_on_gpu({S}));
  g.set_outputs({{"y", g.add_op("permute", {attention_graph(g, heads[0], heads[1], heads[2], mask)}, swap)[0]}});

  int launches = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("attention_rowsIff"), std::string::npos) << name;
    const auto p = arg<gpu::AttentionParams>(args, 6);
    EXPECT_EQ(p.batch_shape.rank, 2);
    EXPECT_EQ(p.q_row_stride, H * D) << "rows of one head are H * D apart";
    EXPECT_EQ(p.q_layout.strides[1], D) << "heads are D apart";
    EXPECT_EQ(p.out_row_stride, H * D);
    EXPECT_EQ(p.k_transposed, 0);
    emulate_attention(args);
    ++launches;
  };
  Ref<Model> model = compile(g);
  const std::vector<float> qv = ramp(B * S * H * D, 0.3f), kv = ramp(B * S * H * D, -0.2f, 0.5f),
                           vv = ramp(B * S * H * D, 1.0f), mv = {0.0f, -1.0f, -10000.0f};
  std::vector<Ref<Tensor>> inputs;
  for (const std::vector<float>* x : {&qv, &kv, &vv}) inputs.push_back(host_tensor({B, S, H, D}, *x)->copy(gpu_));
  inputs.push_back(host_tensor({S}, mv)->copy(gpu_));
  const std::vector<float> y = values_of(*model->execute(inputs)[0]);
  EXPECT_EQ(launches, 1) << "no permute launches: they are the node's strides";
  const std::vector<float> want = swap_heads(
      attention_reference(swap_heads(qv, B, S, H, D, false), swap_heads(kv, B, S, H, D, false),
                          swap_heads(vv, B, S, H, D, false), mv, B * H, S, S, D, D),
      B, S, H, D, true);
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
}

// The scores' row per block of the grid is the step's scratch, sized for the whole grid.
TEST_F(GpuTransformerOnFake, AttentionScratchHoldsOneScoreRowPerBlock) {
  const Shape q{DType::kFloat32, {2, 5, 8}}, k{DType::kFloat32, {2, 8, 7}}, v{DType::kFloat32, {2, 7, 3}};
  Attrs a;
  a.set("scale", 0.25);
  a.set("k_transposed", true);
  const Lowered l = lower("attention", a, {q, k, v}, {Shape{DType::kFloat32, {2, 5, 3}}});
  EXPECT_EQ(l.scratch_bytes, sizeof(float) * 10 * 7) << "10 (batch, row) items, one block each, 7 keys";
  EXPECT_EQ(l.inplace_input, -1) << "out may not overwrite q: later rows read it";
}

TEST_F(GpuTransformerOnFake, AttentionHalfAndBfloat16CompileWithEitherMaskDtype) {
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
TEST_F(GpuTransformerOnFake, AttentionBoolMaskSelectsWithItsFill) {
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

TEST_F(GpuTransformerOnFake, AttentionVariantsWithoutAKernelAreRefusedNamingTheOp) {
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

// layer_norm(x + r) is one add_layer_norm launch: x, the residual with its row stride,
// gamma, beta, the output and no sum (nobody else reads x + r).
TEST_F(GpuTransformerOnFake, ResidualLayerNormIsOneFusedLaunch) {
  Graph g("residual_norm");
  ValueId x = g.add_input("x", f32_on_gpu({2, 4}));
  ValueId r = g.add_input("r", f32_on_gpu({4}));
  ValueId gamma = g.add_weight("gamma", f32_on_gpu({4}));
  ValueId beta = g.add_weight("beta", f32_on_gpu({4}));
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  g.set_outputs({{"y", g.add_op("layer_norm", {g.add_op("add", {x, r})[0], gamma, beta}, attrs)[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("add_layer_normIf"), std::string::npos) << name;
    const auto *xp = arg<const float*>(args, 0), *rp = arg<const float*>(args, 1);
    const auto stride = arg<int64_t>(args, 2);
    const auto *gp = arg<const float*>(args, 3), *bp = arg<const float*>(args, 4);
    auto* y = arg<float*>(args, 5);
    EXPECT_EQ(arg<float*>(args, 6), nullptr) << "no sum output";
    const auto rows = arg<int64_t>(args, 7), cols = arg<int64_t>(args, 8);
    EXPECT_EQ(stride, 0) << "one residual row for all rows";
    EXPECT_EQ(rows, 2);
    EXPECT_EQ(cols, 4);
    EXPECT_DOUBLE_EQ(arg<double>(args, 9), 1e-5);
    for (int64_t i = 0; i < rows; ++i) {
      double s[4], mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j) mean += s[j] = xp[i * cols + j] + rp[i * stride + j];
      mean /= cols;
      for (int64_t j = 0; j < cols; ++j) var += (s[j] - mean) * (s[j] - mean) / cols;
      for (int64_t j = 0; j < cols; ++j)
        y[i * cols + j] = static_cast<float>((s[j] - mean) / std::sqrt(var + 1e-5) * gp[j] + bp[j]);
    }
  };
  Ref<Model> model = compile(g, {{"gamma", host_tensor({4}, {1, 1, 2, 2})}, {"beta", host_tensor({4}, {0, 0, 0, 1})}});
  const std::vector<float> y = values_of(*model->execute(std::vector<Ref<Tensor>>{
      host_tensor({2, 4}, {1, 2, 3, 4, 0, 0, 0, 0})->copy(gpu_), host_tensor({4}, {1, 2, 3, 4})->copy(gpu_)})[0]);
  ASSERT_EQ(fake().launches.size(), 1u);
  // Row 0 is 2, 4, 6, 8 (mean 5, variance 5) and row 1 is 1, 2, 3, 4 (mean 2.5, variance 1.25).
  const double a = 1 / std::sqrt(5 + 1e-5), b = 1 / std::sqrt(1.25 + 1e-5);
  const std::vector<double> want = {-3 * a, -a, 2 * a, 6 * a + 1, -1.5 * b, -0.5 * b, 1 * b, 3 * b + 1};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
}

// When x + r is also an output, the fused kernel writes it too: its pointer is the sum.
TEST_F(GpuTransformerOnFake, ResidualLayerNormWritesTheSumWhenItIsRead) {
  Graph g("residual_norm_sum");
  ValueId x = g.add_input("x", f32_on_gpu({2, 4}));
  ValueId r = g.add_input("r", f32_on_gpu({2, 4}));
  ValueId gamma = g.add_weight("gamma", f32_on_gpu({4}));
  ValueId beta = g.add_weight("beta", f32_on_gpu({4}));
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  ValueId sum = g.add_op("add", {x, r})[0];
  g.set_outputs({{"y", g.add_op("layer_norm", {sum, gamma, beta}, attrs)[0]}, {"sum", sum}});
  void* sum_arg = nullptr;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("add_layer_normIf"), std::string::npos) << name;
    EXPECT_EQ(arg<int64_t>(args, 2), 4) << "a residual of x's shape";
    sum_arg = arg<void*>(args, 6);
    ASSERT_TRUE(in_device_memory(sum_arg));
    const auto *xp = arg<const float*>(args, 0), *rp = arg<const float*>(args, 1);
    for (int i = 0; i < 8; ++i) static_cast<float*>(sum_arg)[i] = xp[i] + rp[i];
  };
  Ref<Tensor> ones = host_tensor({4}, {1, 1, 1, 1});
  Ref<Model> model = compile(g, {{"gamma", ones}, {"beta", ones}});
  Ref<Tensor> in = host_tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})->copy(gpu_);
  std::vector<Ref<Tensor>> out = model->execute(std::vector<Ref<Tensor>>{in, in});
  ASSERT_EQ(fake().launches.size(), 1u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]->data(), sum_arg);
  EXPECT_EQ(values_of(*out[1]), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
}

TEST_F(GpuTransformerOnFake, AddLayerNormMismatchesAreRefusedNamingTheOp) {
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

// argmax over axis 1 of [2, 3, 4] is one arg_reduce_lines launch over the lines
// [outer 2, n 3, inner 4], its int64 result [2, 1, 4] in device memory.
TEST_F(GpuTransformerOnFake, ArgmaxLaunchesOneThreadPerLineWithItsExtents) {
  Graph g("argmax");
  ValueId x = g.add_input("x", f32_on_gpu({2, 3, 4}));
  Attrs attrs;
  attrs.set("axis", int64_t{1});
  g.set_outputs({{"i", g.add_op("argmax", {x}, attrs)[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("arg_reduce_linesINS0_6ArgMaxEf"), std::string::npos) << name;
    EXPECT_TRUE(in_device_memory(arg<const void*>(args, 1)));
    EXPECT_EQ(arg<int64_t>(args, 2), 2);
    EXPECT_EQ(arg<int64_t>(args, 3), 3);
    EXPECT_EQ(arg<int64_t>(args, 4), 4);
  };
  Ref<Model> model = compile(g);
  Ref<Tensor> out = model->execute(std::vector<Ref<Tensor>>{host_tensor({2, 3, 4}, ramp(24, 1))->copy(gpu_)})[0];
  EXPECT_EQ(fake().launches.size(), 1u);
  EXPECT_EQ(out->dtype(), DType::kInt64);
  EXPECT_EQ(out->dims(), (std::vector<int64_t>{2, 1, 4}));
}

TEST_F(GpuTransformerOnFake, CumsumPassesExclusiveAndReverse) {
  Graph g("cumsum");
  ValueId x = g.add_input("x", f32_on_gpu({3, 5}));
  Attrs attrs;
  attrs.set("axis", int64_t{-1});
  attrs.set("exclusive", true);
  attrs.set("reverse", true);
  g.set_outputs({{"y", g.add_op("cumsum", {x}, attrs)[0]}});
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("cumsum_linesIf"), std::string::npos) << name;
    EXPECT_EQ(arg<int64_t>(args, 2), 3);
    EXPECT_EQ(arg<int64_t>(args, 3), 5);
    EXPECT_EQ(arg<int64_t>(args, 4), 1);
    EXPECT_EQ(arg<int32_t>(args, 5), 1) << "exclusive";
    EXPECT_EQ(arg<int32_t>(args, 6), 1) << "reverse";
  };
  Ref<Model> model = compile(g);
  model->execute(std::vector<Ref<Tensor>>{host_tensor({3, 5}, ramp(15, 1))->copy(gpu_)});
  EXPECT_EQ(fake().launches.size(), 1u);
}

TEST_F(GpuTransformerOnFake, ScanAndArgVariantsWithoutAKernelAreRefusedNamingTheOp) {
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
