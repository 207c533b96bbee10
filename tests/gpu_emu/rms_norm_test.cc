// rms_norm.cu under the emulator, against the CPU's kernel (kernels/cpu/norm.h): both
// weight offsets MAX uses (0, and 1 for Gemma-style weights), both multiply_before_cast
// modes, and rows on either side of the block size.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/rms_norm.cu"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/norm.h"

namespace maxc::gpu_emu::testing {
namespace {

template <class S>
void check_rms_norm(int64_t rows, int64_t cols, dim3 grid, dim3 block, double offset, bool before_cast,
                    unsigned seed, bool in_place = false) {
  const auto x = random_values<S>(rows * cols, -3, 3, seed);
  const auto weight = random_values<S>(cols, -1, 1, seed + 1);
  std::vector<S> y = x, want(x.size());
  emulate_launch(grid, block, g::rms_norm<S>, in_place ? y.data() : x.data(), weight.data(), y.data(), rows, cols,
                 1e-6, offset, before_cast ? 1 : 0);
  cpu::find_rms_norm_kernel(dtype_of<S>())(x.data(), weight.data(), want.data(), rows, cols, 1e-6, offset,
                                           before_cast);
  expect_close(y, to_doubles(want),
               "rms_norm " + std::to_string(rows) + "x" + std::to_string(cols) + " offset " + std::to_string(offset) +
                   (before_cast ? " multiply before cast" : "") + (in_place ? " in place" : ""));
}

template <class S>
void check_modes(unsigned seed) {
  for (double offset : {0.0, 1.0})
    for (bool before_cast : {false, true}) {
      check_rms_norm<S>(6, 900, 3, 256, offset, before_cast, seed);
      check_rms_norm<S>(5, 50, 2, 64, offset, before_cast, seed + 2);
    }
}

TEST(EmulatedRmsNorm, Float32) { check_modes<float>(1); }
TEST(EmulatedRmsNorm, Float16) { check_modes<g::half>(10); }
TEST(EmulatedRmsNorm, BFloat16) { check_modes<g::bfloat16>(20); }
TEST(EmulatedRmsNorm, Float64) { check_modes<double>(30); }

TEST(EmulatedRmsNorm, InPlaceAndOneColumn) {
  check_rms_norm<float>(4, 700, 2, 256, 0.0, true, 40, true);
  check_rms_norm<g::bfloat16>(4, 1, 2, 32, 1.0, false, 41);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
