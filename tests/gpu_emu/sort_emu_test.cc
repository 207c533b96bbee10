// sort.cu (top_k, argsort) under the emulator, against the CPU kernels (kernels/cpu/sort.h).
// The network sorts by the CPU's total order, so values and positions must be the same bits:
// ties (the lower position first), NaNs (above every number), -0 tying +0, every dtype the
// CPU sorts, axes that are not the last, and lines in shared memory and in global scratch.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/sort.cu"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/sort.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc::gpu_emu::testing {
namespace {

std::vector<int64_t> as_int64(const std::vector<g::i64>& v) { return std::vector<int64_t>(v.begin(), v.end()); }

// The global scratch a grid of `grid` blocks needs, sized as the lowering sizes it.
template <class S>
std::vector<unsigned char> gpu_scratch(int64_t n, unsigned grid) {
  const int64_t bytes = g::sort_block_scratch_bytes(g::sort_padded_length(n), gpu::sort_key_bytes(dtype_of<S>()));
  return std::vector<unsigned char>(static_cast<size_t>(bytes) * grid);
}

void* or_null(std::vector<unsigned char>& v) { return v.empty() ? nullptr : v.data(); }

struct Launch {
  unsigned grid = 2, block = 64;
};

template <class S>
void check_top_k(const std::vector<S>& x, int64_t outer, int64_t n, int64_t inner, int64_t k, Launch launch,
                 const std::string& what) {
  const size_t out = static_cast<size_t>(outer * k * inner);
  std::vector<S> got(out), want(out);
  std::vector<g::i64> got_index(out, -1);
  std::vector<int64_t> want_index(out, -2);
  std::vector<unsigned char> scratch = gpu_scratch<S>(n, launch.grid);
  emulate_launch(dim3(launch.grid), dim3(launch.block), g::sort_lines<S>, x.data(), got.data(), got_index.data(),
                 outer, n, inner, k, 1, or_null(scratch));
  std::vector<unsigned char> cpu_scratch(cpu::sort_scratch_bytes(dtype_of<S>(), n, 1));
  cpu::find_top_k_kernel(dtype_of<S>())(x.data(), want.data(), want_index.data(), outer, n, inner, k,
                                        cpu_scratch.data(), 1);
  const std::string label = "top_k [" + std::to_string(outer) + ", " + std::to_string(n) + ", " +
                            std::to_string(inner) + "] k = " + std::to_string(k) + " " + what;
  expect_same_bits(got, want, label);
  EXPECT_EQ(as_int64(got_index), want_index) << label;
}

template <class S>
void check_argsort(const std::vector<S>& x, Launch launch, const std::string& what) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<unsigned char> scratch = gpu_scratch<S>(n, launch.grid);
  std::vector<unsigned char> cpu_scratch(cpu::sort_scratch_bytes(dtype_of<S>(), n, 1));
  for (bool ascending : {true, false}) {
    std::vector<g::i64> got(x.size(), -1);
    std::vector<int64_t> want(x.size(), -2);
    emulate_launch(dim3(launch.grid), dim3(launch.block), g::sort_lines<S>, x.data(), static_cast<S*>(nullptr),
                   got.data(), int64_t{1}, n, int64_t{1}, n, ascending ? 0 : 1, or_null(scratch));
    cpu::find_argsort_kernel(dtype_of<S>())(x.data(), want.data(), n, ascending, cpu_scratch.data());
    EXPECT_EQ(as_int64(got), want) << "argsort of " << n << (ascending ? " ascending " : " descending ") << what;
  }
}

// Few distinct values, so most elements tie with others.
template <class S>
std::vector<S> with_ties(size_t n, unsigned seed) {
  std::vector<S> v = random_values<S>(n, -4, 4, seed);
  for (S& s : v) s = from_double<S>(std::floor(to_double(s)));
  return v;
}

template <class S>
void check_dtype(unsigned seed) {
  const std::vector<S> rows = with_ties<S>(3 * 50, seed);
  for (int64_t k : {1, 5, 50}) check_top_k(rows, 3, 50, 1, k, {}, "last axis with ties");
  // The axis in the middle: 66 lines over 2 blocks, each with a stride of 33.
  const std::vector<S> columns = with_ties<S>(2 * 7 * 33, seed + 1);
  for (int64_t k : {1, 3, 7}) check_top_k(columns, 2, 7, 33, k, {}, "middle axis");
  check_top_k(with_ties<S>(4 * 9, seed + 2), 1, 4, 9, 2, {}, "first axis");
  check_top_k(random_values<S>(5, -4, 4, seed + 3), 5, 1, 1, 1, {}, "n = 1");
  check_argsort(with_ties<S>(77, seed + 4), {}, "with ties");
  check_argsort(random_values<S>(1, -1, 1, seed + 5), {}, "of one");
}

TEST(EmulatedSort, SameValuesAndPositionsAsTheCpuForEveryDtype) {
  EXPECT_EQ(gpu::sort_key_bytes(DType::kFloat32), int64_t{sizeof(g::ComputeOf<float>::type)});
  EXPECT_EQ(gpu::sort_key_bytes(DType::kFloat16), int64_t{sizeof(g::ComputeOf<g::half>::type)});
  EXPECT_EQ(gpu::sort_key_bytes(DType::kBFloat16), int64_t{sizeof(g::ComputeOf<g::bfloat16>::type)});
  EXPECT_EQ(gpu::sort_key_bytes(DType::kFloat64), int64_t{sizeof(g::ComputeOf<double>::type)});
  EXPECT_EQ(gpu::sort_key_bytes(DType::kInt32), int64_t{sizeof(g::ComputeOf<g::i32>::type)});
  EXPECT_EQ(gpu::sort_key_bytes(DType::kInt64), int64_t{sizeof(g::ComputeOf<g::i64>::type)});
  check_dtype<float>(1);
  check_dtype<double>(11);
  check_dtype<g::half>(21);
  check_dtype<g::bfloat16>(31);
  check_dtype<g::i32>(41);
  check_dtype<g::i64>(51);
}

TEST(EmulatedSort, IntegerExtremesOrderExactly) {
  const std::vector<g::i64> x = {0, std::numeric_limits<int64_t>::max(), -1, std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max() - 1, 0, 1};
  check_top_k(x, 1, 7, 1, 7, {}, "int64 extremes");
  check_argsort(x, {}, "int64 extremes");
  const std::vector<g::i32> y = {2147483647, -2147483647 - 1, 0, -1, 2147483647};
  check_top_k(y, 1, 5, 1, 5, {}, "int32 extremes");
  check_argsort(y, {}, "int32 extremes");
}

TEST(EmulatedSort, NansSignedZerosAndInfinities) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows of 8: NaNs among numbers, -0 before +0 and after, infinities tying, a row of NaNs.
  const std::vector<float> x = {1,   nan,  2,    nan, -inf, 0.f,  -0.f, 5,   -0.f, 0.f,  -0.f, 3,   -3,   0.f,
                                -0.f, -0.f, inf, -inf, inf,  nan,  -inf, 1,   inf,  -inf, nan,  nan, nan,  nan,
                                nan,  nan,  nan, -nan, 7,    7,    -inf, 7,   nan,  7,    7,    -inf};
  for (int64_t k : {1, 3, 8}) {
    check_top_k(x, 5, 8, 1, k, {}, "special rows");
    check_top_k(x, 1, 8, 5, k, {}, "special columns");
  }
  check_argsort(x, {}, "special values");
}

TEST(EmulatedSort, HalfNansKeepTheCpusBits) {
  // Quiet, signalling and negative NaNs of float16 and bfloat16, among numbers.
  std::vector<g::half> h(6);
  std::vector<g::bfloat16> b(6);
  const uint16_t half_bits[] = {0x3c00, 0x7e00, 0x7c01, 0xfe00, 0x8000, 0x0000};
  const uint16_t bf16_bits[] = {0x3f80, 0x7fc0, 0x7f81, 0xffc0, 0x8000, 0x0000};
  for (size_t i = 0; i < 6; ++i) {
    h[i].bits = half_bits[i];
    b[i].bits = bf16_bits[i];
  }
  check_top_k(h, 1, 6, 1, 6, {}, "float16 NaNs");
  check_top_k(b, 1, 6, 1, 6, {}, "bfloat16 NaNs");
  check_argsort(h, {}, "float16 NaNs");
  check_argsort(b, {}, "bfloat16 NaNs");
}

TEST(EmulatedSort, LinesLongerThanTheBlockInSharedMemory) {
  // 32 threads for 600 elements; 2048 is the longest line shared memory takes.
  check_top_k(with_ties<float>(2 * 600, 60), 2, 600, 1, 600, {1, 32}, "one block of a warp");
  check_top_k(with_ties<g::i32>(g::kSortSharedLength, 61), 1, g::kSortSharedLength, 1, 10, {1, 256},
              "the whole of shared memory");
  check_argsort(with_ties<g::half>(1000, 62), {1, 256}, "of 1000");
}

TEST(EmulatedSort, LinesLongerThanSharedMemorySortInEachBlocksScratch) {
  constexpr int64_t n = g::kSortSharedLength + 1;
  ASSERT_GT(gpu_scratch<float>(n, 1).size(), 0u) << "a line of " << n << " needs the global scratch";
  // Three lines over two blocks: block 0 sorts two lines in turn in its own slice.
  check_top_k(with_ties<float>(3 * n, 70), 3, n, 1, 4, {2, 256}, "in scratch");
  check_top_k(with_ties<double>(2 * 3000, 71), 1, 3000, 2, 3000, {2, 256}, "double columns in scratch");
  check_top_k(random_values<g::i64>(2500, -1e6, 1e6, 72), 1, 2500, 1, 1, {1, 256}, "int64 in scratch");
  check_argsort(with_ties<g::bfloat16>(3000, 73), {1, 256}, "in scratch");
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
