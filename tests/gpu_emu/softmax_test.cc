// softmax.cu under the emulator, against the CPU's softmax (kernels/cpu/softmax.h).
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/softmax.cu"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/softmax.h"

namespace maxc::gpu_emu::testing {
namespace {

// The CPU kernel's answer for the same stored input, as doubles.
template <class S>
std::vector<double> cpu_softmax(const std::vector<S>& x, int64_t rows, int64_t cols, bool log) {
  std::vector<S> y(x.size());
  cpu::find_softmax_kernel(dtype_of<S>(), log)(x.data(), y.data(), rows, cols, 1);
  return to_doubles(y);
}

template <class S, bool kLog>
void check_softmax(const std::vector<S>& x, int64_t rows, int64_t cols, dim3 grid, dim3 block) {
  std::vector<S> y(x.size());
  emulate_launch(grid, block, g::softmax_rows<S, kLog>, x.data(), y.data(), rows, cols, g::i64{1});
  expect_close(y, cpu_softmax(x, rows, cols, kLog),
               std::string(kLog ? "logsoftmax " : "softmax ") + std::to_string(rows) + "x" + std::to_string(cols));
}

template <class S>
void check_both(int64_t rows, int64_t cols, dim3 grid, dim3 block, unsigned seed) {
  const std::vector<S> x = random_values<S>(rows * cols, -8, 8, seed);
  check_softmax<S, false>(x, rows, cols, grid, block);
  check_softmax<S, true>(x, rows, cols, grid, block);
}

TEST(EmulatedSoftmax, Float32RowsShorterAndLongerThanTheBlock) {
  check_both<float>(5, 37, 2, 64, 1);   // cols < block, not a multiple of the warp
  check_both<float>(3, 1000, 2, 256, 2);  // each thread takes several elements
  check_both<float>(4, 1, 3, 32, 3);     // one column: all ones (zeros for log)
}

TEST(EmulatedSoftmax, OtherFloatTypes) {
  check_both<g::half>(3, 300, 2, 128, 4);
  check_both<g::bfloat16>(3, 300, 2, 128, 5);
  check_both<double>(3, 300, 2, 128, 6);
}

TEST(EmulatedSoftmax, ANanMakesItsRowNan) {
  std::vector<float> x = random_values<float>(4 * 70, -3, 3, 7);
  x[70 + 45] = std::numeric_limits<float>::quiet_NaN();  // row 1, not in the first warp's lanes
  check_softmax<float, false>(x, 4, 70, 2, 64);
  check_softmax<float, true>(x, 4, 70, 2, 64);
}

// Over a middle axis: [outer, cols, inner], each row's elements inner apart.
TEST(EmulatedSoftmax, AMiddleAxisReadsItsRowsStrided) {
  const int64_t outer = 3, cols = 70, inner = 5;
  const std::vector<float> x = random_values<float>(outer * cols * inner, -6, 6, 8);
  for (bool log : {false, true}) {
    std::vector<float> y(x.size()), want(x.size());
    cpu::find_softmax_kernel(DType::kFloat32, log)(x.data(), want.data(), outer, cols, inner);
    if (log)
      emulate_launch(dim3(4), dim3(64), g::softmax_rows<float, true>, x.data(), y.data(), outer * inner, cols, inner);
    else
      emulate_launch(dim3(4), dim3(64), g::softmax_rows<float, false>, x.data(), y.data(), outer * inner, cols, inner);
    expect_close(y, to_doubles(want), log ? "logsoftmax over axis 1" : "softmax over axis 1");
  }
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
