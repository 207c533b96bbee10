// matmul.cu under the emulator: C = act(A·B + bias) with the launch geometry the lowering
// uses (src/engine/lower_gpu/linalg.cc), against a float64 reference, for every activation
// of the catalog, bias shapes, transposed and batch-broadcast operands, and sizes that leave
// partial 16x16 tiles in every direction.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/matmul.cu"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"

namespace maxc::gpu_emu::testing {
namespace {

struct Problem {
  int64_t batch, m, n, k;
  bool a_shared = false, b_shared = false;  // batch stride 0: one operand for every batch
  bool b_transposed = false;
  int64_t bias_len = 0;  // 0, 1 or n
};

double act_copy(double x) { return x; }
double act_relu(double x) { return x < 0 ? 0 : x; }
double act_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double act_gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
double act_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double act_tanh(double x) { return std::tanh(x); }
double act_silu(double x) { return x / (1 + std::exp(-x)); }

template <class S>
std::vector<double> reference(const Problem& p, const std::vector<S>& a, const std::vector<S>& b,
                              const std::vector<S>& bias, double (*act)(double)) {
  std::vector<double> c(p.batch * p.m * p.n);
  for (int64_t q = 0; q < p.batch; ++q) {
    const S* ab = a.data() + (p.a_shared ? 0 : q * p.m * p.k);
    const S* bb = b.data() + (p.b_shared ? 0 : q * p.k * p.n);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < p.k; ++t)
          acc += to_double(ab[i * p.k + t]) * to_double(p.b_transposed ? bb[j * p.k + t] : bb[t * p.n + j]);
        if (p.bias_len > 0) acc += to_double(bias[p.bias_len == 1 ? 0 : j]);
        c[(q * p.m + i) * p.n + j] = act(acc);
      }
  }
  return c;
}

template <class S, class Act>
void check_matmul(const Problem& p, double (*act)(double), unsigned seed) {
  const auto a = random_values<S>((p.a_shared ? 1 : p.batch) * p.m * p.k, -1, 1, seed);
  const auto b = random_values<S>((p.b_shared ? 1 : p.batch) * p.k * p.n, -1, 1, seed + 1);
  const auto bias = random_values<S>(p.bias_len, -1, 1, seed + 2);
  std::vector<S> c(p.batch * p.m * p.n);
  constexpr unsigned tile = g::kMatmulTile;
  const dim3 grid(std::max<int64_t>((p.n + tile - 1) / tile, 1), std::max<int64_t>((p.m + tile - 1) / tile, 1), p.batch);
  emulate_launch(grid, dim3(tile, tile), g::matmul_tiled<S, Act>, a.data(), b.data(),
                 p.bias_len > 0 ? bias.data() : nullptr, c.data(), p.m, p.n, p.k, p.a_shared ? 0 : p.m * p.k,
                 p.b_shared ? 0 : p.k * p.n, p.b_transposed ? 1 : 0, p.bias_len);
  // k products of values in [-1, 1), summed in float: the error grows with k.
  Tolerance tol = tolerance_for<S>();
  tol.abs = std::max(tol.abs, 4e-7 * static_cast<double>(p.k));
  expect_close(c, reference(p, a, b, bias, act),
               "matmul " + std::to_string(p.batch) + "x" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                   std::to_string(p.k) + (p.b_transposed ? " (b transposed)" : "") + " bias " +
                   std::to_string(p.bias_len),
               tol);
}

template <class S>
void check_shapes(unsigned seed) {
  check_matmul<S, g::op::Copy>({1, 37, 29, 45}, act_copy, seed);               // partial tiles everywhere
  check_matmul<S, g::op::Copy>({2, 16, 32, 48, false, false, true, 32}, act_copy, seed + 3);  // whole tiles
  check_matmul<S, g::op::Copy>({3, 5, 19, 17, true, false, false, 19}, act_copy, seed + 6);    // a shared
  check_matmul<S, g::op::Copy>({2, 18, 3, 33, false, true, true, 1}, act_copy, seed + 9);      // b shared
  check_matmul<S, g::op::Copy>({1, 1, 1, 1}, act_copy, seed + 12);
}

TEST(EmulatedMatmul, Float32Shapes) { check_shapes<float>(1); }
TEST(EmulatedMatmul, Float16Shapes) { check_shapes<g::half>(100); }
TEST(EmulatedMatmul, BFloat16Shapes) { check_shapes<g::bfloat16>(200); }
TEST(EmulatedMatmul, Float64Shapes) { check_shapes<double>(300); }

TEST(EmulatedMatmul, EveryActivationAfterTheBias) {
  const Problem p{1, 20, 23, 18, false, false, false, 23};
  check_matmul<float, g::op::Relu>(p, act_relu, 400);
  check_matmul<float, g::op::GeluErf>(p, act_gelu, 410);
  check_matmul<float, g::op::GeluTanh>(p, act_gelu_tanh, 420);
  check_matmul<float, g::op::Sigmoid>(p, act_sigmoid, 430);
  check_matmul<float, g::op::Tanh>(p, act_tanh, 440);
  check_matmul<float, g::op::Silu>(p, act_silu, 450);
  check_matmul<g::half, g::op::GeluErf>(p, act_gelu, 460);
  check_matmul<g::bfloat16, g::op::Silu>(p, act_silu, 470);
}

TEST(EmulatedMatmul, AnEmptyInnerDimensionGivesTheBias) {
  check_matmul<float, g::op::Copy>({1, 3, 4, 0, false, false, false, 4}, act_copy, 500);
  check_matmul<float, g::op::Sigmoid>({2, 3, 4, 0}, act_sigmoid, 510);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
