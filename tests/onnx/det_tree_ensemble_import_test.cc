// Det (Gaussian elimination with partial pivoting, unrolled) and the ai.onnx.ml TreeEnsemble
// (unrolled traversal over constant tables), each against a C++ reference: Det against the
// Leibniz formula, TreeEnsemble against a direct walk of the trees; and variants refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

// det of the row-major n x n matrix a, by the sum over permutations.
double leibniz_det(const std::vector<float>& a, int n, size_t offset) {
  std::vector<int> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  double total = 0;
  do {
    int inversions = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) inversions += p[i] > p[j];
    double term = inversions % 2 ? -1 : 1;
    for (int i = 0; i < n; ++i) term *= a[offset + static_cast<size_t>(i * n + p[static_cast<size_t>(i)])];
    total += term;
  } while (std::next_permutation(p.begin(), p.end()));
  return total;
}

std::string det_model(const std::vector<DimSpec>& in, const std::vector<DimSpec>& out) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, in)};
  g.outputs = {value_info("y", kFloat, out)};
  g.nodes = {node("Det", {"x"}, {"y"}, {}, "det")};
  return model(g);
}

TEST(OnnxDet, BatchOf4x4MatchesLeibnizIncludingPivotingAndSingular) {
  const int n = 4;
  std::vector<float> x = {
      // needs a row swap at the first step (zero top-left) and later
      0, 2, 1, 3,  1, 0, 4, 2,  5, 1, 0, 1,  2, 3, 1, 0,
      // singular: row 3 = row 0 + row 1
      1, 2, 3, 4,  0.5f, -1, 2, 1,  3, 3, 1, 0,  1.5f, 1, 5, 5,
      // general
      2.5f, -1, 0.25f, 3,  -2, 4, 1, -0.5f,  1, 1, -3, 2,  0.75f, -2, 2, 1,
  };
  const auto out = run_model(det_model({3, n, n}, {3}), {f32_tensor({3, n, n}, x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> want;
  for (size_t b = 0; b < 3; ++b) want.push_back(static_cast<float>(leibniz_det(x, n, b * n * n)));
  expect_near(floats_of(out[0]), want, 1e-3f);
  EXPECT_EQ(out[0]->rank(), 1);
}

TEST(OnnxDet, SingleMatrixGivesAScalar) {
  const std::vector<float> x = {0, 1, 3, 2, -1, 4, 1, 5, 0.5f};
  const auto out = run_model(det_model({3, 3}, {}), {f32_tensor({3, 3}, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0]->rank() == 0);
  expect_near(floats_of(out[0]), {static_cast<float>(leibniz_det(x, 3, 0))}, 1e-4f);
}

TEST(OnnxDet, SymbolicMatrixSizeIsUnimplemented) {
  expect_unimplemented_naming(det_model({"n", "n"}, {}), "det", "symbolic");
}

// ---- TreeEnsemble ----------------------------------------------------------------------------

const char* kMl = "ai.onnx.ml";

std::string ml_model(const GraphSpec& g) { return model_with_opsets(g, {{kMl, 5}}); }

Msg attr_u8_tensor(const std::string& name, const std::vector<uint8_t>& v) {
  return attr_tensor(name, tensor_raw(name, kUInt8, {static_cast<int64_t>(v.size())}, raw_of(v.data(), v.size())));
}
Msg attr_f32_tensor(const std::string& name, const std::vector<float>& v) {
  return attr_tensor(name, tensor_f32(name, {static_cast<int64_t>(v.size())}, v));
}

// Two trees over 2 features and 3 targets.
//   tree 0: node 0: x0 < 1.5 ? node 1 : leaf 2;  node 1: x1 in {2, 4} ? leaf 0 : leaf 1
//   tree 1: node 2: x1 >= 0 (NaN tracks true) ? leaf 3 : node 3;  node 3: x0 != 7 ? leaf 4 : leaf 5
struct Ensemble {
  std::vector<int64_t> features = {0, 1, 1, 0};
  std::vector<uint8_t> modes = {1, 6, 2, 5};  // LT, MEMBER, GTE, NEQ
  std::vector<float> splits = {1.5f, 0, 0, 7};
  std::vector<int64_t> true_ids = {1, 0, 3, 4}, true_leafs = {0, 1, 1, 1};
  std::vector<int64_t> false_ids = {2, 1, 3, 5}, false_leafs = {1, 1, 0, 1};
  std::vector<int64_t> missing = {0, 0, 1, 0};
  std::vector<float> members = {2, 4, NAN};
  std::vector<int64_t> targets = {0, 1, 2, 0, 2, 1};
  std::vector<float> weights = {1, 10, 100, -3, 0.5f, 7};
  std::vector<int64_t> roots = {0, 2};

  // The leaf each tree reaches for (x0, x1).
  std::vector<int> leaves(float x0, float x1) const {
    std::vector<int> out;
    for (int64_t r : roots) {
      int64_t j = r;
      for (;;) {
        const float v = features[j] == 0 ? x0 : x1;
        bool t = false;
        switch (modes[j]) {
          case 1: t = v < splits[j]; break;
          case 2: t = v >= splits[j]; break;
          case 5: t = v != splits[j]; break;
          case 6: t = v == members[0] || v == members[1]; break;
        }
        if (missing[j] && std::isnan(v)) t = true;
        const int64_t next = t ? true_ids[j] : false_ids[j];
        if (t ? true_leafs[j] : false_leafs[j]) {
          out.push_back(static_cast<int>(next));
          break;
        }
        j = next;
      }
    }
    return out;
  }

  std::string model(int64_t aggregate, int64_t post = 0) const {
    GraphSpec g;
    g.inputs = {value_info("X", kFloat, {"N", 2})};
    g.outputs = {value_info("Y", kFloat, {"N", 3})};
    g.nodes = {node("TreeEnsemble", {"X"}, {"Y"},
                    {attr_int("aggregate_function", aggregate), attr_int("post_transform", post), attr_int("n_targets", 3),
                     attr_ints("nodes_featureids", features), attr_u8_tensor("nodes_modes", modes),
                     attr_f32_tensor("nodes_splits", splits), attr_ints("nodes_truenodeids", true_ids),
                     attr_ints("nodes_trueleafs", true_leafs), attr_ints("nodes_falsenodeids", false_ids),
                     attr_ints("nodes_falseleafs", false_leafs), attr_ints("nodes_missing_value_tracks_true", missing),
                     attr_f32_tensor("membership_values", members), attr_ints("leaf_targetids", targets),
                     attr_f32_tensor("leaf_weights", weights), attr_ints("tree_roots", roots)},
                    "trees")};
    g.nodes[0].bytes(7, kMl);
    return ml_model(g);
  }
};

const std::vector<float> kRows = {1.0f, 2.0f,  1.0f, 3.0f,  2.0f, NAN,  -1.0f, -1.0f,  7.0f, -2.0f,  1.0f, 4.0f,  NAN, 0.0f};

TEST(OnnxTreeEnsemble, SumAndAverageMatchADirectWalk) {
  const Ensemble e;
  const int64_t n = static_cast<int64_t>(kRows.size() / 2);
  for (int64_t aggregate : {int64_t{1}, int64_t{0}}) {
    const auto out = run_model(e.model(aggregate), {f32_tensor({n, 2}, kRows)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> want(static_cast<size_t>(n * 3), 0);
    for (int64_t i = 0; i < n; ++i)
      for (int leaf : e.leaves(kRows[2 * i], kRows[2 * i + 1]))
        want[static_cast<size_t>(i * 3 + e.targets[leaf])] += e.weights[leaf] / (aggregate == 0 ? 2.0f : 1.0f);
    expect_near(floats_of(out[0]), want, 1e-5f);
  }
}

TEST(OnnxTreeEnsemble, MaxStartsFromTheLowestFloat) {
  const Ensemble e;
  const int64_t n = static_cast<int64_t>(kRows.size() / 2);
  const auto out = run_model(e.model(3), {f32_tensor({n, 2}, kRows)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> want(static_cast<size_t>(n * 3), std::numeric_limits<float>::lowest());
  for (int64_t i = 0; i < n; ++i)
    for (int leaf : e.leaves(kRows[2 * i], kRows[2 * i + 1])) {
      float& w = want[static_cast<size_t>(i * 3 + e.targets[leaf])];
      w = std::max(w, e.weights[leaf]);
    }
  const std::vector<float> got = floats_of(out[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

TEST(OnnxTreeEnsemble, PostTransformIsUnimplemented) {
  expect_unimplemented_naming(Ensemble().model(1, 1), "trees", "post_transform");
}

}  // namespace
}  // namespace maxc::onnx::testing
