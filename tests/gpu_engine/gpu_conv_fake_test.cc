// conv2d, fused_conv2d, max_pool2d and avg_pool2d of the GPU engine
// (engine/lower_gpu/conv.cc) on the fake CUDA driver (gpu/fake_cuda.h), with real NVRTC
// compiles: each node is one launch of its catalog kernel (the fake reports its mangled name)
// with its extents in ConvParams / PoolParams and its operands on device memory. The
// emulations here are the kernels' loops on the host, written with the same index helpers
// (kernels/cuda/common/conv_params.cuh), and the references are the CPU kernels, so the
// values check the plumbing (which pointer is which operand, what the params say), not the
// kernels' numerics (tests/gpu_emu/conv_emu_test.cc runs the real sources for that).
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
#include "gpu_engine/engine_on_fake.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/pool.h"
#include "kernels/cuda/common/conv_params.cuh"

namespace maxc::testing {
namespace {

// conv2d_tiled's sum and epilogue on the host, reading its parameters as the kernel does.
void emulate_conv(void** args) {
  const auto *x = arg<const float*>(args, 0), *f = arg<const float*>(args, 1), *bias = arg<const float*>(args, 2),
             *scale = arg<const float*>(args, 3), *shift = arg<const float*>(args, 4),
             *residual = arg<const float*>(args, 5);
  auto* out = arg<float*>(args, 6);
  const auto p = arg<gpu::ConvParams>(args, 7);
  for (int64_t m = 0; m < p.m; ++m) {
    const gpu::ConvPixel px = gpu::conv_pixel(p, m);
    for (int64_t c = 0; c < p.out_c; ++c) {
      const int64_t g = c / p.fg;
      double acc = 0;
      for (int64_t t = 0; t < p.k; ++t)
        if (const int64_t at = gpu::conv_x_tap(p, px, g, t); at >= 0)
          acc += x[at] * f[gpu::conv_filter_offset(p, t, c)];
      const int64_t o = gpu::conv_out_offset(p, m, c);
      if (bias) acc += bias[c];
      if (scale) acc *= scale[c];
      if (shift) acc += shift[c];
      if (residual) acc += residual[o];
      out[o] = static_cast<float>(p.relu && acc < 0 ? 0 : acc);
    }
  }
}

class GpuConvOnFake : public EngineOnFake {
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
TEST_F(GpuConvOnFake, Conv2dIsOneLaunchWithItsExtentsAndOperands) {
  constexpr int64_t N = 2, C = 4, H = 5, F = 16, K = 3;
  Graph g("conv");
  ValueId x = g.add_input("x", f32_on_gpu({N, C, H, H}));
  ValueId f = g.add_input("f", f32_on_gpu({F, C / 2, K, K}));
  ValueId b = g.add_input("b", f32_on_gpu({F}));
  g.set_outputs({{"y", g.add_op("conv2d", {x, f, b}, conv_attrs(true, 2, 1, 2))[0]}});
  int launches = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("conv2d_tiledIf"), std::string::npos) << name;
    const auto p = arg<gpu::ConvParams>(args, 7);
    EXPECT_EQ(p.batch, N);
    EXPECT_EQ(p.in_c, C);
    EXPECT_EQ(p.out_c, F);
    EXPECT_EQ(p.out_h, 3);
    EXPECT_EQ(p.out_w, 3);
    EXPECT_EQ(p.stride_h, 2);
    EXPECT_EQ(p.pad_top, 1);
    EXPECT_EQ(p.pad_left, 1);
    EXPECT_EQ(p.groups, 2);
    EXPECT_EQ(p.channels_first, 1);
    EXPECT_EQ(p.filter_fcrs, 1);
    EXPECT_EQ(p.relu, 0);
    EXPECT_EQ(p.m, N * 3 * 3);
    EXPECT_EQ(p.k, K * K * C / 2);
    for (size_t i : {0, 1, 2, 6}) EXPECT_TRUE(in_device_memory(arg<const void*>(args, i))) << "argument " << i;
    for (size_t i : {3, 4, 5}) EXPECT_EQ(arg<const void*>(args, i), nullptr) << "argument " << i;
    emulate_conv(args);
    ++launches;
  };
  const std::vector<float> xv = ramp(N * C * H * H, 0.3f), fv = ramp(F * C / 2 * K * K, -0.2f, 0.5f), bv = ramp(F, 1);
  const std::vector<float> y = run(g, {{xv, {N, C, H, H}}, {fv, {F, C / 2, K, K}}, {bv, {F}}});
  EXPECT_EQ(launches, 1);
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
TEST_F(GpuConvOnFake, ConvBatchNormReluIsOneFusedLaunch) {
  constexpr int64_t H = 6, C = 3, F = 8;
  Graph g("conv_bn_relu");
  ValueId x = g.add_input("x", f32_on_gpu({1, H, H, C}));
  ValueId f = g.add_input("f", f32_on_gpu({3, 3, C, F}));
  ValueId scale = g.add_input("scale", f32_on_gpu({F}));
  ValueId shift = g.add_input("shift", f32_on_gpu({F}));
  ValueId y = g.add_op("conv2d", {x, f}, conv_attrs(false, 1, 1, 1))[0];
  y = g.add_op("relu", {g.add_op("add", {g.add_op("mul", {y, scale})[0], shift})[0]})[0];
  g.set_outputs({{"y", y}});
  int launches = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("conv2d_tiledIf"), std::string::npos) << name;
    const auto p = arg<gpu::ConvParams>(args, 7);
    EXPECT_EQ(p.relu, 1);
    EXPECT_EQ(p.channels_first, 0);
    EXPECT_EQ(arg<const void*>(args, 2), nullptr) << "no bias";
    for (size_t i : {3, 4}) EXPECT_TRUE(in_device_memory(arg<const void*>(args, i))) << "argument " << i;
    EXPECT_EQ(arg<const void*>(args, 5), nullptr) << "no residual";
    emulate_conv(args);
    ++launches;
  };
  const std::vector<float> xv = ramp(H * H * C, 0.4f, -1), fv = ramp(9 * C * F, -0.3f, 0.6f), sv = ramp(F, 0.5f, -1),
                           hv = ramp(F, 0.2f, -0.3f);
  const std::vector<float> out = run(g, {{xv, {1, H, H, C}}, {fv, {3, 3, C, F}}, {sv, {F}}, {hv, {F}}});
  const auto& nodes = model_->compiled()->program().nodes;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].op, "fused_conv2d");
  EXPECT_EQ(launches, 1);
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
TEST_F(GpuConvOnFake, DepthwiseConvTakesTheDirectKernel) {
  constexpr int64_t H = 5, C = 6;
  Graph g("depthwise");
  ValueId x = g.add_input("x", f32_on_gpu({1, H, H, C}));
  ValueId f = g.add_input("f", f32_on_gpu({3, 3, 1, C}));
  g.set_outputs({{"y", g.add_op("conv2d", {x, f}, conv_attrs(false, 2, 1, C))[0]}});
  int launches = 0;
  fake().on_launch = [&](const std::string& name, void** args) {
    ASSERT_NE(name.find("conv2d_directIf"), std::string::npos) << name;
    const auto p = arg<gpu::ConvParams>(args, 7);
    EXPECT_EQ(p.groups, C);
    EXPECT_EQ(p.fg, 1);
    EXPECT_EQ(p.cg, 1);
    EXPECT_EQ(p.out_h, 3);
    emulate_conv(args);
    ++launches;
  };
  const std::vector<float> xv = ramp(H * H * C, 0.3f, -1), fv = ramp(9 * C, -0.2f, 0.5f);
  const std::vector<float> y = run(g, {{xv, {1, H, H, C}}, {fv, {3, 3, 1, C}}});
  EXPECT_EQ(launches, 1);
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

cpu::Pool2dShape cpu_pool(const gpu::PoolParams& p) {
  cpu::Pool2dShape s;
  s.batch = p.batch, s.in_h = p.in_h, s.in_w = p.in_w, s.channels = p.channels, s.out_h = p.out_h, s.out_w = p.out_w;
  s.kernel_h = p.kernel_h, s.kernel_w = p.kernel_w, s.stride_h = p.stride_h, s.stride_w = p.stride_w;
  s.dilation_h = p.dilation_h, s.dilation_w = p.dilation_w, s.pad_h = p.pad_h, s.pad_w = p.pad_w;
  return s;
}

// max_pool2d 3x3 / 2 with padding 1 and ceil_mode over [1, 6, 6, 3], then avg_pool2d 2x2 / 2
// without counting the padding: two launches, each with the extents the compiler inferred.
TEST_F(GpuConvOnFake, PoolsAreOneLaunchEachWithTheirWindows) {
  Graph g("pools");
  ValueId x = g.add_input("x", f32_on_gpu({1, 6, 6, 3}));
  ValueId m = g.add_op("max_pool2d", {x}, pool_attrs(3, 2, 1, true))[0];
  Attrs avg = pool_attrs(2, 2, 1, false);
  avg.set("count_boundary", false);
  g.set_outputs({{"y", g.add_op("avg_pool2d", {m}, avg)[0]}});
  std::vector<std::string> kernels;
  fake().on_launch = [&](const std::string& name, void** args) {
    const auto p = arg<gpu::PoolParams>(args, 2);
    const auto* in = arg<const float*>(args, 0);
    auto* out = arg<float*>(args, 1);
    EXPECT_TRUE(in_device_memory(in));
    EXPECT_TRUE(in_device_memory(out));
    if (named(name, "max_pool2dIf")) {
      kernels.push_back("max");
      EXPECT_EQ(p.out_h, 4) << "ceil((6 + 2 - 3) / 2) + 1";
      EXPECT_EQ(p.pad_h, 1);
      EXPECT_EQ(p.count_boundary, 0);
      cpu::max_pool2d(DType::kFloat32, cpu_pool(p), in, out);
    } else {
      ASSERT_TRUE(named(name, "avg_pool2dIf")) << name;
      kernels.push_back("avg");
      EXPECT_EQ(p.out_h, 3);
      EXPECT_EQ(p.kernel_w, 2);
      EXPECT_EQ(p.count_boundary, 0);
      cpu::avg_pool2d(DType::kFloat32, cpu_pool(p), false, in, out);
    }
  };
  const std::vector<float> xv = ramp(108, 0.7f, -2);
  const std::vector<float> y = run(g, {{xv, {1, 6, 6, 3}}});
  EXPECT_EQ(kernels, (std::vector<std::string>{"max", "avg"}));
  cpu::Pool2dShape ms{1, 6, 6, 3, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1}, as{1, 4, 4, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1};
  std::vector<float> mid(48), want(27);
  cpu::max_pool2d(DType::kFloat32, ms, xv.data(), mid.data());
  cpu::avg_pool2d(DType::kFloat32, as, false, mid.data(), want.data());
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

Shape f32(std::vector<int64_t> dims) { return Shape{DType::kFloat32, std::move(dims)}; }

TEST_F(GpuConvOnFake, HalfFloat64AndIntegerVariantsCompile) {
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

TEST_F(GpuConvOnFake, VariantsWithoutAKernelAreRefusedNamingTheOp) {
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
