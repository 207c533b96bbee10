// End-to-end: small ONNX models built in the test, imported, compiled and run by the engine,
// against straightforward C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

// Importing `bytes` fails with UNIMPLEMENTED and a message that names each of `mentions`.
void expect_unimplemented(const std::string& bytes, const std::vector<std::string>& mentions) {
  Error e = import_error(bytes);
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  for (const std::string& m : mentions) EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << e.what();
}

std::vector<float> iota_floats(size_t n, float scale = 0.1f, float offset = -0.5f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(i % 17) - 0.03f * static_cast<float>(i % 5);
  return v;
}

// ---- MLP: Gemm + Relu + Gemm(transB, alpha, beta) ----

TEST(OnnxImport, MlpWithGemmAndRelu) {
  std::vector<float> w1 = iota_floats(4 * 5), b1 = iota_floats(5, 0.2f), w2 = iota_floats(3 * 5, 0.05f),
                     b2 = {0.1f, -0.2f, 0.3f};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("batch"), int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {std::string("batch"), int64_t{3}})};
  g.initializers = {tensor_f32("w1", {4, 5}, w1), tensor_f32("b1", {5}, b1), tensor_f32("w2", {3, 5}, w2),
                    tensor_f32("b2", {3}, b2)};
  g.nodes = {node("Gemm", {"x", "w1", "b1"}, {"h"}, {}, "fc1"), node("Relu", {"h"}, {"r"}),
             node("Gemm", {"r", "w2", "b2"}, {"y"}, {attr_int("transB", 1), attr_float("alpha", 0.5f), attr_float("beta", 2.f)})};
  std::string bytes = model(g);
  ImportedModel m = import_string(bytes);
  EXPECT_EQ(m.weights.size(), 4u);
  auto runner = compile_imported(std::move(m));
  for (int64_t batch : {1, 3}) {
    std::vector<float> x = iota_floats(static_cast<size_t>(batch * 4), 0.3f, -1.f);
    auto out = runner->execute({{f32_tensor({batch, 4}, x)}});
    std::vector<float> want;
    for (int64_t n = 0; n < batch; ++n) {
      float h[5];
      for (int j = 0; j < 5; ++j) {
        float s = b1[j];
        for (int k = 0; k < 4; ++k) s += x[n * 4 + k] * w1[k * 5 + j];
        h[j] = std::max(s, 0.f);
      }
      for (int j = 0; j < 3; ++j) {
        float s = 0;
        for (int k = 0; k < 5; ++k) s += h[k] * w2[j * 5 + k];
        want.push_back(0.5f * s + 2.f * b2[j]);
      }
    }
    expect_near(floats_of(out[0]), want);
  }
}

// ---- attention: q k^T / sqrt(d) -> softmax -> v, then LayerNormalization ----

TEST(OnnxImport, AttentionBlock) {
  const int S = 3, D = 4;
  std::vector<float> wq = iota_floats(D * D, 0.1f), wk = iota_floats(D * D, 0.07f, -0.3f),
                     wv = iota_floats(D * D, 0.05f, 0.2f), gamma = {1.f, 0.5f, 2.f, 1.5f}, beta = {0.f, 0.1f, -0.1f, 0.2f};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, std::string("seq"), int64_t{D}})};
  g.outputs = {value_info("y", kFloat, {int64_t{1}, std::string("seq"), int64_t{D}})};
  g.initializers = {tensor_f32("wq", {D, D}, wq), tensor_f32("wk", {D, D}, wk), tensor_f32("wv", {D, D}, wv),
                    tensor_f32("scale", {}, {2.f}), tensor_f32("gamma", {D}, gamma), tensor_f32("beta", {D}, beta)};
  g.nodes = {node("MatMul", {"x", "wq"}, {"q"}),
             node("MatMul", {"x", "wk"}, {"k"}),
             node("MatMul", {"x", "wv"}, {"v"}),
             node("Transpose", {"k"}, {"kt"}, {attr_ints("perm", {0, 2, 1})}),
             node("MatMul", {"q", "kt"}, {"s"}),
             node("Div", {"s", "scale"}, {"ss"}),
             node("Softmax", {"ss"}, {"p"}, {attr_int("axis", -1)}),
             node("MatMul", {"p", "v"}, {"a"}),
             node("Add", {"a", "x"}, {"res"}),
             node("LayerNormalization", {"res", "gamma", "beta"}, {"y"}, {attr_float("epsilon", 1e-5f)})};
  std::vector<float> x = iota_floats(S * D, 0.2f, -0.7f);
  auto out = run_model(model(g), {f32_tensor({1, S, D}, x)});
  auto mm = [](const std::vector<float>& a, const std::vector<float>& b, int n, int k, int m) {
    std::vector<float> c(static_cast<size_t>(n * m), 0.f);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        for (int t = 0; t < k; ++t) c[i * m + j] += a[i * k + t] * b[t * m + j];
    return c;
  };
  auto q = mm(x, wq, S, D, D), k = mm(x, wk, S, D, D), v = mm(x, wv, S, D, D);
  std::vector<float> want;
  for (int i = 0; i < S; ++i) {
    std::vector<float> p(S);
    float mx = -1e30f, sum = 0;
    for (int j = 0; j < S; ++j) {
      float s = 0;
      for (int t = 0; t < D; ++t) s += q[i * D + t] * k[j * D + t];
      p[j] = s / 2.f;
      mx = std::max(mx, p[j]);
    }
    for (float& e : p) sum += (e = std::exp(e - mx));
    std::vector<float> row(D);
    for (int t = 0; t < D; ++t) {
      float a = 0;
      for (int j = 0; j < S; ++j) a += p[j] / sum * v[j * D + t];
      row[t] = a + x[i * D + t];
    }
    float mean = 0, var = 0;
    for (float r : row) mean += r / D;
    for (float r : row) var += (r - mean) * (r - mean) / D;
    for (int t = 0; t < D; ++t) want.push_back((row[t] - mean) / std::sqrt(var + 1e-5f) * gamma[t] + beta[t]);
  }
  expect_near(floats_of(out[0]), want, 1e-4f);
}

// ---- conv + batch norm + relu + max pool + global average pool ----

TEST(OnnxImport, ConvBatchNormReluPool) {
  const int C = 2, F = 3, H = 5, W = 5;
  std::vector<float> w = iota_floats(F * C * 9, 0.05f, -0.4f), b = {0.1f, -0.1f, 0.2f};
  std::vector<float> scale = {1.f, 2.f, 0.5f}, bias = {0.f, 0.1f, -0.2f}, mean = {0.1f, 0.f, -0.1f},
                     var = {1.f, 0.5f, 2.f};
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{C}, int64_t{H}, int64_t{W}})};
  g.outputs = {value_info("y", kFloat, {}), value_info("gap", kFloat, {})};
  g.initializers = {tensor_f32("w", {F, C, 3, 3}, w), tensor_f32("b", {F}, b), tensor_f32("s", {F}, scale),
                    tensor_f32("bb", {F}, bias), tensor_f32("m", {F}, mean), tensor_f32("v", {F}, var)};
  g.nodes = {node("Conv", {"x", "w", "b"}, {"c"}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}),
             node("BatchNormalization", {"c", "s", "bb", "m", "v"}, {"n"}, {attr_float("epsilon", 1e-5f)}),
             node("Relu", {"n"}, {"r"}),
             node("MaxPool", {"r"}, {"y"}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}),
             node("GlobalAveragePool", {"r"}, {"gap"})};
  std::vector<float> x = iota_floats(C * H * W, 0.1f, -0.8f);
  auto out = run_model(model(g), {f32_tensor({1, C, H, W}, x)});
  std::vector<float> r(static_cast<size_t>(F * H * W));
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j) {
        float s = b[f];
        for (int c = 0; c < C; ++c)
          for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj) {
              int ii = i + di - 1, jj = j + dj - 1;
              if (ii < 0 || jj < 0 || ii >= H || jj >= W) continue;
              s += x[(c * H + ii) * W + jj] * w[((f * C + c) * 3 + di) * 3 + dj];
            }
        float n = (s - mean[f]) / std::sqrt(var[f] + 1e-5f) * scale[f] + bias[f];
        r[(f * H + i) * W + j] = std::max(n, 0.f);
      }
  std::vector<float> pooled, gap;
  for (int f = 0; f < F; ++f) {
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        float m = -1e30f;
        for (int di = 0; di < 2; ++di)
          for (int dj = 0; dj < 2; ++dj) m = std::max(m, r[(f * H + 2 * i + di) * W + 2 * j + dj]);
        pooled.push_back(m);
      }
    float s = 0;
    for (int k = 0; k < H * W; ++k) s += r[f * H * W + k];
    gap.push_back(s / (H * W));
  }
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{1, F, 2, 2}));
  expect_near(floats_of(out[0]), pooled);
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{1, F, 1, 1}));
  expect_near(floats_of(out[1]), gap);
}

// ---- dynamic shapes: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Slice, Gather ----

TEST(OnnxImport, ShapeArithmeticDrivesReshapeAndSlice) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("batch"), int64_t{6}})};
  g.outputs = {value_info("y", kFloat, {}), value_info("z", kFloat, {}), value_info("t", kFloat, {})};
  g.initializers = {tensor_i64("zero", {}, {0}), tensor_i64("tail", {2}, {2, 3}), tensor_i64("axes0", {1}, {0}),
                    tensor_i64("starts", {1}, {1}), tensor_i64("ends", {1}, {INT64_MAX}),
                    tensor_i64("axes", {1}, {2}), tensor_i64("idx", {2}, {2, -1})};
  g.nodes = {node("Shape", {"x"}, {"shape"}),
             node("Gather", {"shape", "zero"}, {"b"}, {attr_int("axis", 0)}),
             node("Unsqueeze", {"b", "axes0"}, {"b1"}),
             node("Concat", {"b1", "tail"}, {"new_shape"}, {attr_int("axis", 0)}),
             node("Reshape", {"x", "new_shape"}, {"r"}),
             node("Slice", {"r", "starts", "ends", "axes"}, {"y"}),
             node("Gather", {"x", "idx"}, {"z"}, {attr_int("axis", 1)}),
             node("Flatten", {"r"}, {"t"}, {attr_int("axis", 2)})};
  auto runner = compile_imported(import_string(model(g)));
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto out = runner->execute({{f32_tensor({2, 6}, x)}});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{2, 2, 2}));
  expect_near(floats_of(out[0]), {1, 2, 4, 5, 7, 8, 10, 11});
  EXPECT_EQ(out[1]->dims(), (std::vector<int64_t>{2, 2}));
  expect_near(floats_of(out[1]), {2, 5, 8, 11});
  EXPECT_EQ(out[2]->dims(), (std::vector<int64_t>{4, 3}));
}

TEST(OnnxImport, FloatArithmeticOnKnownValuesFoldsIntoAShape) {
  // As exported resizes compute sizes: float(dim) * scale, rounded; and a shape split into
  // its dims and put back together (AffineGrid's function body). 6 * float32(2/3) is
  // 4.0000001 in double but exactly 4 in float32, as at run time: its ceiling is 4.
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {4, 6})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("scale", {}, {1.5f}), tensor_f32("two_thirds", {}, {2.0f / 3})};
  g.nodes = {node("Shape", {"x"}, {"s"}),
             node("Split", {"s"}, {"rows", "cols"}, {attr_int("num_outputs", 2)}),
             node("Cast", {"rows"}, {"rows_f"}, {attr_int("to", kFloat)}),
             node("Mul", {"rows_f", "scale"}, {"r6"}),
             node("Cast", {"cols"}, {"cols_f"}, {attr_int("to", kFloat)}),
             node("Mul", {"cols_f", "two_thirds"}, {"c4_f"}),
             node("Ceil", {"c4_f"}, {"c4"}),
             node("Cast", {"r6"}, {"r6_i"}, {attr_int("to", kInt64)}),
             node("Cast", {"c4"}, {"c4_i"}, {attr_int("to", kInt64)}),
             node("Concat", {"r6_i", "c4_i"}, {"shape"}, {attr_int("axis", 0)}),
             node("Reshape", {"x", "shape"}, {"y"})};
  ImportedModel m = import_string(model(g, 18));
  EXPECT_EQ(m.graph.type(m.graph.outputs()[0].value).dims, (std::vector<Dim>{Dim(6), Dim(4)}));
  EXPECT_EQ(m.graph.ops().size(), 1u);  // only the reshape: the arithmetic all folded
}

TEST(OnnxImport, UnnamedDimsGetFreshSymbols) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string(""), std::string("n m")})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Neg", {"x"}, {"y"})};
  ImportedModel m = import_string(model(g));
  const TensorType& t = m.graph.type(m.graph.inputs()[0].value);
  ASSERT_EQ(t.rank(), 2);
  EXPECT_TRUE(t.dims[0].is_symbolic());
  EXPECT_EQ(t.dims[1].symbol(), "n_m");
}

// ---- Attention (opset 23): causal, grouped-query, with a present key ----

// softmax(q k^T * scale + causal) v per head, with kv head h / (Hq / Hkv) serving head h.
std::vector<float> causal_attention(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, int hq, int hkv, int s, int d) {
  std::vector<float> out(static_cast<size_t>(hq * s * d), 0.f);
  float scale = 1.f / std::sqrt(static_cast<float>(d));
  for (int h = 0; h < hq; ++h) {
    int g = h / (hq / hkv);
    for (int i = 0; i < s; ++i) {
      std::vector<float> w(static_cast<size_t>(i + 1));
      float mx = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        float dot = 0;
        for (int e = 0; e < d; ++e) dot += q[(h * s + i) * d + e] * k[(g * s + j) * d + e];
        w[j] = dot * scale;
        mx = std::max(mx, w[j]);
      }
      for (float& x : w) sum += (x = std::exp(x - mx));
      for (int j = 0; j <= i; ++j)
        for (int e = 0; e < d; ++e) out[(h * s + i) * d + e] += w[j] / sum * v[(g * s + j) * d + e];
    }
  }
  return out;
}

TEST(OnnxImport, AttentionCausalGroupedQuery) {
  const int Hq = 4, Hkv = 2, S = 3, D = 4;
  GraphSpec g;
  g.inputs = {value_info("q", kFloat, {int64_t{1}, int64_t{Hq}, int64_t{S}, int64_t{D}}),
              value_info("k", kFloat, {int64_t{1}, int64_t{Hkv}, int64_t{S}, int64_t{D}}),
              value_info("v", kFloat, {int64_t{1}, int64_t{Hkv}, int64_t{S}, int64_t{D}})};
  g.outputs = {value_info("y", kFloat, {}), value_info("present_k", kFloat, {})};
  g.nodes = {node("Attention", {"q", "k", "v"}, {"y", "present_k"}, {attr_int("is_causal", 1)})};
  std::vector<float> q = iota_floats(Hq * S * D, 0.11f), k = iota_floats(Hkv * S * D, 0.07f, -0.3f),
                     v = iota_floats(Hkv * S * D, 0.05f, 0.2f);
  auto out = run_model(model(g, 23), {f32_tensor({1, Hq, S, D}, q), f32_tensor({1, Hkv, S, D}, k),
                                      f32_tensor({1, Hkv, S, D}, v)});
  expect_near(floats_of(out[0]), causal_attention(q, k, v, Hq, Hkv, S, D));
  expect_near(floats_of(out[1]), k);
}

TEST(OnnxImport, AttentionCausalNeedsStaticSequenceLengths) {
  GraphSpec g;
  g.inputs = {value_info("q", kFloat, {int64_t{1}, int64_t{2}, std::string("seq"), int64_t{4}}),
              value_info("k", kFloat, {int64_t{1}, int64_t{2}, std::string("seq"), int64_t{4}}),
              value_info("v", kFloat, {int64_t{1}, int64_t{2}, std::string("seq"), int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Attention", {"q", "k", "v"}, {"y"}, {attr_int("is_causal", 1)}, "attn")};
  expect_unimplemented(model(g, 23), {"node 0 'attn' (Attention)", "is_causal"});
}

// ---- Resize with known scales; scales computed at run time are unimplemented ----

TEST(OnnxImport, ResizeNearestWithKnownScales) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("scales", {4}, {1.f, 1.f, 2.f, 3.f})};
  g.nodes = {node("Resize", {"x", "", "scales"}, {"y"}, {attr_string("mode", "nearest")})};
  auto out = run_model(model(g, 19), {f32_tensor({1, 1, 2, 2}, {1.f, 2.f, 3.f, 4.f})});
  expect_near(floats_of(out[0]), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(OnnxImport, ResizeWithRuntimeScalesIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}),
              value_info("scales", kFloat, {int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Resize", {"x", "", "scales"}, {"y"}, {attr_string("mode", "linear")}, "up")};
  expect_unimplemented(model(g, 19), {"node 0 'up' (Resize)", "'scales'"});
}

// ---- errors ----

TEST(OnnxImport, UnsupportedOperatorNamesTheNode) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Relu", {"x"}, {"r"}), node("StringNormalizer", {"r"}, {"y"}, {}, "my_norm")};
  Error e = import_error(model(g));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("node 1 'my_norm' (StringNormalizer)"), std::string::npos) << e.what();
}

// Opset 7 brought numpy broadcasting, which the binary operators' mappings assume.
TEST(OnnxImport, OpsetBeforeSevenIsUnimplemented) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Relu", {"x"}, {"y"})};
  Error e = import_error(model(g, 6));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("opset 6"), std::string::npos) << e.what();
  EXPECT_NO_THROW(import_onnx_bytes(reinterpret_cast<const uint8_t*>(model(g, 7).data()), model(g, 7).size(), ""));
}

// An operator whose older versions mean something else is refused at those opsets only.
TEST(OnnxImport, OperatorVersionNotMappedIsUnimplementedNamingIt) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("scales", {4}, {1, 1, 2, 2})};
  g.nodes = {node("Resize", {"x", "scales"}, {"y"})};
  Error e = import_error(model(g, 10));
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  EXPECT_NE(std::string(e.what()).find("opset 10's version of Resize is not supported"), std::string::npos)
      << e.what();
  EXPECT_EQ(oldest_mapped_opset("Resize"), 11);
  EXPECT_EQ(oldest_mapped_opset("Relu"), kMinOpset);
}

// A shape operand computed at run time from graph inputs is InputValuesNeeded naming them
// (through the ops between, but not through Shape, which reads shapes only); with their
// values bound the model imports, those inputs known and no longer the graph's.
TEST(OnnxImport, RuntimeShapeOperandNeedsTheInputsItComesFrom) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{6}}), value_info("s", kInt64, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Shape", {"x"}, {"n"}), node("Add", {"s", "n"}, {"t"}), node("Sub", {"t", "n"}, {"u"}),
             node("Reshape", {"x", "u"}, {"y"})};
  const std::string bytes = model(g);
  auto import = [&](const NamedTensors& values) {
    return import_onnx_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "", values,
                             /*bind_dims=*/false);
  };
  {  // binding dims (the default), the shape's entries are symbols a bind_dims names
    ImportedModel bound = import_onnx_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "");
    size_t binds = 0;
    for (const Op& op : bound.graph.ops()) binds += op.schema->name == "bind_dims";
    EXPECT_EQ(binds, 1u);
    const std::vector<Dim> dims = bound.graph.type(bound.graph.outputs()[0].value).dims;
    ASSERT_EQ(dims.size(), 2u);
    EXPECT_TRUE(dims[0].is_symbolic() && dims[1].is_symbolic());
  }
  try {
    import({});
    FAIL() << "imported a Reshape whose shape is an input";
  } catch (const InputValuesNeeded& e) {
    EXPECT_EQ(e.code(), Code::kUnimplemented);
    EXPECT_NE(std::string(e.what()).find("(Reshape)"), std::string::npos) << e.what();
    EXPECT_EQ(e.inputs(), std::vector<std::string>{"s"});
  }
  auto s = Tensor::create(Device::cpu(), DType::kInt64, {2});
  const int64_t shape[2] = {2, 3};
  std::memcpy(s->data(), shape, sizeof shape);
  ImportedModel m = import({{"s", s}});
  ASSERT_EQ(m.graph.inputs().size(), 1u);
  EXPECT_EQ(m.graph.type(m.graph.outputs()[0].value).dims, (std::vector<Dim>{Dim(2), Dim(3)}));
  auto wrong = Tensor::create(Device::cpu(), DType::kInt32, {2});
  EXPECT_THROW(import({{"s", wrong}}), Error);
  try {
    import({{"nope", s}});
    FAIL() << "a value for no graph input was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'nope', which is not a graph input"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, UndefinedInputIsInvalid) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Add", {"x", "nope"}, {"y"})};
  EXPECT_EQ(import_error(model(g)).code(), Code::kInvalidArgument);
}

TEST(OnnxImport, TruncatedOrCorruptFilesFailCleanly) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("b"), int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_f32("w", {4, 2}, iota_floats(8)), tensor_i64("shape", {2}, {-1, 1})};
  g.nodes = {node("MatMul", {"x", "w"}, {"h"}), node("Reshape", {"h", "shape"}, {"y"})};
  std::string bytes = model(g);
  EXPECT_EQ(import_error(bytes).code(), Code::kOk) << import_error(bytes).what();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Error e = import_error(bytes.substr(0, n));
    EXPECT_NE(e.code(), Code::kInternal) << e.what();
  }
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string b = bytes;
    for (int i = 0; i < 3; ++i) b[rng() % b.size()] = static_cast<char>(rng());
    Error e = import_error(b);
    EXPECT_NE(e.code(), Code::kInternal) << e.what();
  }
}

TEST(OnnxImport, RawDataOfTheWrongSizeIsDataLoss) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_raw("w", kFloat, {1000000000}, std::string(8, '\0'))};
  g.nodes = {node("Add", {"x", "w"}, {"y"})};
  Error e = import_error(model(g));
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
}

}  // namespace
}  // namespace maxc::onnx::testing
