// fill.cu under the emulator: every element of y, and nothing past it, holds the raw word.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/fill.cu"

#include <gtest/gtest.h>

#include <vector>

#include "gpu_emu/emu_test_util.h"

namespace maxc::gpu_emu::testing {
namespace {

template <class W>
void check_fill(int64_t n, W value, dim3 grid, dim3 block) {
  std::vector<W> y(n + 3, W(0));
  emulate_launch(grid, block, g::fill<W>, y.data(), n, value);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], value) << i;
  for (int64_t i = n; i < n + 3; ++i) ASSERT_EQ(y[i], W(0)) << "past the end: " << i;
}

TEST(EmulatedFill, EveryWordWidth) {
  check_fill<g::u8>(1000, 0xab, 2, 256);      // more elements than threads
  check_fill<g::u16>(77, 0x3c00, 4, 64);      // float16 1.0
  check_fill<g::u32>(5, 0x7fc00000u, 2, 32);  // fewer elements than threads: a float32 NaN
  check_fill<g::u64>(300, 0x8000000000000000ull, 1, 128);
  check_fill<g::u32>(0, 1u, 1, 32);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
