// The attention kernel (kernels/cpu/attention.h) on operands that are not dense, the heads of
// [B, S, H, D] tensors read and written in place through their strides, and the lowering of
// the node's layout "bshd" (engine/lower/attention_shape.h) that gives it those strides;
// against plain loops in double. The dense cases are in linalg_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/lowering.h"
#include "kernels/cpu/attention.h"

#include "kernel_test_util.h"

namespace maxc {
namespace {

using kernel_test::AlignedScratch;
using kernel_test::random_floats;

// A tensor stored [B, rows, H, cols] and read as [B, H, rows, cols].
struct Heads {
  int64_t b = 0, rows = 0, h = 0, cols = 0;

  size_t at(int64_t bi, int64_t hi, int64_t r, int64_t c) const {
    return static_cast<size_t>(((bi * rows + r) * h + hi) * cols + c);
  }
  int64_t size() const { return b * rows * h * cols; }
  // Along the batch dims [B, H], then the rows: what the kernel takes.
  std::vector<int64_t> strides() const { return {rows * h * cols, cols, h * cols}; }
};

struct Case {
  int64_t b = 2, h = 3, lq = 45, lk = 45, d = 8, dv = 12;
  bool k_transposed = false;  // kᵀ stored [B, D, H, Lk]
  int64_t out_heads = 3;      // more than h: out is a slice of a wider tensor
  bool mask = true;           // [B, 1, 1, Lk]

  Heads q() const { return {b, lq, h, d}; }
  Heads k() const { return k_transposed ? Heads{b, d, h, lk} : Heads{b, lk, h, d}; }
  Heads v() const { return {b, lk, h, dv}; }
  Heads out() const { return {b, lq, out_heads, dv}; }
};

// softmax(scale q kᵀ + mask) v, into out's layout; what is not an output element stays 0.
std::vector<double> reference(const Case& c, float scale, const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, const std::vector<float>& mask) {
  std::vector<double> out(static_cast<size_t>(c.out().size()), 0.0);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.h; ++h)
      for (int64_t i = 0; i < c.lq; ++i) {
        std::vector<double> p(static_cast<size_t>(c.lk));
        double peak = -INFINITY, sum = 0;
        for (int64_t j = 0; j < c.lk; ++j) {
          double dot = 0;
          for (int64_t t = 0; t < c.d; ++t)
            dot += q[c.q().at(b, h, i, t)] * (c.k_transposed ? k[c.k().at(b, h, t, j)] : k[c.k().at(b, h, j, t)]);
          p[j] = scale * dot + (c.mask ? mask[b * c.lk + j] : 0.0);
          peak = std::max(peak, p[j]);
        }
        for (double& x : p) sum += x = std::exp(x - peak);
        for (int64_t e = 0; e < c.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < c.lk; ++j) acc += p[j] / sum * v[c.v().at(b, h, j, e)];
          out[c.out().at(b, h, i, e)] = acc;
        }
      }
  return out;
}

struct Inputs {
  std::vector<float> q, k, v, mask;
};

Inputs random_inputs(const Case& c) {
  Inputs in{random_floats(c.q().size(), 1), random_floats(c.k().size(), 2), random_floats(c.v().size(), 3),
            random_floats(c.b * c.lk, 4)};
  for (float& m : in.mask) m = m > 1.f ? -1e4f : m;  // masked-out keys, as BERT's padding mask
  return in;
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << what << " at " << i;
}

void check_kernel(const Case& c, int64_t threads) {
  const std::string what = "Lq " + std::to_string(c.lq) + " Lk " + std::to_string(c.lk) +
                           (c.k_transposed ? " kT" : "") + " threads " + std::to_string(threads);
  cpu::AttentionShape s;
  s.batch_dims = {c.b, c.h};
  s.q_len = c.lq, s.kv_len = c.lk, s.head_dim = c.d, s.v_dim = c.dv;
  s.k_transposed = c.k_transposed;
  s.has_mask = c.mask;
  if (c.mask) s.mask_strides = {c.lk, 0, 0, 1};
  s.q_strides = c.q().strides();
  s.k_strides = c.k().strides();
  s.v_strides = c.v().strides();
  s.out_strides = c.out().strides();
  const Inputs in = random_inputs(c);
  const cpu::Attention att(s, 0.3f, threads);
  AlignedScratch scratch(att.scratch_bytes());
  std::vector<float> out(static_cast<size_t>(c.out().size()), 0.f);
  att.run(in.q.data(), in.k.data(), in.v.data(), c.mask ? in.mask.data() : nullptr, out.data(), scratch.get());
  expect_near_all(out, reference(c, 0.3f, in.q, in.k, in.v, in.mask), what);
}

TEST(AttentionStrided, HeadsOfBshdTensorsInPlace) {
  Case c;  // 45 query rows: a block of 32 and a partial one
  for (int64_t threads : {1, 2, 3}) check_kernel(c, threads);
  c.lq = 5, c.lk = 37;  // cross-attention: keys and queries of other lengths
  c.mask = false;
  check_kernel(c, 2);
  c.k_transposed = true;
  c.mask = true;
  check_kernel(c, 2);
}

TEST(AttentionStrided, WritesOnlyItsHeadsOfAWiderOutput) {
  Case c;
  c.out_heads = 5;  // heads 3 and 4 belong to someone else: they stay 0
  check_kernel(c, 2);
}

// ---- lowering ----------------------------------------------------------------------------------

Lowered lower(const Node& node, std::vector<Shape> inputs, std::vector<Shape> outputs) {
  const LowerFn* fn = KernelTable::builtin().find(node.op);
  if (!fn) fail(Code::kNotFound, "no lowering for ", node.op);
  std::vector<const Constant*> constants(inputs.size(), nullptr);
  LowerContext ctx{node, inputs, outputs, constants, [](ValueId) { return Shape{}; }, 2};
  return (*fn)(ctx);
}

Node bshd_node(bool k_transposed, std::string layout = "bshd") {
  Node n{"attention", {0, 1, 2, 3}, {4}, {}, {}};
  n.attrs.set("scale", 0.3);
  n.attrs.set("k_transposed", k_transposed);
  n.attrs.set("layout", std::move(layout));
  return n;
}

Shape stored(const Heads& t) { return {DType::kFloat32, {t.b, t.rows, t.h, t.cols}}; }

TEST(AttentionStrided, LayoutBshdLowersToTheStridesOfTheStoredTensors) {
  for (bool k_transposed : {false, true}) {
    Case c;
    c.k_transposed = k_transposed;
    const Shape mask{DType::kFloat32, {c.b, 1, 1, c.lk}};
    const Lowered l = lower(bshd_node(k_transposed), {stored(c.q()), stored(c.k()), stored(c.v()), mask},
                            {stored(c.out())});
    const Inputs in = random_inputs(c);
    std::vector<float> out(static_cast<size_t>(c.out().size()));
    const void* ins[] = {in.q.data(), in.k.data(), in.v.data(), in.mask.data()};
    void* outs[] = {out.data()};
    AlignedScratch scratch(l.scratch_bytes);
    l.run(KernelArgs{ins, outs, scratch.get()});
    expect_near_all(out, reference(c, 0.3f, in.q, in.k, in.v, in.mask), k_transposed ? "lowered kT" : "lowered");
  }
}

TEST(AttentionStrided, LayoutMismatchesAreInternal) {
  const Case c;
  const std::vector<Shape> in{stored(c.q()), stored(c.k()), stored(c.v()), {DType::kFloat32, {c.b, 1, 1, c.lk}}};
  const auto expect_internal = [](const std::function<void()>& f, const std::string& message) {
    try {
      f();
      FAIL() << "no error; wanted " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInternal) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_internal([&] { lower(bshd_node(false, "bhds"), in, {stored(c.out())}); }, "unknown layout \"bhds\"");
  // The output as the graph's matmul would have it, [B, H, Lq, Dv]: not the layout's.
  expect_internal([&] { lower(bshd_node(false), in, {{DType::kFloat32, {c.b, c.h, c.lq, c.dv}}}); },
                  "does not fit");
  expect_internal([&] { lower(bshd_node(false), {{DType::kFloat32, {4, 8}}, in[1], in[2]}, {stored(c.out())}); },
                  "layout \"bshd\" needs rank 3");
}

}  // namespace
}  // namespace maxc
