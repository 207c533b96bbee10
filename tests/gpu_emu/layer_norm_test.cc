// layer_norm.cu under the emulator (layer_norm and the fused add_layer_norm), against the
// CPU's kernels (kernels/cpu/norm.h), which take the same arguments in the same order.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/layer_norm.cu"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/norm.h"

namespace maxc::gpu_emu::testing {
namespace {

struct Rows {
  int64_t rows, cols;
  dim3 grid, block;
};

std::string name(const char* what, const Rows& r) {
  return std::string(what) + " " + std::to_string(r.rows) + "x" + std::to_string(r.cols);
}

template <class S>
void check_layer_norm(const Rows& r, double mean, unsigned seed, bool in_place = false) {
  const auto x = random_values<S>(r.rows * r.cols, mean - 2, mean + 2, seed);
  const auto gamma = random_values<S>(r.cols, 0.5, 1.5, seed + 1), beta = random_values<S>(r.cols, -1, 1, seed + 2);
  std::vector<S> y = x, want(x.size());
  const S* in = in_place ? y.data() : x.data();
  emulate_launch(r.grid, r.block, g::layer_norm<S>, in, gamma.data(), beta.data(), y.data(), r.rows, r.cols, 1e-5);
  cpu::find_layer_norm_kernel(dtype_of<S>())(x.data(), gamma.data(), beta.data(), want.data(), r.rows, r.cols, 1e-5);
  expect_close(y, to_doubles(want), name(in_place ? "layer_norm in place" : "layer_norm", r));
}

template <class S>
void check_shapes(unsigned seed) {
  check_layer_norm<S>({6, 1000, 4, 256}, 0, seed);  // rows longer than the block, two per block
  check_layer_norm<S>({5, 77, 2, 64}, 0, seed + 3);  // rows shorter than the block, ragged warps
  check_layer_norm<S>({3, 1, 2, 32}, 0, seed + 6);   // one column: zero variance, y = beta
}

TEST(EmulatedLayerNorm, Float32) { check_shapes<float>(1); }
TEST(EmulatedLayerNorm, Float16) { check_shapes<g::half>(10); }
TEST(EmulatedLayerNorm, BFloat16) { check_shapes<g::bfloat16>(20); }
TEST(EmulatedLayerNorm, Float64) { check_shapes<double>(30); }

TEST(EmulatedLayerNorm, ALargeMeanKeepsItsPrecision) {
  check_layer_norm<float>({4, 500, 2, 128}, 3000, 40);
  check_layer_norm<double>({4, 500, 2, 128}, 1e6, 41);
}

TEST(EmulatedLayerNorm, InPlace) {
  check_layer_norm<float>({4, 600, 2, 256}, 0, 50, true);
  check_layer_norm<g::half>({4, 70, 3, 64}, 0, 51, true);
}

// residual_stride: cols (a residual per row) or 0 (one row for all); with_sum: the x +
// residual output is asked for; in_place: y is x's buffer.
template <class S>
void check_add_layer_norm(const Rows& r, int64_t residual_stride, bool with_sum, bool in_place, unsigned seed) {
  const auto x = random_values<S>(r.rows * r.cols, -2, 2, seed);
  const auto residual = random_values<S>(residual_stride ? r.rows * r.cols : r.cols, -2, 2, seed + 1);
  const auto gamma = random_values<S>(r.cols, 0.5, 1.5, seed + 2), beta = random_values<S>(r.cols, -1, 1, seed + 3);
  std::vector<S> y = x, sum(x.size()), want_y(x.size()), want_sum(x.size());
  const S* in = in_place ? y.data() : x.data();
  emulate_launch(r.grid, r.block, g::add_layer_norm<S>, in, residual.data(), residual_stride, gamma.data(),
                 beta.data(), y.data(), with_sum ? sum.data() : nullptr, r.rows, r.cols, 1e-5);
  cpu::find_add_layer_norm_kernel(dtype_of<S>())(x.data(), residual.data(), residual_stride, gamma.data(),
                                                   beta.data(), want_y.data(), want_sum.data(), r.rows, r.cols, 1e-5);
  const std::string what = name("add_layer_norm", r) + " stride " + std::to_string(residual_stride) +
                           (with_sum ? " with sum" : "") + (in_place ? " in place" : "");
  expect_close(y, to_doubles(want_y), what);
  if (with_sum) expect_same_bits(sum, want_sum, what + ": sum");
}

TEST(EmulatedAddLayerNorm, EveryResidualAndOutputArrangement) {
  for (int64_t stride : {int64_t{0}, int64_t{300}})
    for (bool with_sum : {false, true})
      for (bool in_place : {false, true}) {
        check_add_layer_norm<float>({5, 300, 2, 128}, stride, with_sum, in_place, 60);
        check_add_layer_norm<g::bfloat16>({5, 300, 2, 128}, stride, with_sum, in_place, 70);
      }
  check_add_layer_norm<g::half>({3, 1000, 2, 256}, 1000, true, false, 80);
  check_add_layer_norm<double>({3, 45, 2, 64}, 45, true, true, 90);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
