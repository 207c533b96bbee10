// Unit tests of the shape and layout kernels (kernels/cpu/copy*, transpose, pad) and of
// their lowerings (engine/lower/shape.cc), each against a naive index-by-index reference.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "base/str_cat.h"
#include "engine/lowering.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/copy_concat.h"
#include "kernels/cpu/copy_repeat.h"
#include "kernels/cpu/pad.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/transpose.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

int64_t numel(const Dims& d) { return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>()); }

template <typename T>
std::vector<T> iota_of(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(i + 1);
  return v;
}

// out[i] = src[offset + sum(index_k * strides_k)], walking the output row-major.
template <typename T>
std::vector<T> reference_copy(const std::vector<T>& src, const Dims& dims, const Dims& strides, int64_t offset) {
  std::vector<T> out(static_cast<size_t>(numel(dims)));
  Dims idx(dims.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t s = offset;
    for (size_t k = 0; k < dims.size(); ++k) s += idx[k] * strides[k];
    out[i] = src[static_cast<size_t>(s)];
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

template <typename T>
void expect_copy(const Dims& in_dims, const Dims& dims, const Dims& strides, int64_t offset,
                 cpu::StridedCopy::Kind kind) {
  const auto src = iota_of<T>(numel(in_dims));
  const cpu::StridedCopy plan = cpu::plan_strided_copy(sizeof(T), dims, strides, offset);
  EXPECT_EQ(plan.kind, kind);
  std::vector<T> out(static_cast<size_t>(numel(dims)), T{0});
  cpu::strided_copy(plan, src.data(), out.data());
  EXPECT_EQ(out, reference_copy(src, dims, strides, offset));
}

Dims permuted_strides(const Dims& in_dims, const Dims& perm, Dims* out_dims) {
  const Dims s = cpu::dense_strides(in_dims);
  Dims strides;
  out_dims->clear();
  for (int64_t p : perm) {
    strides.push_back(s[p]);
    out_dims->push_back(in_dims[p]);
  }
  return strides;
}

using Kind = cpu::StridedCopy::Kind;

TEST(StridedCopy, PlansCollapseAndPickTheLoop) {
  const Dims a = {2, 3, 4};
  expect_copy<float>(a, a, cpu::dense_strides(a), 0, Kind::kContiguous);
  Dims out;
  expect_copy<float>(a, {2, 3, 2}, {12, 4, 1}, 1, Kind::kRows);                      // x[:, :, 1:3]
  expect_copy<float>(a, {2, 3, 4}, {0, 4, 1}, 0, Kind::kRows);                       // broadcast axis 0
  expect_copy<float>({3}, {5, 3}, {0, 1}, 0, Kind::kRows);
  expect_copy<float>({5, 1}, {5, 7}, {1, 0}, 0, Kind::kFillRows);                   // broadcast last axis
  const Dims t_strides = permuted_strides(a, {0, 2, 1}, &out);  // transpose the last two
  expect_copy<float>(a, out, t_strides, 0, Kind::kTranspose);
  expect_copy<float>(a, {2, 3, 2}, {12, 4, 2}, 0, Kind::kGather);                    // step 2 on the last axis
  expect_copy<float>(a, {2, 3, 4}, {12, 4, -1}, 3, Kind::kGather);                   // reversed last axis
  expect_copy<float>(a, {2, 0, 4}, {12, 4, 1}, 0, Kind::kEmpty);
  expect_copy<float>({1}, {}, {}, 0, Kind::kContiguous);                             // scalar
  // Size-1 axes never matter, wherever they are permuted to.
  const Dims b = {1, 6, 1};
  const Dims b_strides = permuted_strides(b, {2, 1, 0}, &out);
  expect_copy<float>(b, out, b_strides, 0, Kind::kContiguous);
}

TEST(StridedCopy, EveryWidthEveryPermutationOfRank4) {
  const Dims in = {3, 5, 2, 9};
  Dims perm = {0, 1, 2, 3};
  do {
    Dims out;
    const Dims strides = permuted_strides(in, perm, &out);
    const auto src8 = iota_of<uint8_t>(numel(in));
    for (int w : {1, 2, 4, 8}) {
      SCOPED_TRACE(::testing::Message() << "width " << w << " perm " << perm[0] << perm[1] << perm[2] << perm[3]);
      const cpu::StridedCopy plan = cpu::plan_strided_copy(w, out, strides);
      // Element e of the source holds bytes e*w ... e*w+w-1 of a known pattern.
      std::vector<uint8_t> src(static_cast<size_t>(numel(in) * w)), dst(src.size());
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
      cpu::strided_copy(plan, src.data(), dst.data());
      const auto ref_idx = reference_copy(iota_of<int64_t>(numel(in)), out, strides, 0);
      for (size_t e = 0; e < ref_idx.size(); ++e)
        ASSERT_EQ(std::memcmp(&dst[e * w], &src[(ref_idx[e] - 1) * w], w), 0) << "element " << e;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

void expect_large_transposes() {
  // Sizes off the 8x8 register block and the 32x32 tile; with a pool, chunks of tiles that
  // end mid-plane and span planes (a chunk's tiles of one plane go in one call).
  for (const Dims& in : {Dims{67, 131}, Dims{2, 257, 100}, Dims{4, 128, 12, 64}, Dims{1, 9, 8}, Dims{3, 64, 1000}}) {
    Dims perm(in.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    Dims out;
    const Dims strides = permuted_strides(in, perm, &out);
    expect_copy<float>(in, out, strides, 0, Kind::kTranspose);
    expect_copy<uint16_t>(in, out, strides, 0, Kind::kTranspose);
    expect_copy<double>(in, out, strides, 0, Kind::kTranspose);
  }
  // Attention's [B, S, H, D] -> [B, H, D, S], and NCHW -> NHWC.
  for (const auto& [in, perm] : {std::pair{Dims{2, 70, 3, 40}, Dims{0, 2, 3, 1}}, {Dims{2, 64, 37, 41}, Dims{0, 2, 3, 1}}}) {
    Dims out;
    const Dims strides = permuted_strides(in, perm, &out);
    expect_copy<float>(in, out, strides, 0, Kind::kTranspose);
  }
}

TEST(StridedCopy, LargeTransposesMatchTheReference) {
  expect_large_transposes();
  for (int32_t threads : {2, 3}) {
    SCOPED_TRACE(str_cat(threads, " threads"));
    cpu::ThreadPool pool(threads);
    cpu::PoolScope scope(&pool);
    expect_large_transposes();
  }
}

TEST(Transpose, PlaneDirect) {
  const int64_t na = 19, nb = 45, src_ld = 24, dst_ld = 50;  // padded leading dims
  std::vector<float> src(static_cast<size_t>(nb * src_ld));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  std::vector<float> dst(static_cast<size_t>(na * dst_ld), -1.0f);
  cpu::transpose_plane(src.data(), src_ld, dst.data(), dst_ld, na, nb, 4);
  for (int64_t a = 0; a < na; ++a)
    for (int64_t b = 0; b < dst_ld; ++b)
      ASSERT_EQ(dst[a * dst_ld + b], b < nb ? src[b * src_ld + a] : -1.0f) << a << "," << b;
}

TEST(Fill, EveryWidth) {
  std::vector<uint64_t> buf(4, 0);
  cpu::fill_elements(buf.data(), 3, 2, 0xabcd);
  const auto* h = reinterpret_cast<const uint16_t*>(buf.data());
  EXPECT_EQ(h[0], 0xabcd);
  EXPECT_EQ(h[2], 0xabcd);
  EXPECT_EQ(h[3], 0);
  cpu::fill_elements(buf.data(), 4, 8, 0x0123456789abcdefull);
  EXPECT_EQ(buf[3], 0x0123456789abcdefull);
}

TEST(ConcatSplit, RoundTrip) {
  // Three parts of [2, k_i, 3] floats concatenated on axis 1, one of them empty.
  const std::vector<int64_t> ks = {2, 0, 3};
  std::vector<std::vector<float>> parts;
  std::vector<int64_t> row_bytes;
  float next = 1;
  for (int64_t k : ks) {
    parts.emplace_back(static_cast<size_t>(2 * k * 3));
    for (float& v : parts.back()) v = next++;
    row_bytes.push_back(k * 3 * 4);
  }
  std::vector<float> whole(2 * 5 * 3);
  std::vector<const void*> srcs = {parts[0].data(), parts[1].data(), parts[2].data()};
  cpu::concat_rows(srcs, row_bytes, 2, whole.data());
  // Row 0 is part 0's row 0 then part 2's row 0.
  EXPECT_EQ(std::vector<float>(whole.begin(), whole.begin() + 6), std::vector<float>(parts[0].begin(), parts[0].begin() + 6));
  EXPECT_EQ(std::vector<float>(whole.begin() + 6, whole.begin() + 15),
            std::vector<float>(parts[2].begin(), parts[2].begin() + 9));
  std::vector<std::vector<float>> back = {std::vector<float>(12), {}, std::vector<float>(18)};
  std::vector<void*> dsts = {back[0].data(), back[1].data(), back[2].data()};
  cpu::split_rows(whole.data(), 2, dsts, row_bytes);
  EXPECT_EQ(back[0], parts[0]);
  EXPECT_EQ(back[2], parts[2]);
}

TEST(Pad, ConstantAroundEveryAxis) {
  const Dims in = {2, 3}, before = {1, 0}, after = {0, 2}, out = {3, 5};
  const std::vector<int32_t> x = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> y(15, 0);
  cpu::pad_constant(x.data(), y.data(), 4, in, before, out, static_cast<uint32_t>(-7));
  const std::vector<int32_t> want = {-7, -7, -7, -7, -7, 1, 2, 3, -7, -7, 4, 5, 6, -7, -7};
  EXPECT_EQ(y, want);
  // An empty input axis: everything is padding.
  std::vector<int32_t> z(4, 0);
  cpu::pad_constant(x.data(), z.data(), 4, Dims{0, 2}, Dims{1, 0}, Dims{2, 2}, 9);
  EXPECT_EQ(z, std::vector<int32_t>(4, 9));
  // Rank 0 is a copy.
  int32_t s = 0;
  cpu::pad_constant(x.data(), &s, 4, Dims{}, Dims{}, Dims{}, 9);
  EXPECT_EQ(s, 1);
}

TEST(RepeatInterleave, TensorCountsAndBrokenPromises) {
  const std::vector<int16_t> x = {1, 2, 3, 4, 5, 6};  // [2, 3], repeat along axis 1
  const std::vector<int64_t> counts = {2, 0, 1};
  std::vector<int16_t> y(6, -1);
  EXPECT_EQ(cpu::repeat_interleave(x.data(), counts.data(), DType::kInt64, 3, y.data(), 2, 3, 3, 2), 3);
  EXPECT_EQ(y, (std::vector<int16_t>{1, 1, 3, 4, 4, 6}));
  // One count for all; the output is promised 4 but the data gives 6: cut at 4.
  const int32_t one = 2;
  std::vector<int16_t> z(8, -1);
  EXPECT_EQ(cpu::repeat_interleave(x.data(), &one, DType::kInt32, 1, z.data(), 2, 3, 4, 2), 6);
  EXPECT_EQ(z, (std::vector<int16_t>{1, 1, 2, 2, 4, 4, 5, 5}));
  // Negative counts are 0, and a short total is zero-filled.
  const std::vector<int8_t> neg = {-3, 1, 1};
  std::vector<int16_t> u(6, -1);
  EXPECT_EQ(cpu::repeat_interleave(x.data(), neg.data(), DType::kInt8, 3, u.data(), 2, 3, 3, 2), 2);
  EXPECT_EQ(u, (std::vector<int16_t>{2, 3, 0, 5, 6, 0}));
  EXPECT_EQ(cpu::repeat_total(neg.data(), DType::kInt8, 3, 3), 2);
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

// Runs a one-input, one-output lowering on 1, 2, 3, ... and returns the output.
std::vector<float> run1(const Lowering& l) {
  const Lowered low = l.lower();
  std::vector<float> x = iota_of<float>(l.ins[0].num_elements());
  if (low.alias) return x;
  std::vector<float> y(static_cast<size_t>(l.outs[0].num_elements()), -99.0f);
  const void* in[] = {x.data()};
  void* out[] = {y.data()};
  low.run(KernelArgs{in, out, nullptr});
  return y;
}

TEST(ShapeLowering, AliasesAndIdentities) {
  EXPECT_TRUE(make("reshape", {{"shape", std::vector<Dim>{6}}}, {f32({2, 3})}, {f32({6})}).lower().alias);
  EXPECT_TRUE(make("as_interleaved_complex", {}, {f32({2, 4})}, {f32({2, 2, 2})}).lower().alias);
  EXPECT_TRUE(make("permute", {{"dims", Dims{1, 0, 2}}}, {f32({1, 5, 3})}, {f32({5, 1, 3})}).lower().alias);
  EXPECT_TRUE(make("broadcast_to", {{"shape", std::vector<Dim>{2, 3}}}, {f32({2, 3})}, {f32({2, 3})}).lower().alias);
  EXPECT_TRUE(make("tile", {{"repeats", std::vector<Dim>{1, 1}}}, {f32({2, 3})}, {f32({2, 3})}).lower().alias);
  EXPECT_FALSE(make("permute", {{"dims", Dims{1, 0}}}, {f32({2, 3})}, {f32({3, 2})}).lower().alias);
}

TEST(ShapeLowering, RebindChecksTheShape) {
  auto ok = make("rebind", {{"shape", std::vector<Dim>{"n"}}, {"message", std::string("bad n")}}, {f32({4})}, {f32({4})});
  EXPECT_TRUE(ok.lower().alias);
  // A wrong shape plans (a cond's untaken branch may hold it) and fails when it runs.
  auto bad = make("rebind", {{"shape", std::vector<Dim>{"n"}}, {"message", std::string("bad n")}}, {f32({4})}, {f32({5})});
  const Lowered broken = bad.lower();
  EXPECT_FALSE(broken.alias);
  try {
    broken.run(KernelArgs{nullptr, nullptr, nullptr});
    FAIL() << "rebind accepted a wrong shape";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bad n"), std::string::npos) << e.what();
  }
}

TEST(ShapeLowering, TransposeBroadcastTile) {
  EXPECT_EQ(run1(make("transpose", {{"axis_1", int64_t{0}}, {"axis_2", int64_t{-1}}}, {f32({2, 3})}, {f32({3, 2})})),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(run1(make("broadcast_to", {{"shape", std::vector<Dim>{2, 2, 3}}}, {f32({2, 1})}, {f32({2, 2, 3})})),
            (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(run1(make("tile", {{"repeats", std::vector<Dim>{2, 2}}}, {f32({1, 2})}, {f32({2, 4})})),
            (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
}

TEST(ShapeLowering, ConcatStackSplit) {
  auto concat = make("concat", {{"axis", int64_t{-1}}}, {f32({2, 1}), f32({2, 2})}, {f32({2, 3})});
  const Lowered c = concat.lower();
  const std::vector<float> a = {1, 2}, b = {3, 4, 5, 6};
  std::vector<float> y(6);
  const void* ins[] = {a.data(), b.data()};
  void* outs[] = {y.data()};
  c.run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(y, (std::vector<float>{1, 3, 4, 2, 5, 6}));

  auto stack = make("stack", {{"axis", int64_t{1}}}, {f32({2}), f32({2})}, {f32({2, 2})});
  stack.lower().run(KernelArgs{ins, outs, nullptr});
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 4), (std::vector<float>{1, 3, 2, 4}));

  auto split = make("split", {{"split_sizes", std::vector<Dim>{1, 2}}, {"axis", int64_t{1}}}, {f32({2, 3})},
                    {f32({2, 1}), f32({2, 2})});
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> p(2), q(4);
  const void* sin[] = {x.data()};
  void* souts[] = {p.data(), q.data()};
  split.lower().run(KernelArgs{sin, souts, nullptr});
  EXPECT_EQ(p, (std::vector<float>{1, 4}));
  EXPECT_EQ(q, (std::vector<float>{2, 3, 5, 6}));
}

TEST(ShapeLowering, PadValueAndModes) {
  auto pad = make("pad", {{"paddings", Dims{1, 1}}, {"mode", std::string("constant")}, {"value", 2.5}}, {f32({2})},
                  {f32({4})});
  EXPECT_EQ(run1(pad), (std::vector<float>{2.5, 1, 2, 2.5}));
  auto reflect = make("pad", {{"paddings", Dims{1, 1}}, {"mode", std::string("reflect")}, {"value", 0.0}}, {f32({2})},
                      {f32({4})});
  try {
    reflect.lower();
    FAIL() << "reflect mode lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
}

TEST(ShapeLowering, RepeatInterleaveAttribute) {
  auto r = make("repeat_interleave", {{"repeats", int64_t{2}}, {"axis", int64_t{0}}}, {f32({2, 2})}, {f32({4, 2})});
  EXPECT_EQ(run1(r), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  auto flat = make("repeat_interleave", {{"repeats", int64_t{2}}}, {f32({2, 2})}, {f32({8})});
  EXPECT_EQ(run1(flat), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
}

TEST(ShapeLowering, ShapeToTensor) {
  auto s = make("shape_to_tensor", {{"shape", std::vector<Dim>{3, 0, 7}}}, {}, {Shape{DType::kInt64, {3}}});
  std::vector<int64_t> y(3);
  void* outs[] = {y.data()};
  s.lower().run(KernelArgs{nullptr, outs, nullptr});
  EXPECT_EQ(y, (std::vector<int64_t>{3, 0, 7}));
}

TEST(ShapeLowering, SubByteDtypeIsUnimplemented) {
  auto t = make("transpose", {{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}}, {Shape{DType::kFloat4E2M1Fn, {2, 4}}},
                {Shape{DType::kFloat4E2M1Fn, {4, 2}}});
  try {
    t.lower();
    FAIL() << "float4 lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
  }
}

}  // namespace
}  // namespace maxc
