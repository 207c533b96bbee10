// A tree ensemble in the one form the traversal takes, whichever operator it came from
// (TreeEnsemble of opset 5, TreeEnsembleClassifier, TreeEnsembleRegressor), and the
// traversal itself (ops_ml_tree.cc).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {

// nodes_modes in opset 5's numbering: BRANCH_LEQ, LT, GTE, GT, EQ, NEQ, MEMBER.
constexpr int64_t kTreeLeq = 0, kTreeMember = 6;

struct TreeEnsembleSpec {
  // The branch nodes j in [0, m): their tests.
  std::vector<int64_t> feature;
  std::vector<double> split;
  std::vector<int64_t> mode;
  std::vector<std::vector<double>> members;  // per node; its set when mode is MEMBER
  std::vector<bool> missing_true;            // NaN takes the true branch
  // Children over the combined index, where node j is j and leaf i is m + i.
  std::vector<int64_t> next_true, next_false;
  std::vector<int64_t> roots;  // one per tree, a node or a leaf
  size_t leaves = 0;
  int64_t targets = 0;
  // [leaves, targets], row-major: what each reached leaf contributes to each target.
  std::vector<double> leaf_values;
};

// The leaves' values reduced over the trees ("sum", "min" or "max"), [N, targets] in x's
// dtype (float32 or float64); x is [N, F]. INVALID_ARGUMENT for a child or root out of
// range or a cycle, RESOURCE_EXHAUSTED past the unrolled depth or table sizes.
ValueId evaluate_tree_ensemble(NodeContext& c, ValueId x, const TreeEnsembleSpec& e, std::string_view reduce);

}  // namespace maxc::onnx
