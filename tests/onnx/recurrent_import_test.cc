// RNN, GRU and LSTM imported as unrolled graphs (a short static sequence) or as a
// while_loop (a symbolic one), against straightforward C++ references of the ONNX formulas
// (sequence_lens included); and the inputs ONNX forbids.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;

Vec ramp(size_t n, float scale, float offset) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 11) - 0.02f * static_cast<float>(i % 3);
  return v;
}

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// Row `row` of a [rows, cols] matrix times vector v (cols).
float dot_row(const Vec& m, size_t row, size_t cols, const float* v) {
  float s = 0;
  for (size_t k = 0; k < cols; ++k) s += m[row * cols + k] * v[k];
  return s;
}

struct Dims {
  size_t seq, batch, in, hidden;
};

// The last hidden state of a one-direction GRU with linear_before_reset, [B, H].
Vec gru_reference(const Dims& d, const Vec& x, const Vec& w, const Vec& r, const Vec& b) {
  size_t H = d.hidden;
  Vec h(d.batch * H, 0.f);
  for (size_t t = 0; t < d.seq; ++t) {
    Vec next(h.size());
    for (size_t n = 0; n < d.batch; ++n) {
      const float* xt = &x[(t * d.batch + n) * d.in];
      const float* hp = &h[n * H];
      for (size_t j = 0; j < H; ++j) {
        auto gate_x = [&](size_t g) { return dot_row(w, g * H + j, d.in, xt) + b[g * H + j]; };
        auto gate_h = [&](size_t g) { return dot_row(r, g * H + j, H, hp) + b[3 * H + g * H + j]; };
        float z = sigmoid(gate_x(0) + gate_h(0)), rr = sigmoid(gate_x(1) + gate_h(1));
        float cand = std::tanh(gate_x(2) + rr * gate_h(2));
        next[n * H + j] = (1 - z) * cand + z * hp[j];
      }
    }
    h = next;
  }
  return h;
}

// Y of a reverse LSTM with peepholes and initial states, [S, 1, B, H].
Vec lstm_reverse_reference(const Dims& d, const Vec& x, const Vec& w, const Vec& r, const Vec& b, const Vec& p,
                           Vec h, Vec c) {
  size_t H = d.hidden;
  Vec y(d.seq * d.batch * H);
  for (size_t k = 0; k < d.seq; ++k) {
    size_t t = d.seq - 1 - k;
    Vec nh(h.size()), nc(c.size());
    for (size_t n = 0; n < d.batch; ++n) {
      const float* xt = &x[(t * d.batch + n) * d.in];
      for (size_t j = 0; j < H; ++j) {
        auto gate = [&](size_t g) {
          return dot_row(w, g * H + j, d.in, xt) + dot_row(r, g * H + j, H, &h[n * H]) + b[g * H + j] + b[4 * H + g * H + j];
        };
        float cp = c[n * H + j];
        float i = sigmoid(gate(0) + p[j] * cp), f = sigmoid(gate(2) + p[2 * H + j] * cp);
        float cell = f * cp + i * std::tanh(gate(3));
        float o = sigmoid(gate(1) + p[H + j] * cell);
        nc[n * H + j] = cell;
        nh[n * H + j] = o * std::tanh(cell);
      }
    }
    h = nh, c = nc;
    std::copy(h.begin(), h.end(), y.begin() + static_cast<std::ptrdiff_t>(t * d.batch * H));
  }
  return y;
}

TEST(OnnxRecurrent, GruLinearBeforeResetMatchesReference) {
  const Dims d{4, 2, 3, 5};
  const int64_t S = 4, B = 2, I = 3, H = 5;
  Vec w = ramp(3 * H * I, 0.05f, -0.2f), r = ramp(3 * H * H, 0.04f, -0.2f), b = ramp(6 * H, 0.03f, -0.1f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {S, B, I})};
  g.outputs = {value_info("y_h", kFloat, {})};
  g.initializers = {tensor_f32("w", {1, 3 * H, I}, w), tensor_f32("r", {1, 3 * H, H}, r), tensor_f32("b", {1, 6 * H}, b)};
  g.nodes = {node("GRU", {"x", "w", "r", "b"}, {"", "y_h"}, {attr_int("hidden_size", H), attr_int("linear_before_reset", 1)})};
  Vec x = ramp(S * B * I, 0.3f, -1.f);
  auto out = run_model(model(g, 22), {f32_tensor({S, B, I}, x)});
  expect_near(floats_of(out[0]), gru_reference(d, x, w, r, b));
}

TEST(OnnxRecurrent, ReverseLstmWithPeepholesAndInitialStates) {
  const Dims d{3, 2, 2, 3};
  const int64_t S = 3, B = 2, I = 2, H = 3;
  Vec w = ramp(4 * H * I, 0.06f, -0.3f), r = ramp(4 * H * H, 0.05f, -0.25f), b = ramp(8 * H, 0.02f, -0.1f),
      p = ramp(3 * H, 0.1f, -0.4f), h0 = ramp(B * H, 0.1f, -0.3f), c0 = ramp(B * H, 0.2f, -0.5f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {S, B, I})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("w", {1, 4 * H, I}, w), tensor_f32("r", {1, 4 * H, H}, r), tensor_f32("b", {1, 8 * H}, b),
                    tensor_f32("h0", {1, B, H}, h0),   tensor_f32("c0", {1, B, H}, c0),   tensor_f32("p", {1, 3 * H}, p),
                    tensor_i64("lens", {B}, {S, S})};
  g.nodes = {node("LSTM", {"x", "w", "r", "b", "lens", "h0", "c0", "p"}, {"y"},
                  {attr_int("hidden_size", H), attr_string("direction", "reverse")})};
  Vec x = ramp(S * B * I, 0.25f, -0.8f);
  auto out = run_model(model(g, 22), {f32_tensor({S, B, I}, x)});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{S, 1, B, H}));
  expect_near(floats_of(out[0]), lstm_reverse_reference(d, x, w, r, b, p, h0, c0));
}

TEST(OnnxRecurrent, BatchFirstRnnMatchesReference) {
  const int64_t S = 2, B = 2, I = 2, H = 2;
  Vec w = {0.5f, -0.3f, 0.2f, 0.4f}, r = {0.1f, -0.2f, 0.3f, 0.05f};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {B, S, I})};
  g.outputs = {value_info("y_h", kFloat, {})};
  g.initializers = {tensor_f32("w", {1, H, I}, w), tensor_f32("r", {1, H, H}, r)};
  g.nodes = {node("RNN", {"x", "w", "r"}, {"", "y_h"}, {attr_int("hidden_size", H), attr_int("layout", 1)})};
  Vec x = {1.f, 2.f, -1.f, 0.5f, 0.3f, -0.7f, 2.f, 1.f};  // [B, S, I]
  auto out = run_model(model(g, 22), {f32_tensor({B, S, I}, x)});
  Vec want;
  for (int64_t n = 0; n < B; ++n) {
    float h[2] = {0, 0};
    for (int64_t t = 0; t < S; ++t) {
      const float* xt = &x[static_cast<size_t>((n * S + t) * I)];
      float nh[2];
      for (size_t j = 0; j < 2; ++j) nh[j] = std::tanh(dot_row(w, j, 2, xt) + dot_row(r, j, 2, h));
      h[0] = nh[0], h[1] = nh[1];
    }
    want.insert(want.end(), {h[0], h[1]});
  }
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{B, 1, H}));
  expect_near(floats_of(out[0]), want);
}

// ---- sequence_lens ----

// An RNN (tanh) over sequences of their own lengths: Y [S, B, H] zero past each length, and
// the state after its last step in Y_h (zero for an empty sequence, as ONNX Runtime has it).
// `reverse` walks each sequence from its own last step.
std::pair<Vec, Vec> rnn_with_lengths(const Dims& d, const Vec& x, const Vec& w, const Vec& r, const Vec& h0,
                                     const std::vector<int32_t>& lens, bool reverse) {
  size_t H = d.hidden;
  Vec y(d.seq * d.batch * H, 0.f), y_h(d.batch * H, 0.f);
  for (size_t n = 0; n < d.batch; ++n) {
    size_t len = static_cast<size_t>(lens[n]);
    Vec h(h0.begin() + static_cast<std::ptrdiff_t>(n * H), h0.begin() + static_cast<std::ptrdiff_t>((n + 1) * H));
    for (size_t k = 0; k < len; ++k) {
      size_t t = reverse ? len - 1 - k : k;
      Vec next(H);
      for (size_t j = 0; j < H; ++j)
        next[j] = std::tanh(dot_row(w, j, d.in, &x[(t * d.batch + n) * d.in]) + dot_row(r, j, H, h.data()));
      h = next;
      std::copy(h.begin(), h.end(), y.begin() + static_cast<std::ptrdiff_t>((t * d.batch + n) * H));
    }
    if (len > 0) std::copy(h.begin(), h.end(), y_h.begin() + static_cast<std::ptrdiff_t>(n * H));
  }
  return {y, y_h};
}

size_t count_ops(const Graph& g, std::string_view name) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += op.schema->name == name;
  return n;
}

// sequence_lens fed at run time: each step is masked per batch entry. X's sequence length is
// 4, or a symbol the loop form reads at run time.
void check_lengths(bool reverse, bool symbolic = false) {
  const Dims d{4, 3, 2, 3};
  const int64_t S = 4, B = 3, I = 2, H = 3;
  Vec w = ramp(H * I, 0.2f, -0.5f), r = ramp(H * H, 0.15f, -0.4f), h0 = ramp(B * H, 0.1f, -0.2f);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {symbolic ? DimSpec(std::string("seq")) : DimSpec(S), B, I}),
              value_info("lens", kInt32, {B})};
  g.outputs = {value_info("y", kFloat, {}), value_info("y_h", kFloat, {})};
  g.initializers = {tensor_f32("w", {1, H, I}, w), tensor_f32("r", {1, H, H}, r), tensor_f32("h0", {1, B, H}, h0)};
  g.nodes = {node("RNN", {"x", "w", "r", "", "lens", "h0"}, {"y", "y_h"},
                  {attr_int("hidden_size", H), attr_string("direction", reverse ? "reverse" : "forward")})};
  Vec x = ramp(S * B * I, 0.3f, -1.f);
  std::vector<int32_t> lens = {4, 2, 0};
  auto t = Tensor::create(Device::cpu(), DType::kInt32, {B});
  std::copy(lens.begin(), lens.end(), reinterpret_cast<int32_t*>(t->data()));
  EXPECT_EQ(count_ops(import_string(model(g, 22)).graph, "while_loop"), symbolic ? 1u : 0u);
  auto out = run_model(model(g, 22), {f32_tensor({S, B, I}, x), t});
  auto [y, y_h] = rnn_with_lengths(d, x, w, r, h0, lens, reverse);
  expect_near(floats_of(out[0]), y);
  expect_near(floats_of(out[1]), y_h);
}

TEST(OnnxRecurrent, RunTimeSequenceLensMasksEachStep) { check_lengths(false); }

TEST(OnnxRecurrent, RunTimeSequenceLensStartsAReversePassAtEachLastStep) { check_lengths(true); }

TEST(OnnxRecurrent, ASymbolicSequenceLengthRunsAsALoopMaskedPerEntry) { check_lengths(false, true); }

TEST(OnnxRecurrent, ASymbolicSequenceLengthRunsAReverseLoopFromEachLastStep) { check_lengths(true, true); }

// ---- what ONNX forbids ----

Error recurrent_error(const std::vector<DimSpec>& x_dims, std::optional<int64_t> known_len = std::nullopt) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, x_dims)};
  g.outputs = {value_info("y_h", kFloat, {})};
  g.initializers = {tensor_f32("w", {1, 2, 2}, Vec(4, 0.1f)), tensor_f32("r", {1, 2, 2}, Vec(4, 0.1f))};
  std::vector<std::string> ins = {"x", "w", "r"};
  if (known_len) {
    g.initializers.push_back(tensor_i64("lens", {1}, {*known_len}));
    ins.insert(ins.end(), {"", "lens"});
  }
  g.nodes = {node("RNN", ins, {"", "y_h"}, {attr_int("hidden_size", 2)}, "rnn0")};
  return import_error(model(g, 22));
}

TEST(OnnxRecurrent, ASequenceLongerThanTheInputIsInvalid) {
  Error e = recurrent_error({int64_t{3}, int64_t{1}, int64_t{2}}, 4);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("node 0 'rnn0' (RNN)"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("sequence_lens holds 4"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing
