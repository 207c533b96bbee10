// CumProd, ReverseSequence, MaxUnpool, TensorScatter, Trilu with a run-time k, and the
// ScatterND/ScatterElements reductions, against loops written here from the ONNX specs; and
// the variants we cannot import, refused as UNIMPLEMENTED naming the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Vec = std::vector<float>;
using Ints = std::vector<int64_t>;

Ref<Tensor> i64_tensor(std::vector<int64_t> dims, const Ints& v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, std::move(dims));
  std::memcpy(t->data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

// ---- CumProd ----

// The products along the rows of a [rows, n] matrix, one at a time.
Vec cumprod_rows(const Vec& x, int64_t rows, int64_t n, bool exclusive, bool reverse) {
  Vec y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 1;
    for (int64_t s = 0; s < n; ++s) {
      size_t at = static_cast<size_t>(r * n + (reverse ? n - 1 - s : s));
      if (!exclusive) acc *= x[at];
      y[at] = static_cast<float>(acc);
      if (exclusive) acc *= x[at];
    }
  }
  return y;
}

TEST(OnnxCumProd, EveryExclusiveAndReverseCombinationOverANonPowerOfTwoAxis) {
  const int64_t R = 2, N = 7;
  Vec x = {1.5f, -2, 0.5f, 3, -1, 2, 0.25f, 2, 0, -1.5f, 1, 4, -0.5f, 1.25f};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {R, N})};
  g.initializers = {tensor_i64("axis", {}, {-1})};
  for (int i = 0; i < 4; ++i) {
    std::string y = "y" + std::to_string(i);
    g.outputs.push_back(value_info(y, kFloat, {}));
    g.nodes.push_back(node("CumProd", {"x", "axis"}, {y}, {attr_int("exclusive", i & 1), attr_int("reverse", i >> 1)}));
  }
  auto out = run_model(model(g, 26), {f32_tensor({R, N}, x)});
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("exclusive " + std::to_string(i & 1) + ", reverse " + std::to_string(i >> 1));
    EXPECT_EQ(out[i]->dims(), (std::vector<int64_t>{R, N}));
    expect_near(floats_of(out[i]), cumprod_rows(x, R, N, i & 1, i >> 1), 1e-5f);
  }
}

TEST(OnnxCumProd, AlongTheFirstAxisOfAOneLongAxis) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{3}})};
  g.initializers = {tensor_i64("axis", {}, {0})};
  g.outputs = {value_info("y", kFloat, {}), value_info("e", kFloat, {})};
  g.nodes = {node("CumProd", {"x", "axis"}, {"y"}), node("CumProd", {"x", "axis"}, {"e"}, {attr_int("exclusive", 1)})};
  auto out = run_model(model(g, 26), {f32_tensor({1, 3}, {2, -3, 4})});
  expect_near(floats_of(out[0]), {2, -3, 4});
  expect_near(floats_of(out[1]), {1, 1, 1});
}

// [rows, n] transposed, so a scan over the columns is one over rows.
Vec transposed(const Vec& x, int64_t rows, int64_t n) {
  Vec y(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) y[static_cast<size_t>(j * rows + r)] = x[static_cast<size_t>(r * n + j)];
  return y;
}

TEST(OnnxCumProd, ARunTimeAxisPicksAmongTheScansOfEveryAxis) {
  const int64_t R = 3, N = 5;
  Vec x = {1, 2, -3, 0.5f, 2, -1, 1.5f, 2, 4, -0.5f, 3, 0, 2, 1, -2};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {R, N}), value_info("axis", kInt64, {})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("CumProd", {"x", "axis"}, {"y"}, {attr_int("reverse", 1)})};
  std::string bytes = model(g, 26);
  Vec along_rows = cumprod_rows(x, R, N, false, true);
  Vec along_cols = transposed(cumprod_rows(transposed(x, R, N), N, R, false, true), N, R);
  for (int64_t axis : {0, 1, -1, -2}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    auto out = run_model(bytes, {f32_tensor({R, N}, x), i64_tensor({}, {axis})});
    expect_near(floats_of(out[0]), axis == 1 || axis == -1 ? along_rows : along_cols, 1e-5f);
  }
}

TEST(OnnxCumProd, ASymbolicAxisLengthIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}, std::string("n")})};
  g.initializers = {tensor_i64("axis", {}, {1})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("CumProd", {"x", "axis"}, {"y"}, {}, "scan")};
  expect_unimplemented_naming(model(g, 26), "node 0 'scan' (CumProd)", "symbolic dim n");
  // A run-time axis needs every axis static, as it may name any of them.
  g.initializers = {};
  g.inputs = {value_info("x", kFloat, {std::string("b"), int64_t{3}}), value_info("axis", kInt64, {})};
  expect_unimplemented_naming(model(g, 26), "node 0 'scan' (CumProd)", "symbolic dim b");
}

// ---- ReverseSequence ----

// x[b, t, inner...] laid out [B, T, inner] (batch first) or [T, B, inner] (time first).
Vec reverse_sequences(const Vec& x, int64_t batch, int64_t time, int64_t inner, const Ints& lens, bool batch_first) {
  Vec y(x.size());
  auto at = [&](int64_t b, int64_t t, int64_t i) {
    return static_cast<size_t>((batch_first ? b * time + t : t * batch + b) * inner + i);
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < time; ++t) {
      int64_t len = lens[static_cast<size_t>(b)];
      int64_t src = t < len ? len - 1 - t : t;
      for (int64_t i = 0; i < inner; ++i) y[at(b, t, i)] = x[at(b, src, i)];
    }
  return y;
}

TEST(OnnxReverseSequence, RunTimeLengthsWithBatchFirstAndTimeFirst) {
  const int64_t B = 3, T = 4, I = 2;
  Vec x(B * T * I);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3;
  Ints lens = {4, 0, 2};
  GraphSpec g;
  g.inputs = {value_info("bt", kFloat, {B, T, I}), value_info("tb", kFloat, {T, B, I}),
              value_info("lens", kInt64, {B})};
  g.outputs = {value_info("y_bt", kFloat, {}), value_info("y_tb", kFloat, {})};
  g.nodes = {node("ReverseSequence", {"bt", "lens"}, {"y_bt"}, {attr_int("batch_axis", 0), attr_int("time_axis", 1)}),
             node("ReverseSequence", {"tb", "lens"}, {"y_tb"})};
  auto out = run_model(model(g, 17), {f32_tensor({B, T, I}, x), f32_tensor({T, B, I}, x), i64_tensor({B}, lens)});
  EXPECT_EQ(floats_of(out[0]), reverse_sequences(x, B, T, I, lens, true));
  EXPECT_EQ(floats_of(out[1]), reverse_sequences(x, B, T, I, lens, false));
}

// ---- MaxUnpool ----

TEST(OnnxMaxUnpool, RunTimeIndicesWithAndWithoutOutputShape) {
  // X [1, 2, 2, 2] unpooled by a 2x2 kernel with stride 2: [1, 2, 4, 4]; indices run over
  // that whole tensor, as MaxPool's do.
  Vec x = {1, 2, 3, 4, 5, 6, 7, 8};
  Ints idx = {0, 3, 9, 15, 16 + 5, 16 + 6, 16 + 8, 16 + 14};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{2}, int64_t{2}}),
              value_info("i", kInt64, {int64_t{1}, int64_t{2}, int64_t{2}, int64_t{2}})};
  g.initializers = {tensor_i64("shape", {4}, {1, 2, 5, 4})};
  g.outputs = {value_info("y", kFloat, {}), value_info("big", kFloat, {})};
  std::vector<Msg> attrs = {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})};
  g.nodes = {node("MaxUnpool", {"x", "i"}, {"y"}, attrs), node("MaxUnpool", {"x", "i", "shape"}, {"big"}, attrs)};
  auto out = run_model(model(g, 22), {f32_tensor({1, 2, 2, 2}, x), i64_tensor({1, 2, 2, 2}, idx)});
  Vec want(32, 0.f);
  for (size_t k = 0; k < x.size(); ++k) want[static_cast<size_t>(idx[k])] = x[k];
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(floats_of(out[0]), want);
  // output_shape [1, 2, 5, 4]: the unpooled rows, then a row of zeros per channel.
  Vec big(40, 0.f);
  for (int64_t ch = 0; ch < 2; ++ch)
    std::copy(want.begin() + ch * 16, want.begin() + ch * 16 + 16, big.begin() + ch * 20);
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{1, 2, 5, 4}));
  EXPECT_EQ(floats_of(out[1]), big);
}

TEST(OnnxMaxUnpool, ARunTimeOutputShapeIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}),
              value_info("i", kInt64, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}),
              value_info("shape", kInt64, {int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("MaxUnpool", {"x", "i", "shape"}, {"y"}, {attr_ints("kernel_shape", {2, 2})}, "unpool")};
  expect_unimplemented_naming(model(g, 22), "node 0 'unpool' (MaxUnpool)", "'output_shape'");
}

// ---- TensorScatter ----

// ONNX's loop: update[b, s, d] goes to cache[b, w[b] + s (mod L when circular), d].
Vec tensor_scatter(Vec cache, const Vec& upd, int64_t B, int64_t L, int64_t S, int64_t D, const Ints& w, bool circular) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t p = w[static_cast<size_t>(b)] + s;
      if (circular) p %= L;
      for (int64_t d = 0; d < D; ++d)
        cache[static_cast<size_t>((b * L + p) * D + d)] = upd[static_cast<size_t>((b * S + s) * D + d)];
    }
  return cache;
}

TEST(OnnxTensorScatter, LinearAndCircularWritesAtRunTimeIndices) {
  const int64_t B = 2, L = 5, S = 3, D = 2;
  Vec cache(B * L * D), upd(B * S * D);
  for (size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<float>(i);
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = -1.f - static_cast<float>(i);
  GraphSpec g;
  g.inputs = {value_info("cache", kFloat, {B, L, D}), value_info("upd", kFloat, {B, S, D}),
              value_info("w", kInt64, {B})};
  g.outputs = {value_info("lin", kFloat, {}), value_info("zero", kFloat, {})};
  g.nodes = {node("TensorScatter", {"cache", "upd", "w"}, {"lin"}),
             node("TensorScatter", {"cache", "upd"}, {"zero"}, {attr_int("axis", 1)})};
  Ints w = {2, 1};
  auto out = run_model(model(g, 24), {f32_tensor({B, L, D}, cache), f32_tensor({B, S, D}, upd), i64_tensor({B}, w)});
  EXPECT_EQ(floats_of(out[0]), tensor_scatter(cache, upd, B, L, S, D, w, false));
  EXPECT_EQ(floats_of(out[1]), tensor_scatter(cache, upd, B, L, S, D, {0, 0}, false));
  // Circular writes wrap around the end of the cache (linear ones past it are refused).
  g.outputs = {value_info("circ", kFloat, {})};
  g.nodes = {node("TensorScatter", {"cache", "upd", "w"}, {"circ"}, {attr_string("mode", "circular")})};
  Ints wrap = {4, 3};
  out = run_model(model(g, 24), {f32_tensor({B, L, D}, cache), f32_tensor({B, S, D}, upd), i64_tensor({B}, wrap)});
  EXPECT_EQ(floats_of(out[0]), tensor_scatter(cache, upd, B, L, S, D, wrap, true));
}

// ---- Trilu with a run-time k ----

Vec trilu(const Vec& x, int64_t batch, int64_t m, int64_t n, int64_t k, bool upper) {
  Vec y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        size_t at = static_cast<size_t>((b * m + i) * n + j);
        y[at] = (upper ? j - i >= k : j - i <= k) ? x[at] : 0.f;
      }
  return y;
}

TEST(OnnxTrilu, RunTimeKBuildsAMask) {
  const int64_t B = 2, M = 3, N = 4;
  Vec x(B * M * N);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.f + static_cast<float>(i);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {B, M, N}), value_info("k", kInt64, {})};
  g.outputs = {value_info("up", kFloat, {}), value_info("lo", kFloat, {})};
  g.nodes = {node("Trilu", {"x", "k"}, {"up"}), node("Trilu", {"x", "k"}, {"lo"}, {attr_int("upper", 0)})};
  std::string bytes = model(g, 14);
  for (int64_t k : {-2, 0, 1, 5}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    auto out = run_model(bytes, {f32_tensor({B, M, N}, x), i64_tensor({}, {k})});
    EXPECT_EQ(floats_of(out[0]), trilu(x, B, M, N, k, true));
    EXPECT_EQ(floats_of(out[1]), trilu(x, B, M, N, k, false));
  }
}

TEST(OnnxTrilu, RunTimeKOverSymbolicDims) {
  const int64_t M = 4, N = 2;
  Vec x(M * N);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.f + static_cast<float>(i);
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("m"), std::string("n")}), value_info("k", kInt64, {})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Trilu", {"x", "k"}, {"y"}, {attr_int("upper", 0)})};
  auto out = run_model(model(g, 14), {f32_tensor({M, N}, x), i64_tensor({}, {-1})});
  EXPECT_EQ(floats_of(out[0]), trilu(x, 1, M, N, -1, false));
}

// ---- ScatterND and ScatterElements reductions ----

float reduce_one(const std::string& how, float a, float b) {
  if (how == "add") return a + b;
  if (how == "mul") return a * b;
  if (how == "max") return std::max(a, b);
  return std::min(a, b);
}

const std::vector<std::string> kReductions = {"add", "mul", "max", "min"};

TEST(OnnxScatterReduction, ScatterNdRowsWithRepeatedRunTimeIndices) {
  Vec data = {1, 2, 3, 4, 5, 6, 7, 8}, upd = {2, -1, 3, 0.5f, -4, 5};
  Ints rows = {1, 3, 1};  // row 1 twice
  GraphSpec g;
  g.inputs = {value_info("data", kFloat, {int64_t{4}, int64_t{2}}), value_info("idx", kInt64, {int64_t{3}, int64_t{1}}),
              value_info("upd", kFloat, {int64_t{3}, int64_t{2}})};
  for (const std::string& how : kReductions) {
    g.outputs.push_back(value_info(how, kFloat, {}));
    g.nodes.push_back(node("ScatterND", {"data", "idx", "upd"}, {how}, {attr_string("reduction", how)}));
  }
  auto out = run_model(model(g, 18), {f32_tensor({4, 2}, data), i64_tensor({3, 1}, rows), f32_tensor({3, 2}, upd)});
  for (size_t r = 0; r < kReductions.size(); ++r) {
    SCOPED_TRACE(kReductions[r]);
    Vec want = data;
    for (size_t n = 0; n < rows.size(); ++n)
      for (size_t j = 0; j < 2; ++j) {
        float& o = want[static_cast<size_t>(rows[n]) * 2 + j];
        o = reduce_one(kReductions[r], o, upd[n * 2 + j]);
      }
    EXPECT_EQ(floats_of(out[r]), want);
  }
}

TEST(OnnxScatterReduction, ScatterElementsAlongAxisOneWithRepeatedRunTimeIndices) {
  Vec data = {1, 2, 3, 4, -1, -2, -3, -4}, upd = {5, 6, 0.5f, 2, 3, -7};
  Ints idx = {0, 0, 3, 2, -2, 1};  // row 0 hits column 0 twice, row 1 column 2 twice
  GraphSpec g;
  g.inputs = {value_info("data", kFloat, {int64_t{2}, int64_t{4}}), value_info("idx", kInt64, {int64_t{2}, int64_t{3}}),
              value_info("upd", kFloat, {int64_t{2}, int64_t{3}})};
  for (const std::string& how : kReductions) {
    g.outputs.push_back(value_info(how, kFloat, {}));
    g.nodes.push_back(node("ScatterElements", {"data", "idx", "upd"}, {how},
                           {attr_int("axis", 1), attr_string("reduction", how)}));
  }
  auto out = run_model(model(g, 18), {f32_tensor({2, 4}, data), i64_tensor({2, 3}, idx), f32_tensor({2, 3}, upd)});
  for (size_t r = 0; r < kReductions.size(); ++r) {
    SCOPED_TRACE(kReductions[r]);
    Vec want = data;
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 3; ++j) {
        int64_t col = idx[i * 3 + j] < 0 ? idx[i * 3 + j] + 4 : idx[i * 3 + j];
        float& o = want[i * 4 + static_cast<size_t>(col)];
        o = reduce_one(kReductions[r], o, upd[i * 3 + j]);
      }
    EXPECT_EQ(floats_of(out[r]), want);
  }
}

TEST(OnnxScatterReduction, AReductionOnInt8IsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("data", kInt8, {int64_t{4}}), value_info("idx", kInt64, {int64_t{2}, int64_t{1}}),
              value_info("upd", kInt8, {int64_t{2}})};
  g.outputs = {value_info("y", kInt8, {})};
  g.nodes = {node("ScatterND", {"data", "idx", "upd"}, {"y"}, {attr_string("reduction", "add")}, "acc")};
  expect_unimplemented_naming(model(g, 18), "node 0 'acc' (ScatterND)", "int8");
}

TEST(OnnxScatterReduction, AnUnknownReductionIsInvalid) {
  GraphSpec g;
  g.inputs = {value_info("data", kFloat, {int64_t{4}}), value_info("idx", kInt64, {int64_t{2}}),
              value_info("upd", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("ScatterElements", {"data", "idx", "upd"}, {"y"}, {attr_string("reduction", "xor")}, "acc")};
  Error e = import_error(model(g, 18));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("node 0 'acc' (ScatterElements)"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing
