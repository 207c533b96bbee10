// BERT's self-attention as ONNX exporters write it (projections reshaped to [B, S, H, D] and
// permuted to heads, the output permuted back) becomes one attention node that reads and
// writes [B, S, H, D] itself (layout "bshd"), without the permutes; the results stay those of
// the unfused graph. A permute something else reads stays, and so does the layout as written.
// A decoder's where(mask, scores, lowest) with a bool mask fuses as well, the mask selecting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

constexpr int64_t kHeads = 3, kHeadDim = 8, kWidth = kHeads * kHeadDim;

struct Wiring {
  bool k_through_transpose = false;  // k permuted to [B, H, S, D], then transposed (GPT-2's export)
  bool q_also_an_output = false;     // q's permute has another reader
  bool context_also_an_output = false;  // so has the attention's output
  bool where_mask = false;  // GPT-2's: where(mask, scores, lowest) with a bool [1, 1, S, S] mask
};

Graph self_attention(const Wiring& w) {
  Graph g("self_attention");
  ValueId x = g.add_input("x", f32({"batch", "seq", kWidth}));
  ValueId mask = w.where_mask ? g.add_input("mask", TensorType{DType::kBool, {1, 1, "seq", "seq"}, DeviceRef::cpu()})
                              : g.add_input("mask", f32({"batch", 1, 1, "seq"}));
  const auto op = [&g](const char* name, std::vector<ValueId> in, const Attrs& attrs = {}) {
    return g.add_op(name, 0, in, attrs)[0];
  };
  const auto permute = [&op](ValueId v, std::vector<int64_t> dims) {
    return op("permute", {v}, {{"dims", std::move(dims)}});
  };
  const auto heads = [&](const std::string& name) {
    ValueId w = g.add_weight("w" + name, f32({kWidth, kWidth}));
    ValueId b = g.add_weight("b" + name, f32({kWidth}));
    return op("reshape", {op("add", {op("matmul", {x, w}), b})},
              {{"shape", std::vector<Dim>{"batch", "seq", kHeads, kHeadDim}}});
  };
  ValueId q = permute(heads("q"), {0, 2, 1, 3});
  const Attrs last_two{{"axis_1", int64_t{-2}}, {"axis_2", int64_t{-1}}};
  ValueId kt = w.k_through_transpose ? op("transpose", {permute(heads("k"), {0, 2, 1, 3})}, last_two)
                                     : permute(heads("k"), {0, 2, 3, 1});
  ValueId v = permute(heads("v"), {0, 2, 1, 3});
  const float root = std::sqrt(static_cast<float>(kHeadDim));
  ValueId c = g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&root), 4}));
  ValueId scores = op("div", {op("matmul", {q, kt}), c});
  if (w.where_mask) {
    const float lowest = std::numeric_limits<float>::lowest();
    ValueId fill = g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&lowest), 4}));
    scores = op("where", {mask, scores, fill});
  } else {
    scores = op("add", {scores, mask});
  }
  ValueId context = op("matmul", {op("softmax", {scores}, {{"axis", int64_t{-1}}}), v});
  ValueId y = op("reshape", {permute(context, {0, 2, 1, 3})}, {{"shape", std::vector<Dim>{"batch", "seq", kWidth}}});
  std::vector<NamedValue> outputs{{"y", y}};
  if (w.q_also_an_output) outputs.push_back({"q", q});
  if (w.context_also_an_output) outputs.push_back({"context", context});
  g.set_outputs(outputs);
  return g;
}

int count_op(const Program& p, std::string_view op) {
  int n = 0;
  for (const Node& node : p.nodes) n += node.op == op;
  return n;
}

const Node& attention_node(const Program& p) {
  for (const Node& node : p.nodes)
    if (node.op == "attention") return node;
  throw std::runtime_error("no attention node in\n" + p.to_string());
}

// A bool [1, 1, seq, seq] mask, random, whose first row masks every key out (its softmax is
// then uniform: every score is the fill).
Ref<Tensor> bool_mask(int64_t seq, uint32_t seed) {
  auto t = Tensor::create(Device::cpu(), DType::kBool, {1, 1, seq, seq});
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t->data());
  for (int64_t i = 0; i < seq * seq; ++i) p[i] = i >= seq && rng() % 3 != 0;
  return t;
}

// Every output of the fused model against the unfused graph's, over batch and sequence sizes.
void expect_same_results(const Graph& g, bool where_mask = false) {
  NamedTensors weights;
  uint32_t seed = 1;
  for (const char* name : {"q", "k", "v"}) {
    weights.push_back({std::string("w") + name, random_tensor({kWidth, kWidth}, seed++)});
    weights.push_back({std::string("b") + name, random_tensor({kWidth}, seed++)});
  }
  auto ctx = Context::create({});
  CompileSettings plain_settings;
  plain_settings.fuse = false;
  auto fused = Model::create(CompiledModel::compile(ctx, g, {}), weights);
  auto plain = Model::create(CompiledModel::compile(ctx, g, plain_settings), weights);
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 5}, {2, 37}}) {
    Ref<Tensor> x = random_tensor({batch, seq, kWidth}, seed++);
    Ref<Tensor> mask = where_mask ? bool_mask(seq, seed++) : random_tensor({batch, 1, 1, seq}, seed++, -3.f, 0.f);
    std::vector<Ref<Tensor>> in = {x, mask};
    const auto a = fused->execute(in), b = plain->execute(in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) {
      ASSERT_EQ(a[o]->num_elements(), b[o]->num_elements());
      const auto* pa = reinterpret_cast<const float*>(a[o]->data());
      const auto* pb = reinterpret_cast<const float*>(b[o]->data());
      for (int64_t i = 0; i < a[o]->num_elements(); ++i)
        ASSERT_NEAR(pa[i], pb[i], 1e-5f) << "output " << o << ", batch " << batch << ", seq " << seq << " at " << i;
    }
  }
}

TEST(AttentionFusion, BertPermutesAroundAttentionDisappear) {
  const Graph g = self_attention({});
  const auto cm = CompiledModel::compile(Context::create({}), g, {});
  const Program& p = cm->program();
  EXPECT_EQ(count_op(p, "permute"), 0) << p.to_string();
  const Node& n = attention_node(p);
  EXPECT_EQ(n.attrs.get<std::string>("layout"), "bshd");
  EXPECT_FALSE(n.attrs.get<bool>("k_transposed")) << "kᵀ of a [B, S, H, D] k is that k, not transposed";
  expect_same_results(g);
}

TEST(AttentionFusion, KeysPermutedThenTransposedAlsoDisappear) {
  const Graph g = self_attention({.k_through_transpose = true});
  const auto cm = CompiledModel::compile(Context::create({}), g, {});
  const Program& p = cm->program();
  EXPECT_EQ(count_op(p, "permute"), 0) << p.to_string();
  EXPECT_EQ(count_op(p, "transpose"), 0) << p.to_string();
  EXPECT_EQ(attention_node(p).attrs.get<std::string>("layout"), "bshd");
  expect_same_results(g);
}

// A permute read elsewhere is computed anyway: the node keeps the graph's layout, and every
// permute stays.
TEST(AttentionFusion, PermutesWithOtherReadersStay) {
  for (const Wiring& w : {Wiring{.q_also_an_output = true}, Wiring{.context_also_an_output = true}}) {
    const Graph g = self_attention(w);
    const auto cm = CompiledModel::compile(Context::create({}), g, {});
  const Program& p = cm->program();
    EXPECT_EQ(count_op(p, "permute"), 4) << p.to_string();
    EXPECT_FALSE(attention_node(p).attrs.has("layout")) << p.to_string();
    expect_same_results(g);
  }
}

TEST(AttentionFusion, DecoderWhereMaskSelects) {
  const Graph g = self_attention({.where_mask = true});
  const auto cm = CompiledModel::compile(Context::create({}), g, {});
  const Program& p = cm->program();
  EXPECT_EQ(count_op(p, "where"), 0) << p.to_string();
  EXPECT_EQ(count_op(p, "softmax"), 0) << p.to_string();
  EXPECT_EQ(count_op(p, "permute"), 0) << p.to_string();
  const Node& n = attention_node(p);
  EXPECT_EQ(n.attrs.get<double>("mask_fill"), static_cast<double>(std::numeric_limits<float>::lowest()));
  EXPECT_EQ(n.attrs.get<std::string>("layout"), "bshd");
  expect_same_results(g, /*where_mask=*/true);
}

}  // namespace
}  // namespace maxc
