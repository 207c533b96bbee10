// reduce.cu under the emulator (reduce_rows for the last axis, reduce_columns for the
// others), against the CPU's reductions (kernels/cpu/reduce.h) for every catalog dtype.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/reduce.cu"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/reduce.h"

namespace maxc::gpu_emu::testing {
namespace {

template <template <class> class R>
constexpr cpu::ReduceOp cpu_op() {
  if constexpr (std::is_same_v<R<float>, g::Sum<float>>) return cpu::ReduceOp::kSum;
  else if constexpr (std::is_same_v<R<float>, g::Mean<float>>) return cpu::ReduceOp::kMean;
  else if constexpr (std::is_same_v<R<float>, g::Max<float>>) return cpu::ReduceOp::kMax;
  else return cpu::ReduceOp::kMin;
}

// x is [outer, n, inner]; the GPU picks reduce_rows when inner == 1, as the lowering does.
template <template <class> class R, class S>
void check_reduce(const std::vector<S>& x, int64_t outer, int64_t n, int64_t inner, dim3 grid, dim3 block) {
  std::vector<S> y(outer * inner), want(outer * inner);
  if (inner == 1) {
    emulate_launch(grid, block, g::reduce_rows<R<S>, S>, x.data(), y.data(), outer, n);
  } else {
    emulate_launch(grid, block, g::reduce_columns<R<S>, S>, x.data(), y.data(), outer, n, inner);
  }
  cpu::find_reduce_kernel(cpu_op<R>(), dtype_of<S>())(x.data(), want.data(), outer, n, inner);
  // Sums of n values in [0, 1) in another order: float's error grows with n.
  Tolerance tol = tolerance_for<S>();
  tol.abs *= static_cast<double>(n);
  expect_close(y, to_doubles(want), std::string("[") + std::to_string(outer) + "," + std::to_string(n) + "," +
                                        std::to_string(inner) + "]", tol);
}

template <template <class> class R, class S>
void check_shapes(unsigned seed) {
  const double hi = std::is_integral_v<S> ? 1000 : 1;
  const auto x = random_values<S>(4 * 1000 * 3, std::is_integral_v<S> ? -hi : 0, hi, seed);
  check_reduce<R>(x, 12, 1000, 1, 5, 256);  // rows longer than the block, several per block
  check_reduce<R>(x, 7, 45, 1, 3, 64);      // rows shorter than the block, not a warp multiple
  check_reduce<R>(x, 4, 1000, 3, 2, 64);    // columns: 12 of them, fewer than the threads
  check_reduce<R>(x, 2, 7, 300, 2, 128);    // columns: 600, more than the threads
  check_reduce<R>(x, 4, 1, 1, 2, 32);       // one element per row
}

template <class S>
void check_all_reductions(unsigned seed) {
  check_shapes<g::Sum, S>(seed);
  check_shapes<g::Mean, S>(seed + 1);
  check_shapes<g::Max, S>(seed + 2);
  check_shapes<g::Min, S>(seed + 3);
}

TEST(EmulatedReduce, Float32) { check_all_reductions<float>(10); }
TEST(EmulatedReduce, Float16) { check_all_reductions<g::half>(20); }
TEST(EmulatedReduce, BFloat16) { check_all_reductions<g::bfloat16>(30); }
TEST(EmulatedReduce, Float64) { check_all_reductions<double>(40); }
TEST(EmulatedReduce, Int32) { check_all_reductions<g::i32>(50); }
TEST(EmulatedReduce, Int64) { check_all_reductions<g::i64>(60); }

TEST(EmulatedReduce, IntegerSumsWrapAndMeansTruncate) {
  const g::i64 big = std::numeric_limits<g::i64>::max();
  const std::vector<g::i64> x = {big, 1, -7, 2, 5, 0, -3, 0};  // rows of 2: wraps, -5/2, 5/2, -3/2
  check_reduce<g::Sum>(x, 4, 2, 1, 1, 32);
  check_reduce<g::Mean>(x, 4, 2, 1, 1, 32);
  check_reduce<g::Sum>(x, 1, 4, 2, 1, 32);
}

TEST(EmulatedReduce, MaxAndMinPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = random_values<float>(3 * 300, -1, 1, 70);
  x[0] = nan;        // row 0: first element, lane 0
  x[300 + 299] = nan;  // row 1: last element, the last warp's
  for (auto check : {check_reduce<g::Max, float>, check_reduce<g::Min, float>, check_reduce<g::Sum, float>}) {
    check(x, 3, 300, 1, 2, 256);
    check(x, 1, 300, 3, 1, 64);  // as columns: 3 of them, two hold a NaN
  }
}

TEST(EmulatedReduce, MeanOfAnEmptyAxis) {
  const std::vector<float> none;
  std::vector<float> y(3);
  emulate_launch(1, 64, g::reduce_rows<g::Mean<float>, float>, none.data(), y.data(), 3, 0);
  for (float v : y) EXPECT_TRUE(std::isnan(v));
  std::vector<g::i32> yi(3, 7);
  const std::vector<g::i32> nonei;
  emulate_launch(1, 64, g::reduce_columns<g::Mean<g::i32>, g::i32>, nonei.data(), yi.data(), 1, 0, 3);
  EXPECT_EQ(yi, std::vector<g::i32>({0, 0, 0}));
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
