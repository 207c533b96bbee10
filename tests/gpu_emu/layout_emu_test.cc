// The layout and indexing kernels (layout.cu, gather_nd.cu, scatter.cu) under the emulator,
// against the CPU's kernels (kernels/cpu: copy_concat, pad, band_part, range, matmul_outer,
// copy_repeat, gather, scatter) on the same inputs, with the arguments built the way
// engine/lower_gpu/layout.cc and indexing.cc build them. Moves must give the same bits;
// scatter's reductions too, since the kernels apply repeated indices in the CPU's order.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/gather_nd.cu"
#include "kernels/cuda/layout.cu"
#include "kernels/cuda/scatter.cu"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/band_part.h"
#include "kernels/cpu/copy_concat.h"
#include "kernels/cpu/copy_repeat.h"
#include "kernels/cpu/gather.h"
#include "kernels/cpu/matmul_outer.h"
#include "kernels/cpu/pad.h"
#include "kernels/cpu/range.h"
#include "kernels/cpu/scatter.h"

namespace maxc::gpu_emu::testing {
namespace {

using Dims = std::vector<int64_t>;

// A small grid, so the grid-stride loops take several turns.
const dim3 kGrid(3), kBlock(64);

g::Shape shape_of(const Dims& dims) {
  g::Shape s{};
  s.rank = static_cast<g::i32>(dims.size());
  s.numel = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    s.dims[d] = dims[d];
    s.numel *= dims[d];
  }
  return s;
}

g::Layout rows_of(int64_t row, bool dense) {
  g::Layout l{};
  l.strides[0] = row;
  l.strides[1] = 1;
  l.dense = dense;
  return l;
}

template <class W>
std::vector<W> words(size_t n, unsigned seed) {
  std::vector<W> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<W>(seed * 2654435761u + i * 40503u);
  return v;
}

// ---- concat and split: copy_between over windows --------------------------------------------------

// Parts of [outer, extent_i, inner] concatenated along the middle axis, then split back.
template <class W>
void check_concat_split(int64_t outer, const Dims& extents, int64_t inner) {
  int64_t total = 0;
  for (int64_t e : extents) total += e;
  std::vector<std::vector<W>> parts;
  std::vector<const void*> ptrs;
  Dims row_bytes;
  for (size_t i = 0; i < extents.size(); ++i) {
    parts.push_back(words<W>(static_cast<size_t>(outer * extents[i] * inner), static_cast<unsigned>(i + 1)));
    ptrs.push_back(parts.back().data());
    row_bytes.push_back(extents[i] * inner * static_cast<int64_t>(sizeof(W)));
  }
  std::vector<W> want(static_cast<size_t>(outer * total * inner)), got(want.size());
  cpu::concat_rows(ptrs, row_bytes, outer, want.data());
  int64_t start = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    const g::Shape s = shape_of({outer, extents[i] * inner});
    emulate_launch(kGrid, kBlock, g::copy_between<W>, parts[i].data(), rows_of(extents[i] * inner, true),
                   got.data() + start * inner, rows_of(total * inner, outer == 1 || extents[i] == total), s);
    start += extents[i];
  }
  expect_same_bits(got, want, "concat");

  start = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    std::vector<W> back(parts[i].size());
    const g::Shape s = shape_of({outer, extents[i] * inner});
    emulate_launch(kGrid, kBlock, g::copy_between<W>, got.data() + start * inner,
                   rows_of(total * inner, outer == 1 || extents[i] == total), back.data(),
                   rows_of(extents[i] * inner, true), s);
    expect_same_bits(back, parts[i], "split part " + std::to_string(i));
    start += extents[i];
  }
}

TEST(EmulatedLayout, ConcatAndSplitMatchTheCpu) {
  check_concat_split<g::u32>(3, {2, 5, 1}, 7);
  check_concat_split<g::u8>(4, {3, 1}, 5);
  check_concat_split<g::u16>(1, {4, 4}, 3);  // one row: every window is dense
  check_concat_split<g::u64>(5, {1, 1, 1}, 1);  // stack of three
}

// ---- pad ---------------------------------------------------------------------------------------

template <class W>
void check_pad(const Dims& in, const Dims& before, const Dims& after, W fill) {
  Dims out;
  for (size_t d = 0; d < in.size(); ++d) out.push_back(in[d] + before[d] + after[d]);
  const g::Shape so = shape_of(out), si = shape_of(in);
  const std::vector<W> x = words<W>(static_cast<size_t>(si.numel), 9);
  std::vector<W> want(static_cast<size_t>(so.numel)), got(want.size());
  cpu::pad_constant(x.data(), want.data(), sizeof(W), in, before, out, static_cast<uint64_t>(fill));
  g::PadGeometry geometry{};
  for (size_t d = 0; d < in.size(); ++d) {
    geometry.before[d] = before[d];
    geometry.in_dims[d] = in[d];
  }
  emulate_launch(kGrid, kBlock, g::pad_constant<W>, x.data(), geometry, got.data(), so, fill);
  expect_same_bits(got, want, "pad");
}

TEST(EmulatedLayout, PadConstantMatchesTheCpu) {
  check_pad<g::u32>({3, 4}, {1, 0}, {2, 3}, 0x40f00000u);
  check_pad<g::u16>({2, 3, 5}, {0, 2, 1}, {1, 0, 1}, 0x3c00);
  check_pad<g::u8>({7}, {3}, {4}, 0xff);
  check_pad<g::u64>({2, 0, 2}, {1, 1, 0}, {0, 1, 1}, 7);  // an empty input: all fill
}

// ---- band_part ---------------------------------------------------------------------------------

TEST(EmulatedLayout, BandPartMatchesTheCpu) {
  const int64_t batch = 2, m = 5, n = 7;
  const std::vector<float> x = random_values<float>(batch * m * n, -4, 4, 3);
  for (int64_t lower : {-1, 0, 2})
    for (int64_t upper : {-1, 0, 3, 10})
      for (bool exclude : {false, true}) {
        std::vector<float> want(x.size()), got(x.size());
        cpu::band_part(x.data(), want.data(), 4, batch, m, n, lower, upper, exclude);
        emulate_launch(kGrid, kBlock, g::band_part<g::u32>, reinterpret_cast<const g::u32*>(x.data()),
                       reinterpret_cast<g::u32*>(got.data()), batch * m, m, n, lower, upper, exclude ? 1 : 0);
        expect_same_bits(got, want,
                         "band_part " + std::to_string(lower) + " " + std::to_string(upper) + " " + std::to_string(exclude));
      }
  std::vector<float> in_place = x, want(x.size());
  cpu::band_part(x.data(), want.data(), 4, batch, m, n, 1, 1, false);
  emulate_launch(kGrid, kBlock, g::band_part<g::u32>, reinterpret_cast<const g::u32*>(in_place.data()),
                 reinterpret_cast<g::u32*>(in_place.data()), batch * m, m, n, int64_t{1}, int64_t{1}, 0);
  expect_same_bits(in_place, want, "band_part in place");
}

// ---- range, outer ------------------------------------------------------------------------------

template <class S>
void check_range(double start, double step, int64_t n) {
  const S s = from_double<S>(start), d = from_double<S>(step);
  std::vector<S> want(static_cast<size_t>(n)), got(want.size());
  ASSERT_TRUE(cpu::range_fill(dtype_of<S>(), &s, &d, want.data(), n));
  emulate_launch(kGrid, kBlock, g::range_fill<S>, &s, &d, got.data(), n);
  expect_close(got, to_doubles(want), "range", tolerance_for<S>());
}

TEST(EmulatedLayout, RangeMatchesTheCpu) {
  check_range<float>(-3.25, 0.125, 300);
  check_range<g::half>(1, 0.5, 200);
  check_range<g::bfloat16>(-2, 0.25, 100);
  check_range<double>(1e9, -1e-3, 257);
  check_range<g::i32>(-100, 7, 300);
  check_range<g::i64>(5, -3, 130);
  check_range<g::i8>(-128, 3, 200);  // wraps, as on the CPU
  check_range<g::u16>(65000, 11, 100);
}

template <class S>
void check_outer(int64_t na, int64_t nb) {
  const std::vector<S> a = random_values<S>(na, -50, 50, 1), b = random_values<S>(nb, -50, 50, 2);
  std::vector<S> want(static_cast<size_t>(na * nb)), got(want.size());
  cpu::outer(dtype_of<S>(), a.data(), na, b.data(), nb, want.data());
  emulate_launch(kGrid, kBlock, g::outer<S>, a.data(), b.data(), got.data(), na, nb);
  expect_same_bits(got, want, "outer");
}

TEST(EmulatedLayout, OuterMatchesTheCpu) {
  check_outer<float>(13, 29);
  check_outer<g::half>(7, 40);
  check_outer<g::bfloat16>(9, 9);
  check_outer<g::i32>(20, 11);
  check_outer<g::i8>(16, 16);  // wraps
  check_outer<double>(1, 50);
}

// ---- repeat_interleave -------------------------------------------------------------------------

template <class I>
void check_repeat(const std::vector<I>& counts, int64_t outer, int64_t d, int64_t inner, int64_t out_len) {
  const std::vector<g::u32> x = words<g::u32>(static_cast<size_t>(outer * d * inner), 4);
  const int64_t num_counts = static_cast<int64_t>(counts.size());
  std::vector<g::u32> want(static_cast<size_t>(outer * out_len * inner)), got(want.size(), 0xdeadbeef);
  cpu::repeat_interleave(x.data(), counts.data(), dtype_of<I>(), num_counts, want.data(), outer, d, out_len,
                         inner * 4);
  std::vector<g::i64> starts(static_cast<size_t>(d + 1), -1);
  emulate_launch(dim3(1), dim3(1), g::repeat_starts<I>, counts.data(), num_counts, d, out_len, starts.data());
  emulate_launch(kGrid, kBlock, g::repeat_rows<g::u32>, x.data(), starts.data(), got.data(), outer, d, out_len, inner);
  expect_same_bits(got, want, "repeat_interleave");
}

TEST(EmulatedLayout, RepeatInterleaveMatchesTheCpu) {
  check_repeat<g::i64>({2, 0, 3, 1}, 3, 4, 5, 6);
  check_repeat<g::i32>({3}, 2, 5, 1, 15);                 // one count for every slice
  check_repeat<g::i64>({1, -2, 2}, 1, 3, 4, 3);           // a negative count counts as 0
  check_repeat<g::i32>({4, 4}, 2, 2, 3, 5);               // more than out_len: cut
  check_repeat<g::i64>({1, 1}, 2, 2, 2, 4);               // fewer than out_len: zeros after
}

// ---- gather_nd ---------------------------------------------------------------------------------

TEST(EmulatedIndexing, GatherNdMatchesTheCpuAndFlagsBadTuples) {
  // x [batch 2, 3, 4, slice 5], tuples of k = 2 into [3, 4], 6 per batch.
  const int64_t batch = 2, per_batch = 6, slice = 5;
  const Dims indexed = {3, 4};
  const std::vector<g::u32> x = words<g::u32>(static_cast<size_t>(batch * 12 * slice), 5);
  std::vector<g::i64> idx = {0, 0, 2, 3, -1, -4, 1, 2, 2, 0, 0, 3, 1, 1, -3, 2, 2, 2, 0, 1, 1, 0, 2, 3};
  g::IndexedDims dims{};
  dims.k = 2;
  dims.dims[0] = 3;
  dims.dims[1] = 4;
  std::vector<g::u32> want(static_cast<size_t>(batch * per_batch * slice)), got(want.size());
  EXPECT_EQ(cpu::gather_nd(x.data(), idx.data(), DType::kInt64, want.data(), batch, indexed, per_batch, slice * 4), 0);
  g::i32 bad = 0;
  emulate_launch(kGrid, kBlock, g::gather_nd<g::u32, g::i64>, x.data(), idx.data(), got.data(), batch, per_batch,
                 dims, slice, &bad);
  expect_same_bits(got, want, "gather_nd");
  EXPECT_EQ(bad, 0);

  idx[7] = 4;  // tuple 3's second index is past its dim of 4
  EXPECT_EQ(cpu::gather_nd(x.data(), idx.data(), DType::kInt64, want.data(), batch, indexed, per_batch, slice * 4), 1);
  emulate_launch(kGrid, kBlock, g::gather_nd<g::u32, g::i64>, x.data(), idx.data(), got.data(), batch, per_batch,
                 dims, slice, &bad);
  expect_same_bits(got, want, "gather_nd with a bad tuple");
  EXPECT_EQ(bad, 1);
}

// ---- scatter, scatter_nd -----------------------------------------------------------------------

cpu::ScatterReduction kAll[] = {cpu::ScatterReduction::kNone, cpu::ScatterReduction::kAdd,
                                cpu::ScatterReduction::kMul, cpu::ScatterReduction::kMax,
                                cpu::ScatterReduction::kMin};

template <class Fn>
void with_functor(cpu::ScatterReduction r, Fn&& fn) {
  switch (r) {
    case cpu::ScatterReduction::kNone: return fn(g::ScatterAssign{});
    case cpu::ScatterReduction::kAdd: return fn(g::ScatterAdd{});
    case cpu::ScatterReduction::kMul: return fn(g::ScatterMul{});
    case cpu::ScatterReduction::kMax: return fn(g::ScatterMax{});
    case cpu::ScatterReduction::kMin: return fn(g::ScatterMin{});
  }
}

// x [4, 6, 3], updates [3, 5, 2] (shorter off the axis too), scatter along axis 1 with many
// repeated indices, some negative.
template <class S>
void check_scatter(cpu::ScatterReduction r, double lo, double hi) {
  const Dims in = {4, 6, 3}, upd_dims = {3, 5, 2};
  const int axis = 1;
  const std::vector<S> x = random_values<S>(72, lo, hi, 11), upd = random_values<S>(30, lo, hi, 12);
  std::vector<g::i32> idx(30);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<g::i32>((i * 7) % 4) - (i % 3 == 0 ? 2 : 0);
  std::vector<S> want(x.size());
  const int64_t bad_cpu = cpu::scatter(x.data(), upd.data(), idx.data(), DType::kInt32, want.data(), sizeof(S), in,
                                       upd_dims, axis, r, dtype_of<S>());
  ASSERT_EQ(bad_cpu, 0);
  g::ScatterGeometry geometry{};
  geometry.rank = 3;
  geometry.axis = axis;
  geometry.axis_dim = in[axis];
  const Dims strides = {18, 3, 1};
  for (int d = 0; d < 3; ++d) {
    geometry.upd_dims[d] = upd_dims[d];
    geometry.out_strides[d] = strides[d];
  }
  std::vector<S> got = x;
  g::i32 bad = 0;
  with_functor(r, [&](auto functor) {
    using R = decltype(functor);
    emulate_launch(kGrid, kBlock, g::scatter_elements<S, g::i32, R>, upd.data(), idx.data(), got.data(), geometry,
                   &bad);
  });
  EXPECT_EQ(bad, 0);
  expect_same_bits(got, want, "scatter reduction " + std::to_string(static_cast<int>(r)));
}

TEST(EmulatedIndexing, ScatterMatchesTheCpuBitForBitForEveryReduction) {
  for (cpu::ScatterReduction r : kAll) {
    check_scatter<float>(r, -3, 3);
    check_scatter<g::i32>(r, -1000, 1000);
    check_scatter<g::i64>(r, -1e6, 1e6);
    check_scatter<g::half>(r, -2, 2);
  }
}

// x [5, 3] rows, updates [8, 3] with tuples of k = 1 repeating rows 1 and 4 (one negative).
template <class S>
void check_scatter_nd(cpu::ScatterReduction r, bool nan) {
  const Dims indexed = {5};
  const int64_t count = 8, slice = 3;
  std::vector<S> x = random_values<S>(15, -3, 3, 21), upd = random_values<S>(24, -3, 3, 22);
  if constexpr (std::is_floating_point_v<S>)
    if (nan) upd[7] = std::numeric_limits<S>::quiet_NaN();
  const std::vector<g::i64> idx = {1, 4, -4, 0, 4, 1, -1, 2};
  std::vector<S> want(x.size());
  ASSERT_EQ(cpu::scatter_nd(x.data(), upd.data(), idx.data(), DType::kInt64, want.data(), indexed, count,
                            slice * static_cast<int64_t>(sizeof(S)), r, dtype_of<S>()),
            0);
  g::IndexedDims dims{};
  dims.k = 1;
  dims.dims[0] = 5;
  std::vector<S> got = x;
  g::i32 bad = 0;
  with_functor(r, [&](auto functor) {
    using R = decltype(functor);
    emulate_launch(kGrid, kBlock, g::scatter_nd<S, g::i64, R>, upd.data(), idx.data(), got.data(), dims, count, slice,
                   &bad);
  });
  EXPECT_EQ(bad, 0);
  expect_same_bits(got, want, "scatter_nd reduction " + std::to_string(static_cast<int>(r)));
}

TEST(EmulatedIndexing, ScatterNdMatchesTheCpuBitForBitForEveryReduction) {
  for (cpu::ScatterReduction r : kAll) {
    check_scatter_nd<float>(r, false);
    check_scatter_nd<float>(r, true);  // max and min propagate the NaN
    check_scatter_nd<double>(r, false);
    check_scatter_nd<g::i32>(r, false);
    check_scatter_nd<g::bfloat16>(r, false);
  }
}

TEST(EmulatedIndexing, ScatterNdSkipsAndFlagsATupleOutOfRange) {
  const Dims indexed = {2, 3};
  const std::vector<float> x(6, 1.0f), upd = {5, 6, 7};
  const std::vector<g::i64> idx = {0, 1, 2, 0, 1, -1};  // (2, 0) is past dim 0
  std::vector<float> want(6);
  EXPECT_EQ(cpu::scatter_nd(x.data(), upd.data(), idx.data(), DType::kInt64, want.data(), indexed, 3, 4), 1);
  g::IndexedDims dims{};
  dims.k = 2;
  dims.dims[0] = 2;
  dims.dims[1] = 3;
  std::vector<float> got = x;
  g::i32 bad = 0;
  emulate_launch(kGrid, kBlock, g::scatter_nd<g::u32, g::i64, g::ScatterAssign>,
                 reinterpret_cast<const g::u32*>(upd.data()), idx.data(), reinterpret_cast<g::u32*>(got.data()), dims,
                 int64_t{3}, int64_t{1}, &bad);
  EXPECT_EQ(bad, 1);
  expect_same_bits(got, want, "scatter_nd with a bad tuple");
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
