// scan.cu (cumsum) and arg_reduce.cu (argmax, argmin) under the emulator, against the CPU
// kernels (kernels/cpu/scan.h, reduce.h). Both walk each line in the CPU's order and type,
// so the results must be the same bits, NaN and tie rules included.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/arg_reduce.cu"
#include "kernels/cuda/scan.cu"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/scan.h"

namespace maxc::gpu_emu::testing {
namespace {

template <class S>
void check_cumsum(const std::vector<S>& x, int64_t outer, int64_t n, int64_t inner, unsigned grid) {
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      std::vector<S> got(x.size()), want(x.size());
      emulate_launch(dim3(grid), dim3(64), g::cumsum_lines<S>, x.data(), got.data(), outer, n, inner,
                     exclusive ? 1 : 0, reverse ? 1 : 0);
      cpu::find_cumsum_kernel(dtype_of<S>())(x.data(), want.data(), outer, n, inner, exclusive, reverse);
      expect_same_bits(got, want,
                       "cumsum [" + std::to_string(outer) + ", " + std::to_string(n) + ", " + std::to_string(inner) +
                           "]" + (exclusive ? " exclusive" : "") + (reverse ? " reverse" : ""));
    }
}

template <class S>
void check_cumsum_shapes(unsigned seed) {
  check_cumsum(random_values<S>(3 * 50, -4, 4, seed), 3, 50, 1, 2);       // the last axis
  check_cumsum(random_values<S>(2 * 7 * 33, -4, 4, seed + 1), 2, 7, 33, 1);  // an inner axis; lines > threads
  check_cumsum(random_values<S>(5, -4, 4, seed + 2), 1, 5, 1, 1);
}

TEST(EmulatedCumsum, SameBitsAsTheCpuKernel) {
  check_cumsum_shapes<float>(1);
  check_cumsum_shapes<double>(2);
  check_cumsum_shapes<g::half>(3);
  check_cumsum_shapes<g::bfloat16>(4);
  check_cumsum_shapes<g::i32>(5);
  check_cumsum_shapes<g::i64>(6);
}

TEST(EmulatedCumsum, IntegersWrapAsTheCpuDoes) {
  const std::vector<g::i32> x = {2147483647, 1, -5, -2147483647 - 1, -1};
  check_cumsum(x, 1, 5, 1, 1);
}

TEST(EmulatedCumsum, InPlace) {
  std::vector<float> x = random_values<float>(4 * 9, -2, 2, 7), want(x.size());
  cpu::find_cumsum_kernel(DType::kFloat32)(x.data(), want.data(), 4, 9, 1, false, true);
  emulate_launch(dim3(1), dim3(32), g::cumsum_lines<float>, x.data(), x.data(), 4, 9, 1, 0, 1);
  expect_same_bits(x, want, "in place");
}

template <class S>
void check_arg_reduce(const std::vector<S>& x, int64_t outer, int64_t n, int64_t inner, const std::string& what) {
  const size_t lines = static_cast<size_t>(outer * inner);
  // The kernel writes g::i64 (long long), the CPU int64_t: the same 64 bits.
  std::vector<g::i64> got(lines, -1);
  std::vector<int64_t> want(lines, -2);
  auto as_int64 = [](const std::vector<g::i64>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  emulate_launch(dim3(2), dim3(32), g::arg_reduce_lines<g::ArgMax, S>, x.data(), got.data(), outer, n, inner);
  cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMax, dtype_of<S>())(x.data(), want.data(), outer, n, inner);
  EXPECT_EQ(as_int64(got), want) << "argmax " << what;
  emulate_launch(dim3(2), dim3(32), g::arg_reduce_lines<g::ArgMin, S>, x.data(), got.data(), outer, n, inner);
  cpu::find_arg_reduce_kernel(cpu::ArgReduceOp::kArgMin, dtype_of<S>())(x.data(), want.data(), outer, n, inner);
  EXPECT_EQ(as_int64(got), want) << "argmin " << what;
}

template <class S>
void check_arg_reduce_shapes(unsigned seed) {
  // Few distinct values, so ties are common: the first index must win.
  auto few = [](std::vector<S> v) {
    for (S& s : v) s = from_double<S>(std::floor(to_double(s)));
    return v;
  };
  check_arg_reduce(few(random_values<S>(3 * 40, -3, 3, seed)), 3, 40, 1, "rows");
  check_arg_reduce(few(random_values<S>(2 * 6 * 45, -3, 3, seed + 1)), 2, 6, 45, "columns");
  check_arg_reduce(few(random_values<S>(7, -3, 3, seed + 2)), 7, 1, 1, "n = 1");
}

TEST(EmulatedArgReduce, SameIndicesAsTheCpuKernelWithTies) {
  check_arg_reduce_shapes<float>(10);
  check_arg_reduce_shapes<double>(11);
  check_arg_reduce_shapes<g::half>(12);
  check_arg_reduce_shapes<g::bfloat16>(13);
  check_arg_reduce_shapes<g::i32>(14);
  check_arg_reduce_shapes<g::i64>(15);
}

TEST(EmulatedArgReduce, NanSignedZerosAndInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows of 6: a NaN after the max, two NaNs, -0 before +0, all -inf, +inf ties, NaN first.
  const std::vector<float> x = {1, 5, 2, nan, 5, 0,     nan, 1,   nan, 2,   3,   4,  -0.f, 0.f, -1, 1, 0.f, -0.f,
                                -inf, -inf, -inf, -inf, -inf, -inf, inf, 1, inf, -inf, 2, -inf, nan, 9, 9, 9, 9, 9};
  check_arg_reduce(x, 6, 6, 1, "special rows");
  check_arg_reduce(x, 1, 6, 6, "special columns");
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
