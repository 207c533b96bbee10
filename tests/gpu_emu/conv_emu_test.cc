// conv.cu and pool.cu under the emulator, with the launch geometry of their lowering
// (src/engine/lower_gpu/conv.cc), against the CPU kernels (kernels/cpu/conv.h, pool.h) on
// shapes at the edges: padding (uneven too), stride 2, dilation 2, groups and depthwise,
// channel counts that leave partial 16-wide tiles, NCHW and NHWC with either filter layout,
// ceil_mode windows hanging into (or wholly in) the padding, count_boundary both ways, and a
// grid with fewer blocks than row tiles or elements, so blocks loop. Both conv kernels (the
// tiled implicit GEMM and the direct one the lowering picks for depthwise) run every case.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/conv.cu"
#include "kernels/cuda/pool.cu"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"

namespace maxc::gpu_emu::testing {
namespace {

// ---- conv2d -------------------------------------------------------------------------------

struct ConvCase {
  int64_t batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t groups = 1;
  bool nchw = false, fcrs = false, bias = true;

  std::string label() const {
    return "conv " + std::to_string(batch) + "x" + std::to_string(in_h) + "x" + std::to_string(in_w) + "x" +
           std::to_string(in_c) + " -> " + std::to_string(out_c) + " k" + std::to_string(kernel_h) + "x" +
           std::to_string(kernel_w) + " s" + std::to_string(stride_h) + " d" + std::to_string(dilation_h) + " g" +
           std::to_string(groups) + (nchw ? " NCHW" : " NHWC") + (fcrs ? " FCRS" : " RSCF");
  }
};

cpu::Conv2dShape cpu_shape(const ConvCase& c) {
  cpu::Conv2dShape s;
  s.batch = c.batch, s.in_h = c.in_h, s.in_w = c.in_w, s.in_c = c.in_c;
  s.kernel_h = c.kernel_h, s.kernel_w = c.kernel_w, s.out_c = c.out_c;
  s.out_h = (c.in_h + c.pad_top + c.pad_bottom - c.dilation_h * (c.kernel_h - 1) - 1) / c.stride_h + 1;
  s.out_w = (c.in_w + c.pad_left + c.pad_right - c.dilation_w * (c.kernel_w - 1) - 1) / c.stride_w + 1;
  s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dilation_h = c.dilation_h, s.dilation_w = c.dilation_w;
  s.pad_top = c.pad_top, s.pad_bottom = c.pad_bottom, s.pad_left = c.pad_left, s.pad_right = c.pad_right;
  s.groups = c.groups;
  s.channels_first = c.nchw;
  s.filter_fcrs = c.fcrs;
  return s;
}

// What the lowering packs (engine/lower_gpu/conv.cc's conv_params).
g::ConvParams gpu_params(const cpu::Conv2dShape& s, bool relu) {
  g::ConvParams p{};
  p.batch = s.batch, p.in_h = s.in_h, p.in_w = s.in_w, p.in_c = s.in_c;
  p.out_h = s.out_h, p.out_w = s.out_w, p.out_c = s.out_c;
  p.kernel_h = s.kernel_h, p.kernel_w = s.kernel_w;
  p.stride_h = s.stride_h, p.stride_w = s.stride_w, p.dilation_h = s.dilation_h, p.dilation_w = s.dilation_w;
  p.pad_top = s.pad_top, p.pad_left = s.pad_left;
  p.groups = s.groups;
  p.channels_first = s.channels_first;
  p.filter_fcrs = s.filter_fcrs;
  p.relu = relu;
  g::conv_params_finish(p);
  return p;
}

// The lowering's grid for conv2d_tiled, with grid.y capped at max_rows so that blocks loop
// over row tiles.
template <class S, class... Args>
void launch_tiled(const g::ConvParams& p, unsigned max_rows, Args... args) {
  const int64_t col_tiles = (p.fg + g::kConvTile - 1) / g::kConvTile;
  const int64_t row_tiles = (p.m + g::kConvTile - 1) / g::kConvTile;
  const dim3 grid(static_cast<unsigned>(p.groups * col_tiles),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, max_rows)));
  emulate_launch(grid, dim3(g::kConvTile, g::kConvTile), g::conv2d_tiled<S>, args..., p);
}

// conv2d_direct over two blocks, fewer threads than elements: they loop.
template <class S, class... Args>
void launch_direct(const g::ConvParams& p, Args... args) {
  emulate_launch(dim3(2), dim3(128), g::conv2d_direct<S>, args..., p);
}

template <class S>
void check_conv(const ConvCase& c, unsigned seed, unsigned max_rows = 3) {
  const cpu::Conv2dShape s = cpu_shape(c);
  const auto x = random_values<S>(s.in_elements(), -1, 1, seed);
  const auto f = random_values<S>(s.filter_elements(), -1, 1, seed + 1);
  const auto bias = random_values<S>(s.out_c, -1, 1, seed + 2);
  const S* b = c.bias ? bias.data() : nullptr;
  std::vector<S> got(s.out_elements()), want(s.out_elements());
  const cpu::Conv2d conv(s, dtype_of<S>(), c.bias, nullptr);
  std::vector<uint8_t> scratch(conv.scratch_bytes());
  conv.run(x.data(), f.data(), b, want.data(), scratch.data());
  Tolerance tol = tolerance_for<S>();
  const int64_t k = s.kernel_h * s.kernel_w * s.in_c / s.groups;
  tol.abs = std::max(tol.abs, (std::is_same_v<S, double> ? 1e-15 : 4e-7) * static_cast<double>(k));
  const S* none = nullptr;
  launch_tiled<S>(gpu_params(s, false), max_rows, x.data(), f.data(), b, none, none, none, got.data());
  expect_close(got, to_doubles(want), c.label() + " tiled", tol);
  std::fill(got.begin(), got.end(), S{});
  launch_direct<S>(gpu_params(s, false), x.data(), f.data(), b, none, none, none, got.data());
  expect_close(got, to_doubles(want), c.label() + " direct", tol);
}

std::vector<ConvCase> edge_cases() {
  std::vector<ConvCase> cases;
  // 3x3, padding 1, channels that leave partial tiles (k = 45, 21 output channels).
  cases.push_back({2, 7, 6, 5, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
  // stride 2, dilation 2, uneven padding, a non-square kernel.
  cases.push_back({1, 9, 8, 3, 17, 3, 2, 2, 2, 2, 2, 2, 0, 1, 3});
  // groups: 4 groups of 2 -> 3 channels; depthwise 6 -> 6 with a 3x3 window, stride 2.
  cases.push_back({1, 6, 5, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4});
  cases.push_back({2, 7, 7, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6});
  // 1x1: a plain matmul, on the CPU too.
  cases.push_back({1, 5, 5, 19, 18, 1, 1});
  return cases;
}

template <class S>
void check_every_layout(unsigned seed) {
  for (const ConvCase& base : edge_cases())
    for (bool nchw : {false, true})
      for (bool fcrs : {false, true}) {
        ConvCase c = base;
        c.nchw = nchw;
        c.fcrs = fcrs;
        c.bias = (seed + nchw + fcrs) % 2 == 0;
        check_conv<S>(c, seed += 10);
      }
}

TEST(EmulatedConv, Float32EveryLayoutAndEdge) { check_every_layout<float>(1); }
TEST(EmulatedConv, Float64EveryLayoutAndEdge) { check_every_layout<double>(1000); }
TEST(EmulatedConv, Float16AndBFloat16) {
  for (const ConvCase& c : edge_cases()) {
    check_conv<g::half>(c, 2000);
    ConvCase nchw = c;
    nchw.nchw = nchw.fcrs = true;
    check_conv<g::bfloat16>(nchw, 3000);
  }
}

TEST(EmulatedConv, BlocksLoopOverRowTilesBeyondTheGrid) {
  check_conv<float>({3, 9, 9, 4, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 4000, 1);  // 243 pixels, 16 row tiles, 1 block row
}

TEST(EmulatedConv, NoInputChannelsGiveTheBias) {
  check_conv<float>({1, 3, 3, 0, 5, 2, 2}, 4100);
}

// fused_conv2d's epilogue against the CPU's (oneDNN post-ops or its own loop): relu((conv +
// bias) * scale + shift), and a residual added before the ReLU (the CPU adds residuals only in
// channel blocks, so that part of the reference is added here).
TEST(EmulatedConv, FusedEpilogueMatchesTheCpu) {
  for (bool nchw : {false, true})
    for (bool residual : {false, true}) {
      ConvCase c{2, 6, 7, 5, 19, 3, 3, 2, 1, 1, 2, 1, 1, 2, 2};
      c.nchw = c.fcrs = nchw;
      const cpu::Conv2dShape s = cpu_shape(c);
      const auto x = random_values<float>(s.in_elements(), -1, 1, 5000);
      const auto f = random_values<float>(s.filter_elements(), -1, 1, 5001);
      const auto bias = random_values<float>(s.out_c, -1, 1, 5002);
      const auto scale = random_values<float>(s.out_c, -2, 2, 5003);
      const auto shift = random_values<float>(s.out_c, -1, 1, 5004);
      const auto res = random_values<float>(s.out_elements(), -1, 1, 5005);
      std::vector<float> want(s.out_elements());
      const cpu::Conv2d conv(s, DType::kFloat32, true, nullptr, false, cpu::ConvEpilogue{true, true, !residual, false});
      std::vector<uint8_t> scratch(conv.scratch_bytes());
      conv.run(x.data(), f.data(), bias.data(), want.data(), scratch.data(), false, scale.data(), shift.data());
      if (residual)
        for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(want[i] + res[i], 0.0f);
      // The residual may be the output's own buffer, as an in-place step would have it.
      for (bool direct : {false, true}) {
        std::vector<float> got = residual ? res : std::vector<float>(s.out_elements());
        const float* r = residual ? got.data() : nullptr;
        const g::ConvParams p = gpu_params(s, true);
        if (direct) launch_direct<float>(p, x.data(), f.data(), bias.data(), scale.data(), shift.data(), r, got.data());
        else launch_tiled<float>(p, 2, x.data(), f.data(), bias.data(), scale.data(), shift.data(), r, got.data());
        const std::string what = c.label() + (residual ? " + residual" : "") + (direct ? " direct" : " tiled");
        expect_close(got, to_doubles(want), what, {2e-5, 1e-5});
      }
    }
}

// ---- pools --------------------------------------------------------------------------------

struct PoolCase {
  int64_t batch, in_h, in_w, channels, kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, pad_h = 0, pad_w = 0;
  bool ceil_mode = false;
};

// The compiler's window count (graph/ops/conv.cc): ceil_mode rounds the division up.
int64_t windows(int64_t in, int64_t pad, int64_t kernel, int64_t dilation, int64_t stride, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return (ceil_mode ? span + stride - 1 : span) / stride + 1;
}

cpu::Pool2dShape pool_shape(const PoolCase& c) {
  cpu::Pool2dShape s;
  s.batch = c.batch, s.in_h = c.in_h, s.in_w = c.in_w, s.channels = c.channels;
  s.out_h = windows(c.in_h, c.pad_h, c.kernel_h, c.dilation_h, c.stride_h, c.ceil_mode);
  s.out_w = windows(c.in_w, c.pad_w, c.kernel_w, c.dilation_w, c.stride_w, c.ceil_mode);
  s.kernel_h = c.kernel_h, s.kernel_w = c.kernel_w, s.stride_h = c.stride_h, s.stride_w = c.stride_w;
  s.dilation_h = c.dilation_h, s.dilation_w = c.dilation_w, s.pad_h = c.pad_h, s.pad_w = c.pad_w;
  return s;
}

g::PoolParams pool_params(const cpu::Pool2dShape& s, bool count_boundary) {
  return g::PoolParams{s.batch,    s.in_h,     s.in_w,       s.channels,   s.out_h, s.out_w, s.kernel_h, s.kernel_w,
                       s.stride_h, s.stride_w, s.dilation_h, s.dilation_w, s.pad_h, s.pad_w, count_boundary ? 1 : 0};
}

std::vector<PoolCase> pool_cases() {
  return {
      {2, 7, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1},                // ResNet's stem pool, channels not a multiple of 8
      {1, 8, 9, 3, 2, 3, 2, 3, 2, 1, 1, 1},                // dilation, uneven kernel and stride
      {1, 7, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, true},          // ceil_mode: the last window hangs into the padding
      {1, 5, 5, 3, 2, 2, 3, 3, 1, 1, 1, 1, true},          // ceil_mode: the last window is padding only
      {1, 6, 4, 16, 6, 4},                                 // global pooling
  };
}

// max_pool2d, or avg_pool2d with count_boundary as given, on the GPU and the CPU.
template <class S>
void check_pool(const PoolCase& c, bool max, bool count_boundary, unsigned seed) {
  const cpu::Pool2dShape s = pool_shape(c);
  const auto x = random_values<S>(s.batch * s.in_h * s.in_w * s.channels, -100, 100, seed);
  const int64_t total = s.batch * s.out_h * s.out_w * s.channels;
  std::vector<S> got(total), want(total);
  const dim3 grid(std::max<int64_t>(std::min<int64_t>((total + 255) / 256, 2), 1));  // fewer blocks than elements
  if (max) {
    cpu::max_pool2d(dtype_of<S>(), s, x.data(), want.data());
    emulate_launch(grid, dim3(256), g::max_pool2d<S>, x.data(), got.data(), pool_params(s, false));
  } else {
    cpu::avg_pool2d(dtype_of<S>(), s, count_boundary, x.data(), want.data());
    emulate_launch(grid, dim3(256), g::avg_pool2d<S>, x.data(), got.data(), pool_params(s, count_boundary));
  }
  const std::string what = std::string(max ? "max" : "avg") + (count_boundary ? " counting padding" : "") + " pool " +
                           std::to_string(c.in_h) + "x" + std::to_string(c.in_w) + " k" + std::to_string(c.kernel_h) +
                           (c.ceil_mode ? " ceil" : "");
  // Same taps in the same order as the CPU: the same bits.
  expect_close(got, to_doubles(want), what, Tolerance{0, 0});
}

template <class S>
void check_pools(unsigned seed, bool avg) {
  for (const PoolCase& c : pool_cases()) {
    check_pool<S>(c, true, false, seed++);
    if (!avg) continue;
    check_pool<S>(c, false, false, seed++);
    check_pool<S>(c, false, true, seed++);
  }
}

TEST(EmulatedPool, Float32) { check_pools<float>(1, true); }
TEST(EmulatedPool, Float16) { check_pools<g::half>(100, true); }
TEST(EmulatedPool, BFloat16) { check_pools<g::bfloat16>(200, true); }
TEST(EmulatedPool, Float64) { check_pools<double>(300, true); }
TEST(EmulatedPool, IntegersMaxOnly) {
  check_pools<g::i8>(400, false);
  check_pools<g::u8>(500, false);
  check_pools<g::i32>(600, false);
  check_pools<g::i64>(700, false);
  check_pools<g::u64>(800, false);
}

// A window of padding only: the lowest value for max, zero for avg, as on the CPU.
TEST(EmulatedPool, AWindowOfPaddingOnly) {
  const cpu::Pool2dShape s = pool_shape({1, 5, 5, 1, 2, 2, 3, 3, 1, 1, 1, 1, true});
  ASSERT_EQ(s.out_h, 3);
  std::vector<float> x(25, 1.0f), y(9);
  std::vector<g::i8> xi(25, g::i8(5)), yi(9);
  emulate_launch(dim3(1), dim3(256), g::max_pool2d<float>, x.data(), y.data(), pool_params(s, false));
  emulate_launch(dim3(1), dim3(256), g::max_pool2d<g::i8>, xi.data(), yi.data(), pool_params(s, false));
  EXPECT_EQ(y[8], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(yi[8], std::numeric_limits<int8_t>::lowest());
  emulate_launch(dim3(1), dim3(256), g::avg_pool2d<float>, x.data(), y.data(), pool_params(s, true));
  EXPECT_EQ(y[8], 0.0f);
}

TEST(EmulatedPool, MaxPropagatesNaN) {
  const cpu::Pool2dShape s = pool_shape({1, 4, 4, 2, 2, 2, 2, 2});
  std::vector<float> x(32, 1.0f), y(8);
  x[2] = std::numeric_limits<float>::quiet_NaN();  // pixel (0, 1), channel 0: window (0, 0)
  emulate_launch(dim3(1), dim3(256), g::max_pool2d<float>, x.data(), y.data(), pool_params(s, false));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 1.0f);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
