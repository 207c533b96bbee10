// SwiGLU, CausalConvWithState, LinearAttention, FlexAttention (ai.onnx.preview) and RoiAlign
// imported as compositions of our ops, against straightforward C++ references of the ONNX
// definitions; and the variants the compositions cannot express.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = offset + scale * static_cast<float>((i * 7) % 11) - 0.03f * static_cast<float>(i % 3);
  return v;
}

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// ---- SwiGLU ----

TEST(OnnxSequenceMixers, SwigluWithAlphaMatchesReference) {
  GraphSpec g;
  g.inputs = {value_info("a", kFloat, {2, 3}), value_info("b", kFloat, {2, 3})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("SwiGLU", {"a", "b"}, {"y"}, {attr_float("alpha", 0.5f)})};
  Vec a = ramp(6, 0.6f, -2.f), b = ramp(6, 0.3f, -1.f);
  auto out = run_model(model(g, 28), {f32_tensor({2, 3}, a), f32_tensor({2, 3}, b)});
  Vec want(6);
  for (size_t i = 0; i < 6; ++i) want[i] = a[i] * sigmoid(0.5f * a[i]) * b[i];
  expect_near(floats_of(out[0]), want, 1e-5f);
}

TEST(OnnxSequenceMixers, SwigluRejectsBroadcasting) {
  GraphSpec g;
  g.inputs = {value_info("a", kFloat, {2, 3}), value_info("b", kFloat, {1, 3})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("SwiGLU", {"a", "b"}, {"y"}, {}, "glu")};
  Error e = import_error(model(g, 28));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("'glu' (SwiGLU)"), std::string::npos) << e.what();
}

// ---- CausalConvWithState ----

struct ConvCase {
  int64_t batch, channels, length, kernel;
};

// output [B, C, L] and present_state [B, C, k-1] of the ONNX definition.
std::pair<Vec, Vec> causal_conv_reference(const ConvCase& s, const Vec& x, const Vec& w, const Vec& bias,
                                          const Vec& past, bool silu) {
  const int64_t k = s.kernel, L = s.length, P = L + k - 1;
  Vec out, present;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c) {
      Vec padded(static_cast<size_t>(P), 0.f);
      for (int64_t p = 0; p < P; ++p) {
        if (p >= k - 1) padded[p] = x[(n * s.channels + c) * L + p - (k - 1)];
        else if (!past.empty()) padded[p] = past[(n * s.channels + c) * (k - 1) + p];
      }
      for (int64_t l = 0; l < L; ++l) {
        float acc = bias.empty() ? 0.f : bias[c];
        for (int64_t j = 0; j < k; ++j) acc += w[c * k + j] * padded[l + j];
        out.push_back(silu ? acc * sigmoid(acc) : acc);
      }
      present.insert(present.end(), padded.begin() + L, padded.end());
    }
  return {out, present};
}

TEST(OnnxSequenceMixers, CausalConvWithBiasPastStateAndSilu) {
  const ConvCase s{2, 3, 5, 3};
  Vec w = ramp(3 * 3, 0.1f, -0.4f), bias = {0.1f, -0.2f, 0.05f}, past = ramp(2 * 3 * 2, 0.2f, -0.7f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {2, 3, 5}), value_info("past", kFloat, {2, 3, 2})};
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.initializers = {tensor_f32("w", {3, 1, 3}, w), tensor_f32("bias", {3}, bias)};
  g.nodes = {node("CausalConvWithState", {"x", "w", "bias", "past"}, {"y", "present"},
                  {attr_string("activation", "silu")})};
  Vec x = ramp(2 * 3 * 5, 0.3f, -1.2f);
  auto out = run_model(model(g, 27), {f32_tensor({2, 3, 5}, x), f32_tensor({2, 3, 2}, past)});
  auto [y, present] = causal_conv_reference(s, x, w, bias, past, true);
  expect_near(floats_of(out[0]), y, 1e-5f);
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{2, 3, 2}));
  expect_near(floats_of(out[1]), present, 0.f);
}

// Fewer new positions than the state holds: present_state keeps some of the zero padding.
TEST(OnnxSequenceMixers, CausalConvShortInputWithoutPastState) {
  const ConvCase s{1, 2, 2, 4};
  Vec w = ramp(2 * 4, 0.15f, -0.5f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {1, 2, 2})};
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.initializers = {tensor_f32("w", {2, 1, 4}, w)};
  g.nodes = {node("CausalConvWithState", {"x", "w"}, {"y", "present"})};
  Vec x = {1.f, -2.f, 0.5f, 3.f};
  auto out = run_model(model(g, 27), {f32_tensor({1, 2, 2}, x)});
  auto [y, present] = causal_conv_reference(s, x, w, {}, {}, false);
  expect_near(floats_of(out[0]), y, 1e-5f);
  expect_near(floats_of(out[1]), present, 0.f);
}

TEST(OnnxSequenceMixers, CausalConvSymbolicKernelIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {1, 2, 4}), value_info("w", kFloat, {int64_t{2}, int64_t{1}, std::string("k")})};
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.nodes = {node("CausalConvWithState", {"x", "w"}, {"y", "present"}, {}, "conv0")};
  expect_unimplemented_naming(model(g, 27), "node 0 'conv0' (CausalConvWithState)", "kernel size");
}

// ---- LinearAttention ----

struct LinearCase {
  int64_t batch, seq, q_heads, kv_heads, d_k, d_v;
  std::string rule;
  int64_t decay_width = 0;  // 1: one decay per head; d_k: one per key dim
  int64_t beta_width = 0;   // 1 or kv_heads
};

struct LinearInputs {
  Vec q, k, v, past, decay, beta;
};

// output [B, T, H_q*d_v] and present_state [B, H_kv, d_k, d_v]: the recurrence token by token.
std::pair<Vec, Vec> linear_attention_reference(const LinearCase& s, const LinearInputs& in, float scale) {
  const int64_t dk = s.d_k, dv = s.d_v, group = s.q_heads / s.kv_heads;
  const bool gated = s.rule == "gated" || s.rule == "gated_delta", delta = s.rule == "delta" || s.rule == "gated_delta";
  Vec S = in.past.empty() ? Vec(static_cast<size_t>(s.batch * s.kv_heads * dk * dv), 0.f) : in.past;
  Vec out(static_cast<size_t>(s.batch * s.seq * s.q_heads * dv));
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t bt = b * s.seq + t;
      for (int64_t h = 0; h < s.kv_heads; ++h) {
        float* st = &S[static_cast<size_t>((b * s.kv_heads + h) * dk * dv)];
        const float* k = &in.k[(bt * s.kv_heads + h) * dk];
        const float* v = &in.v[(bt * s.kv_heads + h) * dv];
        const float* g = gated ? &in.decay[(bt * s.kv_heads + h) * s.decay_width] : nullptr;
        if (gated)
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) st[i * dv + j] *= std::exp(g[s.decay_width == 1 ? 0 : i]);
        Vec u(v, v + dv);
        if (delta) {
          float beta = in.beta[bt * s.beta_width + (s.beta_width == 1 ? 0 : h)];
          for (int64_t j = 0; j < dv; ++j) {
            float r = 0;
            for (int64_t i = 0; i < dk; ++i) r += st[i * dv + j] * k[i];
            u[j] = beta * (v[j] - r);
          }
        }
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) st[i * dv + j] += k[i] * u[j];
      }
      for (int64_t hq = 0; hq < s.q_heads; ++hq) {
        const float* st = &S[static_cast<size_t>((b * s.kv_heads + hq / group) * dk * dv)];
        const float* q = &in.q[(bt * s.q_heads + hq) * dk];
        for (int64_t j = 0; j < dv; ++j) {
          float o = 0;
          for (int64_t i = 0; i < dk; ++i) o += q[i] * st[i * dv + j];
          out[(bt * s.q_heads + hq) * dv + j] = scale * o;
        }
      }
    }
  return {out, S};
}

LinearInputs linear_inputs(const LinearCase& s, bool past) {
  const int64_t bt = s.batch * s.seq;
  LinearInputs in;
  in.q = ramp(bt * s.q_heads * s.d_k, 0.09f, -0.45f);
  in.k = ramp(bt * s.kv_heads * s.d_k, 0.07f, -0.3f);
  in.v = ramp(bt * s.kv_heads * s.d_v, 0.2f, -0.9f);
  if (past) in.past = ramp(s.batch * s.kv_heads * s.d_k * s.d_v, 0.05f, -0.2f);
  if (s.decay_width) in.decay = ramp(bt * s.kv_heads * s.decay_width, 0.04f, -0.5f);
  if (s.beta_width) in.beta = ramp(bt * s.beta_width, 0.08f, 0.1f);
  return in;
}

// Runs LinearAttention on `s` (inputs as graph inputs, in ONNX's order) and checks both outputs.
void check_linear_attention(const LinearCase& s, bool past, float scale_attr = 0.f) {
  LinearInputs in = linear_inputs(s, past);
  GraphSpec g;
  std::vector<std::string> names = {"q", "k", "v", "", "", ""};
  std::vector<Ref<Tensor>> feeds;
  auto add = [&](size_t at, const std::string& name, std::vector<int64_t> dims, const Vec& data) {
    std::vector<DimSpec> spec(dims.begin(), dims.end());
    g.inputs.push_back(value_info(name, kFloat, spec));
    names[at] = name;
    feeds.push_back(f32_tensor(dims, data));
  };
  const int64_t B = s.batch, T = s.seq;
  add(0, "q", {B, T, s.q_heads * s.d_k}, in.q);
  add(1, "k", {B, T, s.kv_heads * s.d_k}, in.k);
  add(2, "v", {B, T, s.kv_heads * s.d_v}, in.v);
  if (past) add(3, "past", {B, s.kv_heads, s.d_k, s.d_v}, in.past);
  if (s.decay_width) add(4, "decay", {B, T, s.kv_heads * s.decay_width}, in.decay);
  if (s.beta_width) add(5, "beta", {B, T, s.beta_width}, in.beta);
  while (names.back().empty()) names.pop_back();
  std::vector<Msg> attrs = {attr_int("q_num_heads", s.q_heads), attr_int("kv_num_heads", s.kv_heads),
                            attr_string("update_rule", s.rule)};
  if (scale_attr != 0) attrs.push_back(attr_float("scale", scale_attr));
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.nodes = {node("LinearAttention", names, {"y", "present"}, attrs)};
  auto out = run_model(model(g, 27), feeds);
  float scale = scale_attr != 0 ? scale_attr : 1.f / std::sqrt(static_cast<float>(s.d_k));
  auto [y, present] = linear_attention_reference(s, in, scale);
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{B, T, s.q_heads * s.d_v}));
  expect_near(floats_of(out[0]), y, 1e-5f);
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{B, s.kv_heads, s.d_k, s.d_v}));
  expect_near(floats_of(out[1]), present, 1e-5f);
}

// [1, T, hidden] with T symbolic.
std::vector<DimSpec> symbolic_seq(int64_t hidden) { return {int64_t{1}, std::string("T"), hidden}; }

// Unrolled: the delta correction and a per-key-dim decay, with GQA.
TEST(OnnxSequenceMixers, GatedDeltaWithGqaAndPastState) {
  check_linear_attention({2, 4, 4, 2, 3, 2, "gated_delta", 3, 2}, true);
}

TEST(OnnxSequenceMixers, DeltaWithSharedBetaAndExplicitScale) {
  check_linear_attention({1, 3, 2, 2, 4, 3, "delta", 0, 1}, false, 0.3f);
}

// The closed form: a causally masked matmul.
TEST(OnnxSequenceMixers, LinearRuleWithPastState) { check_linear_attention({2, 5, 2, 2, 3, 4, "linear"}, true); }

TEST(OnnxSequenceMixers, GatedPerHeadDecayWithGqaAndPastState) {
  check_linear_attention({2, 5, 4, 2, 3, 2, "gated", 1}, true);
}

TEST(OnnxSequenceMixers, GatedPerKeyDimDecayWithoutPastState) {
  check_linear_attention({1, 4, 2, 1, 2, 3, "gated", 2}, false);
}

// The closed form needs no static sequence length.
TEST(OnnxSequenceMixers, LinearRuleWithSymbolicSequenceLength) {
  const LinearCase s{1, 3, 2, 2, 2, 2, "linear"};
  GraphSpec g;
  for (const char* n : {"q", "k", "v"}) g.inputs.push_back(value_info(n, kFloat, symbolic_seq(4)));
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.nodes = {node("LinearAttention", {"q", "k", "v"}, {"y", "present"},
                  {attr_int("q_num_heads", 2), attr_int("kv_num_heads", 2), attr_string("update_rule", "linear")})};
  LinearInputs in = linear_inputs(s, false);
  auto out =
      run_model(model(g, 27), {f32_tensor({1, 3, 4}, in.q), f32_tensor({1, 3, 4}, in.k), f32_tensor({1, 3, 4}, in.v)});
  auto [y, present] = linear_attention_reference(s, in, 1.f / std::sqrt(2.f));
  expect_near(floats_of(out[0]), y, 1e-5f);
  expect_near(floats_of(out[1]), present, 1e-5f);
}

TEST(OnnxSequenceMixers, DeltaRuleWithSymbolicSequenceLengthIsUnimplemented) {
  GraphSpec g;
  for (const char* n : {"q", "k", "v"}) g.inputs.push_back(value_info(n, kFloat, symbolic_seq(4)));
  g.inputs.push_back(value_info("beta", kFloat, symbolic_seq(1)));
  g.outputs = {value_info("y", kFloat, {}), value_info("present", kFloat, {})};
  g.nodes = {node("LinearAttention", {"q", "k", "v", "", "", "beta"}, {"y", "present"},
                  {attr_int("q_num_heads", 2), attr_int("kv_num_heads", 2), attr_string("update_rule", "delta")},
                  "la0")};
  expect_unimplemented_naming(model(g, 27), "node 0 'la0' (LinearAttention)", "sequence length");
}

// ---- FlexAttention (ai.onnx.preview) ----

Msg attr_graph(const std::string& name, const Msg& graph) {
  Msg a;
  a.bytes(1, name).varint(20, 5).msg(6, graph);
  return a;
}

Msg subgraph(const GraphSpec& g) {
  Msg m;
  for (const Msg& n : g.nodes) m.msg(1, n);
  m.bytes(2, "modifier");
  for (const Msg& t : g.initializers) m.msg(5, t);
  for (const Msg& i : g.inputs) m.msg(11, i);
  for (const Msg& o : g.outputs) m.msg(12, o);
  return m;
}

// model() with the preview domain imported too; the node gets its domain.
std::string preview_model(GraphSpec g) {
  Msg graph;
  for (const Msg& n : g.nodes) graph.msg(1, n);
  graph.bytes(2, "test");
  for (const Msg& i : g.inputs) graph.msg(11, i);
  for (const Msg& o : g.outputs) graph.msg(12, o);
  Msg onnx_ops, preview;
  onnx_ops.bytes(1, "").varint(2, 26);
  preview.bytes(1, "ai.onnx.preview").varint(2, 1);
  Msg m;
  m.varint(1, 10).bytes(2, "max_c-test").msg(7, graph).msg(8, onnx_ops).msg(8, preview);
  return m.data;
}

Msg flex_node(const std::vector<Msg>& attrs, const std::string& name = "") {
  Msg n = node("FlexAttention", {"q", "k", "v"}, {"y"}, attrs, name);
  n.bytes(7, "ai.onnx.preview");
  return n;
}

// A soft cap as score_mod: cap · tanh(scores / cap), with cap an initializer of the subgraph.
Msg soft_cap(float cap) {
  GraphSpec m;
  m.inputs = {value_info("scores", kFloat, {std::string("B"), std::string("H"), std::string("L"), std::string("S")})};
  m.outputs = {value_info("out", kFloat, {})};
  m.initializers = {tensor_f32("cap", {}, {cap})};
  m.nodes = {node("Div", {"scores", "cap"}, {"scaled"}), node("Tanh", {"scaled"}, {"capped"}),
             node("Mul", {"capped", "cap"}, {"out"})};
  return subgraph(m);
}

TEST(OnnxSequenceMixers, FlexAttentionWithSoftCapAndGqa) {
  const int64_t B = 1, Hq = 4, Hkv = 2, L = 3, S = 5, D = 4;
  const float cap = 0.8f, scale = 0.7f;
  GraphSpec g;
  g.inputs = {value_info("q", kFloat, {B, Hq, L, D}), value_info("k", kFloat, {B, Hkv, S, D}),
              value_info("v", kFloat, {B, Hkv, S, D})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {flex_node({attr_float("scale", scale), attr_graph("score_mod", soft_cap(cap))})};
  Vec q = ramp(B * Hq * L * D, 0.2f, -1.f), k = ramp(B * Hkv * S * D, 0.25f, -1.2f),
      v = ramp(B * Hkv * S * D, 0.3f, -1.f);
  auto out = run_model(preview_model(g), {f32_tensor({B, Hq, L, D}, q), f32_tensor({B, Hkv, S, D}, k),
                                          f32_tensor({B, Hkv, S, D}, v)});
  Vec want;
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t i = 0; i < L; ++i) {
      const int64_t kv = h / (Hq / Hkv);
      Vec p(S);
      float sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        float s = 0;
        for (int64_t d = 0; d < D; ++d) s += q[(h * L + i) * D + d] * k[(kv * S + j) * D + d];
        p[j] = std::exp(cap * std::tanh(scale * s / cap));
        sum += p[j];
      }
      for (int64_t d = 0; d < D; ++d) {
        float y = 0;
        for (int64_t j = 0; j < S; ++j) y += p[j] / sum * v[(kv * S + j) * D + d];
        want.push_back(y);
      }
    }
  expect_near(floats_of(out[0]), want, 1e-5f);
}

TEST(OnnxSequenceMixers, FlexAttentionModifierUsingOuterValueIsUnimplemented) {
  GraphSpec m;
  m.inputs = {value_info("scores", kFloat, {})};
  m.outputs = {value_info("out", kFloat, {})};
  m.nodes = {node("Add", {"scores", "outer_bias"}, {"out"})};
  GraphSpec g;
  for (const char* n : {"q", "k", "v"}) g.inputs.push_back(value_info(n, kFloat, {1, 1, 2, 2}));
  g.inputs.push_back(value_info("outer_bias", kFloat, {1, 1, 2, 2}));
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {flex_node({attr_graph("prob_mod", subgraph(m))}, "flex0")};
  expect_unimplemented_naming(preview_model(g), "node 0 'flex0' (FlexAttention)", "outer_bias");
}

TEST(OnnxSequenceMixers, OtherPreviewOperatorsStayUnimplemented) {
  GraphSpec g;
  for (const char* n : {"q", "k", "v"}) g.inputs.push_back(value_info(n, kFloat, {1, 1, 2, 2}));
  g.outputs = {value_info("y", kFloat, {})};
  Msg n = node("NotAnOperator", {"q", "k", "v"}, {"y"}, {}, "p0");
  n.bytes(7, "ai.onnx.preview");
  g.nodes = {n};
  expect_unimplemented_naming(preview_model(g), "node 0 'p0'", "operator domain 'ai.onnx.preview'");
}

// ---- RoiAlign ----

struct RoiCase {
  int64_t batch, channels, height, width, rois, out_h, out_w, grid;
  float spatial_scale;
  bool half_pixel, max_mode;
};

// One tap pair along an axis of the ONNX reference: indices and weights; zero weights outside.
struct Taps {
  int64_t low, high;
  float w_low, w_high;
};

Taps taps_at(float p, int64_t size) {
  if (p < -1.f || p > static_cast<float>(size)) return {0, 0, 0.f, 0.f};
  p = std::max(p, 0.f);
  int64_t low = static_cast<int64_t>(p), high = low + 1;
  if (low >= size - 1) low = high = size - 1, p = static_cast<float>(low);
  float l = p - static_cast<float>(low);
  return {low, high, 1.f - l, l};
}

Vec roi_align_reference(const RoiCase& s, const Vec& x, const Vec& rois, const std::vector<int64_t>& batch) {
  Vec out;
  const float off = s.half_pixel ? 0.5f : 0.f;
  for (int64_t n = 0; n < s.rois; ++n) {
    const float* r = &rois[n * 4];
    float x0 = r[0] * s.spatial_scale - off, y0 = r[1] * s.spatial_scale - off;
    float w = r[2] * s.spatial_scale - off - x0, h = r[3] * s.spatial_scale - off - y0;
    if (!s.half_pixel) w = std::max(w, 1.f), h = std::max(h, 1.f);
    const float bh = h / static_cast<float>(s.out_h), bw = w / static_cast<float>(s.out_w);
    for (int64_t c = 0; c < s.channels; ++c) {
      const float* img = &x[(batch[n] * s.channels + c) * s.height * s.width];
      for (int64_t ph = 0; ph < s.out_h; ++ph)
        for (int64_t pw = 0; pw < s.out_w; ++pw) {
          float acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < s.grid; ++iy)
            for (int64_t ix = 0; ix < s.grid; ++ix) {
              Taps ty = taps_at(y0 + ph * bh + (iy + 0.5f) * bh / s.grid, s.height);
              Taps tx = taps_at(x0 + pw * bw + (ix + 0.5f) * bw / s.grid, s.width);
              float v[4] = {ty.w_low * tx.w_low * img[ty.low * s.width + tx.low],
                            ty.w_low * tx.w_high * img[ty.low * s.width + tx.high],
                            ty.w_high * tx.w_low * img[ty.high * s.width + tx.low],
                            ty.w_high * tx.w_high * img[ty.high * s.width + tx.high]};
              if (!s.max_mode) {
                acc += v[0] + v[1] + v[2] + v[3];
                continue;
              }
              float m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = first ? m : std::max(acc, m);
              first = false;
            }
          out.push_back(s.max_mode ? acc : acc / static_cast<float>(s.grid * s.grid));
        }
    }
  }
  return out;
}

void check_roi_align(const RoiCase& s) {
  GraphSpec g;
  std::vector<int64_t> xd = {s.batch, s.channels, s.height, s.width};
  g.inputs = {value_info("x", kFloat, {s.batch, s.channels, s.height, s.width}),
              value_info("rois", kFloat, {s.rois, int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  std::vector<int64_t> batch = {1, 0, 1};
  batch.resize(static_cast<size_t>(s.rois));
  g.initializers = {tensor_i64("batch", {s.rois}, batch)};
  g.nodes = {node("RoiAlign", {"x", "rois", "batch"}, {"y"},
                  {attr_string("coordinate_transformation_mode", s.half_pixel ? "half_pixel" : "output_half_pixel"),
                   attr_string("mode", s.max_mode ? "max" : "avg"), attr_int("output_height", s.out_h),
                   attr_int("output_width", s.out_w), attr_int("sampling_ratio", s.grid),
                   attr_float("spatial_scale", s.spatial_scale)})};
  Vec x = ramp(s.batch * s.channels * s.height * s.width, 0.4f, -1.5f);
  // Inside, reaching past the right and bottom edges, and starting above and left of it.
  Vec rois = {1.f, 0.5f, 6.f, 5.f, 3.f, 2.f, 12.f, 11.f, -3.f, -2.5f, 2.f, 3.f};
  rois.resize(static_cast<size_t>(s.rois * 4));
  auto out = run_model(model(g, 22), {f32_tensor(xd, x), f32_tensor({s.rois, 4}, rois)});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{s.rois, s.channels, s.out_h, s.out_w}));
  expect_near(floats_of(out[0]), roi_align_reference(s, x, rois, batch), 1e-5f);
}

TEST(OnnxSequenceMixers, RoiAlignAverageHalfPixel) { check_roi_align({2, 3, 5, 6, 3, 2, 3, 2, 0.5f, true, false}); }

TEST(OnnxSequenceMixers, RoiAlignMaxOutputHalfPixel) { check_roi_align({2, 2, 4, 7, 3, 3, 2, 3, 1.f, false, true}); }

TEST(OnnxSequenceMixers, RoiAlignAdaptiveSamplingIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {1, 1, 4, 4}), value_info("rois", kFloat, {2, 4}),
              value_info("batch", kInt64, {2})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("RoiAlign", {"x", "rois", "batch"}, {"y"}, {}, "roi0")};
  expect_unimplemented_naming(model(g, 22), "node 0 'roi0' (RoiAlign)", "sampling_ratio 0");
}

}  // namespace
}  // namespace maxc::onnx::testing
