// nonzero.cu under the emulator, against the CPU kernels (kernels/cpu/nonzero.h,
// masked_scatter.h, copy_repeat.h): the same positions in the same order, across several
// chunks of the block's scan, with the error word set exactly when the counts disagree.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/nonzero.cu"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/copy_repeat.h"
#include "kernels/cpu/masked_scatter.h"
#include "kernels/cpu/nonzero.h"

namespace maxc::gpu_emu::testing {
namespace {

g::Shape shape_of(const std::vector<int64_t>& dims) {
  g::Shape s{};
  s.rank = static_cast<int32_t>(dims.size());
  s.numel = 1;
  for (size_t d = 0; d < dims.size(); ++d) s.numel *= (s.dims[d] = dims[d]);
  return s;
}

// Every third element zero, and some negative zeros, over `n` float32 elements.
std::vector<float> sparse_floats(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = i % 3 == 0 ? (i % 2 ? -0.f : 0.f) : float(i % 7) - 3.f;
  return x;
}

TEST(EmulatedNonzero, SamePositionsAsTheCpuAcrossChunks) {
  const cpu::ZeroTest test = *cpu::zero_test_of(DType::kFloat32);
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{5}, std::vector<int64_t>{3, 250}, std::vector<int64_t>{2, 3, 97}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const std::vector<float> x = sparse_floats(n);
    const int64_t count = cpu::count_nonzero(x.data(), n, test);
    g::i64 got_count = -1;
    emulate_launch(dim3(1), dim3(256), g::count_nonzero_block<uint32_t>, reinterpret_cast<const uint32_t*>(x.data()), g::i64{n},
                   static_cast<uint32_t>(test.mask), &got_count);
    EXPECT_EQ(got_count, count);

    const auto rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> want(static_cast<size_t>(count * rank));
    std::vector<g::i64> got(want.size(), -1);
    cpu::nonzero_indices(x.data(), dims, test, want.data(), count);
    int32_t error = 0;
    emulate_launch(dim3(1), dim3(256), g::nonzero_block<uint32_t>, reinterpret_cast<const uint32_t*>(x.data()),
                   shape_of(dims), static_cast<uint32_t>(test.mask), got.data(), g::i64{count}, &error);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
    EXPECT_EQ(error, 0);

    // A capacity the count does not meet: the first positions still land, and the word is set.
    std::vector<g::i64> short_out(static_cast<size_t>((count - 1) * rank));
    emulate_launch(dim3(1), dim3(256), g::nonzero_block<uint32_t>, reinterpret_cast<const uint32_t*>(x.data()),
                   shape_of(dims), static_cast<uint32_t>(test.mask), short_out.data(), g::i64{count - 1}, &error);
    EXPECT_EQ(error, 1);
    EXPECT_TRUE(std::equal(short_out.begin(), short_out.end(), want.begin()));
  }
}

TEST(EmulatedMaskedScatter, SameResultAsTheCpuWithABroadcastMask) {
  const std::vector<int64_t> dims = {3, 300};
  std::vector<uint8_t> mask(300);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7) % 5 < 2;  // a row, broadcast over the 3 rows
  const std::vector<float> input = sparse_floats(900);
  std::vector<float> updates(300);
  for (size_t i = 0; i < updates.size(); ++i) updates[i] = 100.f + float(i);
  const std::vector<int64_t> strides = {0, 1};
  std::vector<float> want(900), got(900);
  const int64_t taken =
      cpu::masked_scatter(input.data(), mask.data(), updates.data(), want.data(), dims, strides, 4, 300);
  g::Layout layout{};
  layout.strides[0] = 0;
  layout.strides[1] = 1;
  int32_t error = 0;
  emulate_launch(dim3(1), dim3(256), g::masked_scatter_block<uint32_t>, reinterpret_cast<const uint32_t*>(input.data()),
                 mask.data(), layout, reinterpret_cast<const uint32_t*>(updates.data()),
                 reinterpret_cast<uint32_t*>(got.data()), shape_of(dims), g::i64{300}, &error);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), 900 * sizeof(float)), 0);
  EXPECT_EQ(taken, 360) << "the case runs out of updates";
  EXPECT_EQ(error, taken) << "the error word holds the positions the mask holds at";
}

TEST(EmulatedCountRepeats, SameTotalAsTheCpu) {
  const std::vector<g::i64> counts = {3, -2, 0, 5, 1};
  g::i64 got = -1;
  emulate_launch(dim3(1), dim3(256), g::count_repeats_one<g::i64>, counts.data(), g::i64{5}, g::i64{5}, &got);
  EXPECT_EQ(got, cpu::repeat_total(counts.data(), DType::kInt64, 5, 5));
  const std::vector<int32_t> one = {4};
  emulate_launch(dim3(1), dim3(256), g::count_repeats_one<int32_t>, one.data(), g::i64{1}, g::i64{6}, &got);
  EXPECT_EQ(got, 24);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
