// Unit tests of the indexing kernels (gather, scatter, range, band_part) and of their
// lowerings (engine/lower/indexing.cc), against hand-derived or naive reference results.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/lowering.h"
#include "kernels/cpu/band_part.h"
#include "kernels/cpu/gather.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/range.h"
#include "kernels/cpu/scatter.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

TEST(Gather, AxisSlicesWithNegativeAndBadIndices) {
  // input [2, 3, 2] (outer 2, axis 3, slice 2 floats); indices [4]
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<int32_t> idx = {2, -1, 0, 3};  // 3 is out of range
  std::vector<float> y(16, -1.0f);
  EXPECT_EQ(cpu::gather(x.data(), idx.data(), DType::kInt32, y.data(), 2, 3, 4, 8), 2);  // once per outer row
  const std::vector<float> want = {4, 5, 4, 5, 0, 1, 0, 0, 10, 11, 10, 11, 6, 7, 0, 0};
  EXPECT_EQ(y, want);
}

TEST(Gather, OneElementSlicesEveryWidthAndIndexType) {
  const std::vector<uint64_t> x = {10, 11, 12, 13, 14};
  const std::vector<uint8_t> idx8 = {4, 0, 2};
  std::vector<uint64_t> y(3);
  EXPECT_EQ(cpu::gather(x.data(), idx8.data(), DType::kUInt8, y.data(), 1, 5, 3, 8), 0);
  EXPECT_EQ(y, (std::vector<uint64_t>{14, 10, 12}));
  const std::vector<int64_t> idx64 = {-5, INT64_MIN, INT64_MAX};
  EXPECT_EQ(cpu::gather(x.data(), idx64.data(), DType::kInt64, y.data(), 1, 5, 3, 8), 2);
  EXPECT_EQ(y, (std::vector<uint64_t>{10, 0, 0}));
  const std::vector<uint16_t> h = {1, 2, 3};
  const std::vector<uint64_t> big = {UINT64_MAX, 1};
  std::vector<uint16_t> hy(2);
  EXPECT_EQ(cpu::gather(h.data(), big.data(), DType::kUInt64, hy.data(), 1, 3, 2, 2), 1);
  EXPECT_EQ(hy, (std::vector<uint16_t>{0, 2}));
}

TEST(Gather, EmbeddingSizedRunsInParallel) {
  const int64_t vocab = 300, hidden = 384, n = 512;
  std::vector<float> table(static_cast<size_t>(vocab * hidden));
  std::iota(table.begin(), table.end(), 0.0f);
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = (i * 37) % vocab;
  std::vector<float> y(static_cast<size_t>(n * hidden));
  EXPECT_EQ(cpu::gather(table.data(), idx.data(), DType::kInt64, y.data(), 1, vocab, n, hidden * 4), 0);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp(&y[i * hidden], &table[idx[i] * hidden], hidden * 4), 0) << i;
}

TEST(GatherNd, BatchDimsAndPartialIndices) {
  // input [2, 3, 4], batch_dims 1, indices [2, 2, 1] (k = 1): output [2, 2, 4]
  std::vector<int32_t> x(24);
  std::iota(x.begin(), x.end(), 0);
  const std::vector<int64_t> idx = {2, 0, -1, 5};
  std::vector<int32_t> y(16, -1);
  const Dims indexed = {3};
  EXPECT_EQ(cpu::gather_nd(x.data(), idx.data(), DType::kInt64, y.data(), 2, indexed, 2, 16), 1);
  const std::vector<int32_t> want = {8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 0, 0, 0, 0};
  EXPECT_EQ(y, want);
  // k = 2 over [3, 4] with one tuple per batch: one element each.
  const std::vector<int32_t> pairs = {1, 2, 2, -1};
  const Dims both = {3, 4};
  std::vector<int32_t> z(2);
  EXPECT_EQ(cpu::gather_nd(x.data(), pairs.data(), DType::kInt32, z.data(), 2, both, 1, 4), 0);
  EXPECT_EQ(z, (std::vector<int32_t>{6, 23}));
}

TEST(Scatter, ElementsAlongAnAxisLastWriteWins) {
  // input [2, 3] zeros; updates/indices [2, 2] along axis 1.
  const std::vector<float> x(6, 0.0f), upd = {1, 2, 3, 4};
  const std::vector<int64_t> idx = {2, 2, -3, 5};  // row 0 writes col 2 twice; row 1 col 0 then out of range
  std::vector<float> y(6, -1.0f);
  const Dims in = {2, 3}, ud = {2, 2};
  EXPECT_EQ(cpu::scatter(x.data(), upd.data(), idx.data(), DType::kInt64, y.data(), 4, in, ud, 1), 1);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 2, 3, 0, 0}));
  // Axis 0 with updates narrower than the input off the axis.
  const std::vector<float> u0 = {7, 8};
  const std::vector<int32_t> i0 = {1, 0};
  const Dims ud0 = {1, 2};
  std::vector<float> z(6, -1.0f);
  EXPECT_EQ(cpu::scatter(x.data(), u0.data(), i0.data(), DType::kInt32, z.data(), 4, in, ud0, 0), 0);
  EXPECT_EQ(z, (std::vector<float>{0, 8, 0, 7, 0, 0}));
}

TEST(Scatter, InPlaceKeepsTheInput) {
  std::vector<uint8_t> x = {1, 2, 3};
  const std::vector<uint8_t> upd = {9};
  const std::vector<int8_t> idx = {-1};
  const Dims in = {3}, ud = {1};
  EXPECT_EQ(cpu::scatter(x.data(), upd.data(), idx.data(), DType::kInt8, x.data(), 1, in, ud, 0), 0);
  EXPECT_EQ(x, (std::vector<uint8_t>{1, 2, 9}));
}

TEST(ScatterNd, SlicesAndElements) {
  // input [3, 2]; indices [2, 1] address rows; the repeated row keeps the last update.
  const std::vector<double> x = {1, 2, 3, 4, 5, 6}, upd = {7, 8, 9, 10};
  const std::vector<int64_t> rows = {-1, 2};
  std::vector<double> y(6);
  const Dims r = {3};
  EXPECT_EQ(cpu::scatter_nd(x.data(), upd.data(), rows.data(), DType::kInt64, y.data(), r, 2, 16), 0);
  EXPECT_EQ(y, (std::vector<double>{1, 2, 3, 4, 9, 10}));
  // Full tuples address elements; a bad tuple is skipped.
  const std::vector<int32_t> cells = {0, 1, 3, 0, 1, -2};
  const std::vector<double> vals = {-1, -2, -3};
  const Dims both = {3, 2};
  EXPECT_EQ(cpu::scatter_nd(x.data(), vals.data(), cells.data(), DType::kInt32, y.data(), both, 3, 8), 1);
  EXPECT_EQ(y, (std::vector<double>{1, -1, -3, 4, 5, 6}));  // (1, -2) is (1, 0)
}

TEST(ScatterNd, LargeSlicesSplitAcrossThreadsKeepOrder) {
  const int64_t rows = 4, width = 50000;
  std::vector<float> x(static_cast<size_t>(rows * width), 0.0f), upd(static_cast<size_t>(3 * width));
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t i = 0; i < width; ++i) upd[n * width + i] = static_cast<float>(n + 1);
  const std::vector<int64_t> idx = {1, 1, 3};
  std::vector<float> y(x.size());
  const Dims d = {rows};
  EXPECT_EQ(cpu::scatter_nd(x.data(), upd.data(), idx.data(), DType::kInt64, y.data(), d, 3, width * 4), 0);
  for (int64_t i = 0; i < width; ++i) {
    ASSERT_EQ(y[width + i], 2.0f);
    ASSERT_EQ(y[3 * width + i], 3.0f);
    ASSERT_EQ(y[i], 0.0f);
  }
}

// ---- scatter reductions: repeated indices combine in update order ----

TEST(ScatterReduction, ElementsAccumulateOverRepeatedIndices) {
  // input [2, 3]; updates/indices [2, 3] along axis 1: row 0 hits column 1 three times,
  // row 1 column 2 twice.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6}, upd = {3, -2, 0.5f, 10, 7, -1};
  const std::vector<int32_t> idx = {1, 1, -2, 2, 0, 2};
  const Dims in = {2, 3}, ud = {2, 3};
  auto run = [&](cpu::ScatterReduction r) {
    std::vector<float> y(6);
    EXPECT_EQ(cpu::scatter(x.data(), upd.data(), idx.data(), DType::kInt32, y.data(), 4, in, ud, 1, r, DType::kFloat32),
              0);
    return y;
  };
  EXPECT_EQ(run(cpu::ScatterReduction::kAdd), (std::vector<float>{1, 3.5f, 3, 11, 5, 15}));
  EXPECT_EQ(run(cpu::ScatterReduction::kMul), (std::vector<float>{1, -6, 3, 28, 5, -60}));
  EXPECT_EQ(run(cpu::ScatterReduction::kMax), (std::vector<float>{1, 3, 3, 7, 5, 10}));
  EXPECT_EQ(run(cpu::ScatterReduction::kMin), (std::vector<float>{1, -2, 3, 4, 5, -1}));
  EXPECT_EQ(run(cpu::ScatterReduction::kNone), (std::vector<float>{1, 0.5f, 3, 7, 5, -1}));
}

TEST(ScatterReduction, IntegersWrapHalfFloatsRoundAndNanPropagates) {
  const Dims one = {1}, two = {2};
  const std::vector<int64_t> twice = {0, 0};
  const std::vector<int32_t> big = {INT32_MAX}, ones = {1, 1};
  std::vector<int32_t> wrapped(1);
  cpu::scatter(big.data(), ones.data(), twice.data(), DType::kInt64, wrapped.data(), 4, one, two, 0,
               cpu::ScatterReduction::kAdd, DType::kInt32);
  EXPECT_EQ(wrapped[0], INT32_MIN + 1);
  const std::vector<int64_t> huge = {INT64_MAX}, factor = {2, 1};
  std::vector<int64_t> product(1);
  cpu::scatter(huge.data(), factor.data(), twice.data(), DType::kInt64, product.data(), 8, one, two, 0,
               cpu::ScatterReduction::kMul, DType::kInt64);
  EXPECT_EQ(product[0], -2);
  // float16: 2048 + 1 rounds back to 2048 after each update, as numpy's float16 does.
  const std::vector<uint16_t> h = {cpu::float_to_f16(2048)}, hu = {cpu::float_to_f16(1), cpu::float_to_f16(1)};
  std::vector<uint16_t> hy(1);
  cpu::scatter(h.data(), hu.data(), twice.data(), DType::kInt64, hy.data(), 2, one, two, 0,
               cpu::ScatterReduction::kAdd, DType::kFloat16);
  EXPECT_EQ(cpu::f16_to_float(hy[0]), 2048.0f);
  const std::vector<double> d = {1}, du = {std::nan(""), 5};
  std::vector<double> dy(1);
  cpu::scatter_nd(d.data(), du.data(), twice.data(), DType::kInt64, dy.data(), one, 2, 8, cpu::ScatterReduction::kMax,
                  DType::kFloat64);
  EXPECT_TRUE(std::isnan(dy[0]));
  EXPECT_TRUE(cpu::scatter_reduction_supports(DType::kBFloat16));
  EXPECT_FALSE(cpu::scatter_reduction_supports(DType::kInt8));
}

TEST(ScatterReduction, NdSlicesSplitAcrossThreadsAccumulate) {
  const int64_t rows = 3, width = 50000;
  std::vector<float> x(static_cast<size_t>(rows * width), 1.0f), upd(static_cast<size_t>(4 * width));
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t i = 0; i < width; ++i) upd[n * width + i] = static_cast<float>(n + 1);
  const std::vector<int64_t> idx = {2, 0, 2, 2};
  std::vector<float> y(x.size());
  const Dims d = {rows};
  EXPECT_EQ(cpu::scatter_nd(x.data(), upd.data(), idx.data(), DType::kInt64, y.data(), d, 4, width * 4,
                            cpu::ScatterReduction::kAdd, DType::kFloat32),
            0);
  for (int64_t i = 0; i < width; ++i) {
    ASSERT_EQ(y[i], 3.0f);
    ASSERT_EQ(y[width + i], 1.0f);
    ASSERT_EQ(y[2 * width + i], 1.0f + 1 + 3 + 4);
  }
}

TEST(Range, IntegerFloatAndHalf) {
  const int32_t s = 5, st = -2;
  std::vector<int32_t> y(4);
  ASSERT_TRUE(cpu::range_fill(DType::kInt32, &s, &st, y.data(), 4));
  EXPECT_EQ(y, (std::vector<int32_t>{5, 3, 1, -1}));
  const float fs = 0.5f, fst = 0.25f;
  std::vector<float> f(3);
  ASSERT_TRUE(cpu::range_fill(DType::kFloat32, &fs, &fst, f.data(), 3));
  EXPECT_EQ(f, (std::vector<float>{0.5f, 0.75f, 1.0f}));
  const uint16_t hs = cpu::float_to_bf16(1.0f), hst = cpu::float_to_bf16(2.0f);
  std::vector<uint16_t> h(3);
  ASSERT_TRUE(cpu::range_fill(DType::kBFloat16, &hs, &hst, h.data(), 3));
  EXPECT_EQ(cpu::bf16_to_float(h[2]), 5.0f);
  EXPECT_FALSE(cpu::range_supports(DType::kBool));
  EXPECT_FALSE(cpu::range_supports(DType::kFloat8E4M3Fn));
}

// Naive band_part: keep (i, j) iff in band (or not, with exclude).
std::vector<int32_t> band_reference(const std::vector<int32_t>& x, int64_t batch, int64_t m, int64_t n, int64_t lo,
                                    int64_t up, bool exclude) {
  std::vector<int32_t> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const bool in = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up);
        const size_t e = static_cast<size_t>((b * m + i) * n + j);
        y[e] = in != exclude ? x[e] : 0;
      }
  return y;
}

TEST(BandPart, AllBoundsAgainstTheReference) {
  const int64_t batch = 2, m = 5, n = 7;
  std::vector<int32_t> x(static_cast<size_t>(batch * m * n));
  std::iota(x.begin(), x.end(), 1);
  for (int64_t lo : {int64_t{-1}, int64_t{0}, int64_t{2}, int64_t{100}, INT64_MAX})
    for (int64_t up : {int64_t{-1}, int64_t{0}, int64_t{3}, INT64_MAX})
      for (bool exclude : {false, true}) {
        SCOPED_TRACE(::testing::Message() << lo << " " << up << " " << exclude);
        std::vector<int32_t> y(x.size(), -1);
        cpu::band_part(x.data(), y.data(), 4, batch, m, n, lo, up, exclude);
        EXPECT_EQ(y, band_reference(x, batch, m, n, lo, up, exclude));
        std::vector<int32_t> z = x;  // in place
        cpu::band_part(z.data(), z.data(), 4, batch, m, n, lo, up, exclude);
        EXPECT_EQ(z, y);
      }
}

// ---- lowerings --------------------------------------------------------------------------------

struct Lowering {
  Node node;
  std::vector<Shape> ins, outs;
  std::vector<const Constant*> consts;

  Lowered lower() const {
    const LowerFn* fn = KernelTable::builtin().find(node.op);
    if (!fn) throw std::runtime_error("no lowering for " + node.op);
    LowerContext ctx{node, ins, outs, consts, [](ValueId) { return Shape{}; }, 1};
    return (*fn)(ctx);
  }
};

Lowering make(std::string op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  Lowering l;
  l.node.op = std::move(op);
  l.node.attrs = std::move(attrs);
  l.ins = std::move(ins);
  l.outs = std::move(outs);
  l.consts.assign(l.ins.size(), nullptr);
  return l;
}

Shape f32(Dims d) { return Shape{DType::kFloat32, std::move(d)}; }

constexpr int64_t kOpen = INT64_MAX;

Attrs slice_attrs(std::vector<Dim> starts, std::vector<Dim> stops, Dims steps, Dims squeeze = {}, Dims fresh = {}) {
  return Attrs{{"starts", std::move(starts)}, {"stops", std::move(stops)},     {"steps", std::move(steps)},
               {"squeeze_axes", std::move(squeeze)}, {"new_axes", std::move(fresh)}};
}

std::vector<float> run_slice(const Lowering& l) {
  const Lowered low = l.lower();
  std::vector<float> x(static_cast<size_t>(l.ins[0].num_elements()));
  std::iota(x.begin(), x.end(), 0.0f);
  if (low.alias) return x;
  std::vector<float> y(static_cast<size_t>(l.outs[0].num_elements()), -1.0f);
  const void* in[] = {x.data()};
  void* out[] = {y.data()};
  low.run(KernelArgs{in, out, nullptr});
  return y;
}

TEST(SliceLowering, NumpyRules) {
  // x = arange(12).reshape(3, 4)
  // x[::-1, 1:3] -> [[9, 10], [5, 6], [1, 2]]
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({kOpen, 1}, {kOpen, 3}, {-1, 1}), {f32({3, 4})}, {f32({3, 2})})),
            (std::vector<float>{9, 10, 5, 6, 1, 2}));
  // x[-1, ::-2] -> [11, 9] (axis 0 squeezed)
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({-1, kOpen}, {kOpen, kOpen}, {1, -2}, {0}), {f32({3, 4})},
                           {f32({2})})),
            (std::vector<float>{11, 9}));
  // x[None, 1:, 2] -> [[6, 10]]
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({1, 2}, {kOpen, 3}, {1, 1}, {1}, {0}), {f32({3, 4})},
                           {f32({1, 2})})),
            (std::vector<float>{6, 10}));
  // x[2:0:-1, -4:-1:2] -> [[8, 10], [4, 6]]
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({2, -4}, {0, -1}, {-1, 2}), {f32({3, 4})}, {f32({2, 2})})),
            (std::vector<float>{8, 10, 4, 6}));
  // An empty slice and a whole-tensor slice (an alias).
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({2}, {1}, {1}), {f32({3, 4})}, {f32({0, 4})})).size(), 0u);
  EXPECT_TRUE(make("slice_tensor", slice_attrs({0}, {kOpen}, {1}), {f32({3, 4})}, {f32({3, 4})}).lower().alias);
  // x[1::INT64_MAX, 2] -> [6]: a step past the axis reads one position, and neither its
  // product with a stride nor the last position read overflows (found by the graph fuzzer).
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({1, 2}, {kOpen, 3}, {INT64_MAX, 1}), {f32({3, 4})},
                           {f32({1, 1})})),
            (std::vector<float>{6}));
  // Claiming two positions at that step is the graph's broken out_dims promise.
  try {
    make("slice_tensor", slice_attrs({0}, {"b"}, {INT64_MAX}), {f32({5})}, {f32({2})}).lower();
    FAIL() << "accepted a slice past the axis";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  }
}

TEST(SliceLowering, SymbolicBoundsAndOutDims) {
  // x[:n] with n = 2 at run time: the output length says where it stops.
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({0}, {"n"}, {1}), {f32({5})}, {f32({2})})),
            (std::vector<float>{0, 1}));
  // x[n:] with n = 3: the start comes back from the length 2.
  EXPECT_EQ(run_slice(make("slice_tensor", slice_attrs({"n"}, {kOpen}, {1}), {f32({5})}, {f32({2})})),
            (std::vector<float>{3, 4}));
  // A length that static bounds contradict is the graph's broken out_dims promise.
  try {
    make("slice_tensor", slice_attrs({0}, {3}, {1}), {f32({5})}, {f32({2})}).lower();
    FAIL() << "accepted a wrong length";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
  }
  // Both bounds symbolic with step 2: not recoverable.
  try {
    make("slice_tensor", slice_attrs({"a"}, {"b"}, {2}), {f32({5})}, {f32({2})}).lower();
    FAIL() << "lowered an unknown start";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
}

TEST(IndexingLowering, ConstantIndicesAreChecked) {
  Constant c = Constant::copy_of(TensorType{DType::kInt64, {2}, DeviceRef::cpu()},
                                 std::vector<uint8_t>(16, 0));  // {0, 0}
  int64_t bad[2] = {1, 7};
  Constant b = Constant::copy_of(TensorType{DType::kInt64, {2}, DeviceRef::cpu()},
                                 {reinterpret_cast<const uint8_t*>(bad), 16});
  auto g = make("gather", {{"axis", int64_t{0}}}, {f32({3, 2}), Shape{DType::kInt64, {2}}}, {f32({2, 2})});
  g.consts = {nullptr, &c};
  EXPECT_FALSE(g.lower().alias);
  g.consts = {nullptr, &b};
  try {
    g.lower();
    FAIL() << "accepted index 7";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("index 7"), std::string::npos) << e.what();
  }
}

TEST(IndexingLowering, ScatterNdReductionRunsAndRefusesNarrowIntegers) {
  auto s = make("scatter_nd", {{"reduction", std::string("mul")}},
                {f32({3}), f32({3}), Shape{DType::kInt64, {3, 1}}}, {f32({3})});
  const std::vector<float> x = {1, 2, 3}, upd = {4, 5, -1};
  const std::vector<int64_t> idx = {1, 1, 0};
  std::vector<float> y(3);
  const void* ins[] = {x.data(), upd.data(), idx.data()};
  void* outs[] = {y.data()};
  s.lower().run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(y, (std::vector<float>{-1, 40, 3}));
  const Shape i8{DType::kInt8, {3}};
  try {
    make("scatter_nd", {{"reduction", std::string("add")}}, {i8, i8, Shape{DType::kInt64, {3, 1}}}, {i8}).lower();
    FAIL() << "lowered an int8 reduction";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("int8"), std::string::npos) << e.what();
  }
}

TEST(IndexingLowering, GatherNdScatterRangeBandPart) {
  auto g = make("gather_nd", {{"batch_dims", int64_t{0}}}, {f32({2, 3}), Shape{DType::kInt32, {2, 2}}}, {f32({2})});
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> idx = {1, 2, 0, -1};
  std::vector<float> y(2);
  const void* ins[] = {x.data(), idx.data()};
  void* outs[] = {y.data()};
  g.lower().run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(y, (std::vector<float>{6, 3}));

  auto s = make("scatter", {{"axis", int64_t{-1}}}, {f32({2, 3}), f32({2, 1}), Shape{DType::kInt64, {2, 1}}},
                {f32({2, 3})});
  EXPECT_EQ(s.lower().inplace_input, 0);

  auto r = make("range", {}, {f32({}), f32({}), f32({})}, {f32({3})});
  const float start = 1, stop = 2, step = 0.25f;
  std::vector<float> ry(3);
  const void* rin[] = {&start, &stop, &step};
  void* rout[] = {ry.data()};
  r.lower().run(KernelArgs{rin, rout, nullptr});
  EXPECT_EQ(ry, (std::vector<float>{1, 1.25f, 1.5f}));

  auto bp = make("band_part", {{"num_lower", int64_t{0}}, {"exclude", false}}, {f32({2, 2})}, {f32({2, 2})});
  std::vector<float> by(4);
  const void* bin[] = {x.data()};
  void* bout[] = {by.data()};
  bp.lower().run(KernelArgs{bin, bout, nullptr});
  EXPECT_EQ(by, (std::vector<float>{1, 2, 0, 4}));
}

}  // namespace
}  // namespace maxc
