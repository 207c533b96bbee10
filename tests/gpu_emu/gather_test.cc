// gather.cu under the emulator, against the CPU's gather (kernels/cpu/gather.h): negative
// indices count from the end, and an index out of range gives a zero row and raises the
// bad_index flag the host reads back.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/gather.cu"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/gather.h"

namespace maxc::gpu_emu::testing {
namespace {

template <class W, class I>
void check_gather(int64_t outer, int64_t axis_size, int64_t inner, const std::vector<I>& indices, bool expect_bad) {
  std::vector<W> x(outer * axis_size * inner);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<W>(i * 40503u + 7);
  const int64_t count = static_cast<int64_t>(indices.size());
  std::vector<W> y(outer * count * inner, W(1)), want(y.size());
  g::i32 bad = 0;
  emulate_launch(2, 64, g::gather<W, I>, x.data(), indices.data(), y.data(), outer, axis_size, inner, count, &bad);
  const int64_t cpu_bad = cpu::gather(x.data(), indices.data(), dtype_of<I>(), want.data(), outer, axis_size, count,
                                      inner * static_cast<int64_t>(sizeof(W)));
  const std::string what = "gather [" + std::to_string(outer) + "," + std::to_string(axis_size) + "," +
                           std::to_string(inner) + "] by " + std::to_string(count) + " indices";
  expect_same_bits(y, want, what);
  EXPECT_EQ(bad, expect_bad ? 1 : 0) << what;
  EXPECT_EQ(cpu_bad > 0, expect_bad) << what;
}

template <class W>
void check_index_types() {
  check_gather<W, g::i64>(3, 10, 7, {0, 9, -1, -10, 4, 4}, false);
  check_gather<W, g::i32>(2, 5, 1, {4, -5, 2, 0, -3, 1, 1, 3}, false);
  check_gather<W, g::i32>(1, 100, 3, {99, 0, 50}, false);
  check_gather<W, g::i64>(2, 6, 5, {2, 6, -7, 5}, true);  // 6 and -7 are out of [-6, 6)
}

TEST(EmulatedGather, EveryWordWidthAndIndexType) {
  check_index_types<g::u8>();
  check_index_types<g::u16>();
  check_index_types<g::u32>();
  check_index_types<g::u64>();
}

TEST(EmulatedGather, NoIndices) { check_gather<g::u32, g::i64>(3, 4, 2, {}, false); }

}  // namespace
}  // namespace maxc::gpu_emu::testing
