// transpose.cu under the emulator: copy_strided over permuted, sliced and broadcast views,
// and transpose_tiles over batches of planes whose sides are not multiples of the 32x32
// tile, for every word width, against plain index loops (the kernels only move words, so
// the bits must match).
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/transpose.cu"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "gpu_emu/emu_test_util.h"

namespace maxc::gpu_emu::testing {
namespace {

// Distinct words: element i of the source holds i (in as many bits as W has).
template <class W>
std::vector<W> iota_words(int64_t n) {
  std::vector<W> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<W>(i * 2654435761u + 1);
  return v;
}

g::Shape shape_of(const std::vector<int64_t>& dims) {
  g::Shape s{};
  s.rank = static_cast<g::i32>(dims.size());
  s.numel = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    s.dims[d] = dims[d];
    s.numel *= dims[d];
  }
  return s;
}

// y[i] = x[offset + sum(index_d * strides_d)], walking y's dims row-major.
template <class W>
std::vector<W> strided_reference(const std::vector<W>& x, const g::Shape& shape, const std::vector<int64_t>& strides,
                                 int64_t offset) {
  std::vector<W> y(shape.numel);
  for (int64_t i = 0; i < shape.numel; ++i) {
    int64_t rest = i, at = offset;
    for (int d = shape.rank - 1; d >= 0; --d) {
      at += (rest % shape.dims[d]) * strides[d];
      rest /= shape.dims[d];
    }
    y[i] = x[at];
  }
  return y;
}

template <class W>
void check_copy_strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset,
                        int64_t source_size, const std::string& what) {
  const auto x = iota_words<W>(source_size);
  const g::Shape shape = shape_of(dims);
  g::Layout layout{};
  for (std::size_t d = 0; d < strides.size(); ++d) layout.strides[d] = strides[d];
  std::vector<W> y(shape.numel);
  emulate_launch(3, 128, g::copy_strided<W>, x.data() + offset, layout, y.data(), shape);
  expect_same_bits(y, strided_reference(x, shape, strides, offset), what + " (" + std::to_string(sizeof(W)) + " bytes)");
}

template <class W>
void check_views() {
  // [4, 5, 6] permuted to [6, 4, 5]
  check_copy_strided<W>({6, 4, 5}, {1, 30, 6}, 0, 120, "permute");
  // rows 1..3, columns 2..8 of a [5, 11] matrix
  check_copy_strided<W>({3, 7}, {11, 1}, 13, 55, "slice");
  // [7] broadcast to [3, 2, 7] (stride 0 dims)
  check_copy_strided<W>({3, 2, 7}, {0, 0, 1}, 0, 7, "broadcast");
  // every second element reversed: a negative stride
  check_copy_strided<W>({9}, {-2}, 18, 19, "negative stride");
  // rank 8, the most the kernels take
  check_copy_strided<W>({2, 1, 2, 3, 1, 2, 2, 3}, {1, 2, 2, 4, 12, 12, 24, 48}, 0, 144, "rank 8");
}

TEST(EmulatedCopyStrided, EveryWordWidth) {
  check_views<g::u8>();
  check_views<g::u16>();
  check_views<g::u32>();
  check_views<g::u64>();
}

TEST(EmulatedCopyStrided, DenseLayoutIgnoresStrides) {
  const auto x = iota_words<g::u32>(50);
  g::Layout layout{};
  layout.dense = 1;
  layout.strides[0] = 12345;  // must not be read
  std::vector<g::u32> y(50);
  emulate_launch(2, 32, g::copy_strided<g::u32>, x.data(), layout, y.data(), shape_of({5, 10}));
  expect_same_bits(y, x, "dense copy");
}

// The launch the lowering uses: (32, 8) threads, grid (ceil(cols / 32), ceil(rows / 32), batch).
template <class W>
void check_transpose(int64_t batch, int64_t rows, int64_t cols) {
  const auto x = iota_words<W>(batch * rows * cols);
  std::vector<W> y(x.size()), want(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) want[(b * cols + c) * rows + r] = x[(b * rows + r) * cols + c];
  const dim3 grid((cols + g::kTile - 1) / g::kTile, (rows + g::kTile - 1) / g::kTile, batch);
  emulate_launch(grid, dim3(g::kTile, g::kTileRows), g::transpose_tiles<W>, x.data(), y.data(), rows, cols);
  expect_same_bits(y, want, "transpose " + std::to_string(batch) + "x" + std::to_string(rows) + "x" +
                                std::to_string(cols) + " (" + std::to_string(sizeof(W)) + " bytes)");
}

TEST(EmulatedTransposeTiles, PartialTilesAndBatches) {
  check_transpose<g::u8>(2, 33, 70);
  check_transpose<g::u16>(1, 64, 32);
  check_transpose<g::u32>(3, 5, 41);
  check_transpose<g::u64>(2, 47, 1);
  check_transpose<g::u32>(1, 1, 100);
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
