// conv2d, fused_conv2d, max_pool2d and avg_pool2d of the GPU engine
// (engine/lower_gpu/conv.cc) on the emulated GPU (tests/emulated_gpu): each node is one launch
// of its catalog kernel, run from its real source, and the values are the CPU kernels'.
// Variants without a kernel fail naming the op; convolutions keep the graph's layout (the
// channels-last pass is the CPU's).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/lowering.h"
#include "engine/model.h"
#include "gpu_engine/engine_on_emulated.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/pool.h"

namespace maxc::testing {
namespace {

class GpuConv : public EngineOnEmulatedGpu {
 protected:
  std::vector<float> run(const Graph& g, const std::vector<std::pair<std::vector<float>, std::vector<int64_t>>>& in) {
    model_ = compile(g);
    std::vector<Ref<Tensor>> inputs;
    for (const auto& [values, dims] : in) inputs.push_back(host_tensor(dims, values)->copy(gpu_));
    return values_of(*model_->execute(inputs)[0]);
  }

  Ref<Model> model_;
};

Attrs conv_attrs(bool nchw, int64_t stride, int64_t pad, int64_t groups) {
  return Attrs{{"stride", std::vector<int64_t>{stride, stride}},
               {"dilation", std::vector<int64_t>{1, 1}},
               {"padding", std::vector<int64_t>{pad, pad, pad, pad}},
               {"groups", groups},
               {"input_layout", std::string(nchw ? "NCHW" : "NHWC")},
               {"filter_layout", std::string(nchw ? "FCRS" : "RSCF")}};
}

// NCHW x [2, 4, 5, 5], FCRS filter [16, 2, 3, 3] in 2 groups, stride 2, padding 1, a bias.
// It stays NCHW, one launch and no permutes: the channels-last pass is the CPU's.
TEST_F(GpuConv, Conv2dIsOneLaunchWithItsExtentsAndOperands) {
  constexpr int64_t N = 2, C = 4, H = 5, F = 16, K = 3;
  Graph g("conv");
  ValueId x = g.add_input("x", f32_on_gpu({N, C, H, H}));
  ValueId f = g.add_input("f", f32_on_gpu({F, C / 2, K, K}));
  ValueId b = g.add_input("b", f32_on_gpu({F}));
  g.set_outputs({{"y", g.add_op("conv2d", {x, f, b}, conv_attrs(true, 2, 1, 2))[0]}});
  const std::vector<float> xv = ramp(N * C * H * H, 0.3f), fv = ramp(F * C / 2 * K * K, -0.2f, 0.5f), bv = ramp(F, 1);
  const std::vector<float> y = run(g, {{xv, {N, C, H, H}}, {fv, {F, C / 2, K, K}}, {bv, {F}}});
  EXPECT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("conv2d_tiled"), 1u);
  cpu::Conv2dShape s;
  s.batch = N, s.in_h = s.in_w = H, s.in_c = C, s.kernel_h = s.kernel_w = K, s.out_c = F, s.out_h = s.out_w = 3;
  s.stride_h = s.stride_w = 2, s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1, s.groups = 2;
  s.channels_first = s.filter_fcrs = true;
  std::vector<float> want(s.out_elements());
  cpu::conv2d_direct(s, xv.data(), fv.data(), bv.data(), want.data());
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-4) << i;
}

// relu(conv2d(x, f) * scale + shift), NHWC: fuse_conv makes one fused_conv2d, which is one
// launch with the scale and shift as the epilogue's operands.
TEST_F(GpuConv, ConvBatchNormReluIsOneFusedLaunch) {
  constexpr int64_t H = 6, C = 3, F = 8;
  Graph g("conv_bn_relu");
  ValueId x = g.add_input("x", f32_on_gpu({1, H, H, C}));
  ValueId f = g.add_input("f", f32_on_gpu({3, 3, C, F}));
  ValueId scale = g.add_input("scale", f32_on_gpu({F}));
  ValueId shift = g.add_input("shift", f32_on_gpu({F}));
  ValueId y = g.add_op("conv2d", {x, f}, conv_attrs(false, 1, 1, 1))[0];
  y = g.add_op("relu", {g.add_op("add", {g.add_op("mul", {y, scale})[0], shift})[0]})[0];
  g.set_outputs({{"y", y}});
  const std::vector<float> xv = ramp(H * H * C, 0.4f, -1), fv = ramp(9 * C * F, -0.3f, 0.6f), sv = ramp(F, 0.5f, -1),
                           hv = ramp(F, 0.2f, -0.3f);
  const std::vector<float> out = run(g, {{xv, {1, H, H, C}}, {fv, {3, 3, C, F}}, {sv, {F}}, {hv, {F}}});
  const auto& nodes = model_->compiled()->program().nodes;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].op, "fused_conv2d");
  EXPECT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("conv2d_tiled"), 1u);
  cpu::Conv2dShape s;
  s.batch = 1, s.in_h = s.in_w = s.out_h = s.out_w = H, s.in_c = C, s.kernel_h = s.kernel_w = 3, s.out_c = F;
  s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1;
  std::vector<float> want(s.out_elements());
  cpu::conv2d_direct<float>(s, xv.data(), fv.data(), nullptr, want.data());
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(out[i], std::max(want[i] * sv[i % F] + hv[i % F], 0.0f), 1e-4) << i;
}

// A depthwise convolution (one output channel per group) takes the direct kernel.
TEST_F(GpuConv, DepthwiseConvTakesTheDirectKernel) {
  constexpr int64_t H = 5, C = 6;
  Graph g("depthwise");
  ValueId x = g.add_input("x", f32_on_gpu({1, H, H, C}));
  ValueId f = g.add_input("f", f32_on_gpu({3, 3, 1, C}));
  g.set_outputs({{"y", g.add_op("conv2d", {x, f}, conv_attrs(false, 2, 1, C))[0]}});
  const std::vector<float> xv = ramp(H * H * C, 0.3f, -1), fv = ramp(9 * C, -0.2f, 0.5f);
  const std::vector<float> y = run(g, {{xv, {1, H, H, C}}, {fv, {3, 3, 1, C}}});
  EXPECT_EQ(driver_log().launches.size(), 1u);
  EXPECT_EQ(launches_of("conv2d_direct"), 1u);
  cpu::Conv2dShape s;
  s.batch = 1, s.in_h = s.in_w = H, s.in_c = s.out_c = s.groups = C, s.kernel_h = s.kernel_w = 3;
  s.out_h = s.out_w = 3, s.stride_h = s.stride_w = 2, s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1;
  std::vector<float> want(s.out_elements());
  cpu::conv2d_direct<float>(s, xv.data(), fv.data(), nullptr, want.data());
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-4) << i;
}

Attrs pool_attrs(int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode) {
  return Attrs{{"kernel_size", std::vector<int64_t>{kernel, kernel}},
               {"stride", std::vector<int64_t>{stride}},
               {"padding", std::vector<int64_t>{pad}},
               {"ceil_mode", ceil_mode}};
}

// max_pool2d 3x3 / 2 with padding 1 and ceil_mode over [1, 6, 6, 3], then avg_pool2d 2x2 / 2
// without counting the padding: two launches, each with the extents the compiler inferred.
TEST_F(GpuConv, PoolsAreOneLaunchEachWithTheirWindows) {
  Graph g("pools");
  ValueId x = g.add_input("x", f32_on_gpu({1, 6, 6, 3}));
  ValueId m = g.add_op("max_pool2d", {x}, pool_attrs(3, 2, 1, true))[0];
  Attrs avg = pool_attrs(2, 2, 1, false);
  avg.set("count_boundary", false);
  g.set_outputs({{"y", g.add_op("avg_pool2d", {m}, avg)[0]}});
  const std::vector<float> xv = ramp(108, 0.7f, -2);
  const std::vector<float> y = run(g, {{xv, {1, 6, 6, 3}}});
  ASSERT_EQ(driver_log().launches.size(), 2u);
  EXPECT_NE(driver_log().launches[0].find("max_pool2d"), std::string::npos) << driver_log().launches[0];
  EXPECT_NE(driver_log().launches[1].find("avg_pool2d"), std::string::npos) << driver_log().launches[1];
  cpu::Pool2dShape ms{1, 6, 6, 3, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1}, as{1, 4, 4, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1};
  std::vector<float> mid(48), want(27);
  cpu::max_pool2d(DType::kFloat32, ms, xv.data(), mid.data());
  cpu::avg_pool2d(DType::kFloat32, as, false, mid.data(), want.data());
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

Shape f32(std::vector<int64_t> dims) { return Shape{DType::kFloat32, std::move(dims)}; }

TEST_F(GpuConv, HalfFloat64AndIntegerVariantsCompile) {
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    const Shape x{d, {1, 5, 5, 4}}, f{d, {3, 3, 4, 8}}, b{d, {8}}, y{d, {1, 3, 3, 8}};
    EXPECT_NO_THROW(lower("conv2d", conv_attrs(false, 1, 0, 1), {x, f, b}, {y}));
    Attrs avg = pool_attrs(3, 1, 0, false);
    avg.set("dilation", std::vector<int64_t>{1});
    avg.set("count_boundary", true);
    EXPECT_NO_THROW(lower("avg_pool2d", avg, {x}, {Shape{d, {1, 3, 3, 4}}}));
  }
  Attrs max = pool_attrs(3, 1, 0, false);
  max.set("dilation", std::vector<int64_t>{1});
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64})
    EXPECT_NO_THROW(lower("max_pool2d", max, {Shape{d, {1, 5, 5, 4}}}, {Shape{d, {1, 3, 3, 4}}}));
}

TEST_F(GpuConv, VariantsWithoutAKernelAreRefusedNamingTheOp) {
  const Shape xi{DType::kInt32, {1, 5, 5, 4}}, fi{DType::kInt32, {3, 3, 4, 8}}, yi{DType::kInt32, {1, 3, 3, 8}};
  EXPECT_MAXC_ERROR(lower("conv2d", conv_attrs(false, 1, 0, 1), {xi, fi}, {yi}), Code::kUnimplemented,
                    "op 'conv2d': no GPU kernel for dtype int32");
  Attrs other_layout = conv_attrs(true, 1, 0, 1);
  other_layout.set("input_layout", std::string("CHWN"));
  EXPECT_MAXC_ERROR(lower("conv2d", other_layout, {f32({8, 5, 5, 1}), f32({8, 8, 3, 3})}, {f32({8, 3, 3, 1})}),
                    Code::kUnimplemented, "op 'conv2d': no GPU kernel for input_layout \"CHWN\"");
  Attrs fused = conv_attrs(false, 1, 0, 1);
  fused.set("has_bias", false);
  fused.set("has_scale", false);
  fused.set("has_shift", false);
  fused.set("activation", std::string("gelu"));
  EXPECT_MAXC_ERROR(lower("fused_conv2d", fused, {f32({1, 5, 5, 4}), f32({3, 3, 4, 8})}, {f32({1, 3, 3, 8})}),
                    Code::kUnimplemented, "op 'fused_conv2d': no GPU kernel for activation 'gelu'");
  Attrs avg = pool_attrs(3, 1, 0, false);
  avg.set("dilation", std::vector<int64_t>{1});
  avg.set("count_boundary", true);
  const Shape i32_in{DType::kInt32, {1, 5, 5, 4}}, i32_out{DType::kInt32, {1, 3, 3, 4}};
  EXPECT_MAXC_ERROR(lower("avg_pool2d", avg, {i32_in}, {i32_out}), Code::kUnimplemented,
                    "op 'avg_pool2d': no GPU kernel for dtype int32");
  EXPECT_MAXC_ERROR(lower("max_pool2d", avg, {Shape{DType::kBool, {1, 5, 5, 4}}}, {Shape{DType::kBool, {1, 3, 3, 4}}}),
                    Code::kUnimplemented, "op 'max_pool2d': no GPU kernel for dtype bool");
}

}  // namespace
}  // namespace maxc::testing
