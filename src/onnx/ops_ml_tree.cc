// Tree ensembles of ai.onnx.ml. The trees are attributes, so the traversal is unrolled at
// import to the deepest path. Every branch node's test is evaluated at once on X gathered by
// the nodes' feature ids ([N, K], K = nodes + leaves, leaves padded as never-read LEQ tests;
// set membership against a NaN-padded [K, S] table of members), then each step moves every
// tree's current index [N, T] to its true or false child through constant tables (a leaf is
// its own child). The reached leaves read a constant [K, targets] table of their values,
// reduced over the trees.
//
//   TreeEnsemble (opset 5): one weight per leaf at its target; SUM, AVERAGE (weights / T), MIN
//     and MAX (starting from the dtype's largest / lowest finite value, as the reference
//     does). post_transform must be NONE (ONNX's reference ignores it; we refuse the others).
//   TreeEnsembleRegressor and TreeEnsembleClassifier (opset 1/3): nodes named by (tree id,
//     node id), LEAF nodes carrying weights by (tree, node, target or class); a tree's root is
//     its first node listed. As onnxruntime computes them:
//     regressor: SUM or AVERAGE (MIN and MAX when every leaf weighs every target), plus
//       base_values (one value with one target, else one per target); post_transform on
//       rows of two or more targets, and only PROBIT on a single one.
//     classifier: per-class sums plus base_values. More than two classes: the label of the
//       first highest score among the classes that have weights (or a base value), the
//       scores transformed as rows. Two classes follow onnxruntime's binary rules. With
//       weights for one class only, its score s (class 1's when that is the one) picks
//       classlabels[1] when s > 0.5 (all weights positive) or s > 0; a class-0 score comes out
//       as [1 - s, s] (all weights positive; s = logistic(s) first under LOGISTIC) or [-s, s]
//       ([logistic(-s), logistic(s)] under LOGISTIC), a class-1 score as the row [0, s]
//       transformed. With weights for both, the label is 1 when class 1's score is > 0, else
//       0 (onnxruntime's literal labels), and the two scores are transformed as a row.
//     Which classes have weights is decided per model here, where onnxruntime decides it per
//     sample from the leaves reached; the two differ only for ensembles whose leaves weigh
//     a class in some trees' leaves and not others, which converters do not write.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "onnx/ml_common.h"
#include "onnx/ml_tree.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {

namespace {

// The deepest tree path the traversal is unrolled for.
constexpr int64_t kMaxTreeDepth = 4096;

// The number of traversal steps: the deepest path (in tests) from any root, refusing cycles.
int64_t traversal_steps(NodeContext& c, const TreeEnsembleSpec& e) {
  const size_t m = e.feature.size(), k = m + e.leaves;
  std::vector<int> state(k, 0);  // 0 new, 1 on the path, 2 done
  std::vector<int64_t> depth(k, 0);
  std::function<int64_t(int64_t, int64_t)> depth_of = [&](int64_t j, int64_t level) -> int64_t {
    const size_t u = static_cast<size_t>(j);
    if (u >= m) return 0;
    if (state[u] == 1) c.invalid("the trees have a cycle through node ", j);
    if (state[u] == 2) return depth[u];
    // Each level is one step of the traversal built below (and one frame here).
    if (level > kMaxTreeDepth) c.exhausted("the trees are deeper than ", kMaxTreeDepth, " levels");
    state[u] = 1;
    depth[u] = 1 + std::max(depth_of(e.next_true[u], level + 1), depth_of(e.next_false[u], level + 1));
    state[u] = 2;
    return depth[u];
  };
  int64_t steps = 1;
  for (int64_t r : e.roots) steps = std::max(steps, depth_of(r, 1));
  return steps;
}

}  // namespace

ValueId evaluate_tree_ensemble(NodeContext& c, ValueId x, const TreeEnsembleSpec& e, std::string_view reduce) {
  const DType work = c.type_of(x).dtype;
  const size_t m = e.feature.size(), l = e.leaves, k = m + l;
  const int64_t ki = static_cast<int64_t>(k), n_targets = e.targets;
  if (l == 0 || e.roots.empty()) c.invalid("the ensemble needs leaves and trees");
  for (int64_t f : e.feature)
    if (f < 0) c.invalid("feature id ", f, " is negative");
  for (size_t j = 0; j < m; ++j)
    for (int64_t child : {e.next_true[j], e.next_false[j]})
      if (child < 0 || static_cast<size_t>(child) >= k) c.invalid("node ", j, " has the child ", child, " outside [0, ", k, ")");
  for (int64_t r : e.roots)
    if (r < 0 || static_cast<size_t>(r) >= k) c.invalid("tree root ", r, " is outside [0, ", k, ")");
  const int64_t steps = traversal_steps(c, e);
  bounded_elements(c, {ki, n_targets}, "the leaf table (nodes and leaves x targets)");

  // The tests, over the combined index (leaves: feature 0, LEQ 0, never read).
  std::vector<int64_t> modes(k, kTreeLeq);
  std::copy(e.mode.begin(), e.mode.end(), modes.begin());
  size_t widest = 1;
  for (size_t j = 0; j < m; ++j)
    if (modes[j] == kTreeMember) widest = std::max(widest, e.members[j].size());
  std::vector<double> feat_d(k, 0), split_d(k, 0), missing_d(k, 0);
  for (size_t j = 0; j < m; ++j) {
    feat_d[j] = static_cast<double>(e.feature[j]);
    split_d[j] = e.split[j];
    missing_d[j] = e.missing_true[j] ? 1 : 0;
  }
  auto i64 = [&](std::vector<int64_t> shape, const std::vector<double>& v) {
    return c.constant(KnownValue::from_doubles(DType::kInt64, std::move(shape), v));
  };
  auto mask = [&](const std::vector<double>& v) {
    return c.op("not_equal", {i64({static_cast<int64_t>(v.size())}, v), c.scalar(DType::kInt64, 0)});
  };
  const ValueId xf = c.op("gather", {x, i64({ki}, feat_d)}, {{"axis", int64_t{1}}});  // [N, K]
  const ValueId split = c.constant(KnownValue::from_doubles(work, {ki}, split_d));
  std::optional<ValueId> cond;
  static const char* const kCompare[] = {"less_equal", "less", "greater_equal", "greater", "equal", "not_equal"};
  for (int64_t md = kTreeLeq; md <= kTreeMember; ++md) {
    if (std::count(modes.begin(), modes.end(), md) == 0) continue;
    ValueId hit;
    if (md == kTreeMember) {
      const int64_t width = static_cast<int64_t>(widest);
      std::vector<double> table(static_cast<size_t>(bounded_elements(c, {ki, width}, "the membership table")), std::nan(""));
      for (size_t j = 0; j < m; ++j)
        if (modes[j] == kTreeMember)
          for (size_t s = 0; s < e.members[j].size(); ++s) table[j * widest + s] = e.members[j][s];
      const ValueId set_table = c.constant(KnownValue::from_doubles(work, {ki, width}, table));
      const ValueId eq = c.op("equal", {c.op("unsqueeze", {xf}, {{"axis", int64_t{-1}}}), set_table});  // [N, K, S]
      const ValueId count = c.op("sum", {c.cast(eq, work)}, {{"axis", int64_t{-1}}});
      hit = c.op("squeeze", {c.op("greater", {count, c.scalar(work, 0)})}, {{"axis", int64_t{-1}}});
    } else {
      hit = c.op(kCompare[md], {xf, split});
    }
    if (!cond) {
      cond = hit;
    } else {
      std::vector<double> is_md(k);
      for (size_t j = 0; j < k; ++j) is_md[j] = modes[j] == md ? 1 : 0;
      cond = c.op("where", {mask(is_md), hit, *cond});
    }
  }
  if (std::count(missing_d.begin(), missing_d.end(), 1.0) > 0)
    cond = c.op("logical_or", {*cond, c.op("logical_and", {c.op("is_nan", {xf}), mask(missing_d)})});

  // The traversal: [N, T] current indices; a leaf is its own child.
  std::vector<double> true_d(k), false_d(k);
  for (size_t j = 0; j < k; ++j) {
    true_d[j] = static_cast<double>(j < m ? e.next_true[j] : static_cast<int64_t>(j));
    false_d[j] = static_cast<double>(j < m ? e.next_false[j] : static_cast<int64_t>(j));
  }
  const ValueId true_tab = i64({ki}, true_d), false_tab = i64({ki}, false_d);
  const int64_t trees = static_cast<int64_t>(e.roots.size());
  std::vector<double> start_d(e.roots.begin(), e.roots.end()), start_true(e.roots.size()), start_false(e.roots.size());
  for (size_t t = 0; t < e.roots.size(); ++t) {
    start_true[t] = true_d[static_cast<size_t>(e.roots[t])];
    start_false[t] = false_d[static_cast<size_t>(e.roots[t])];
  }
  ValueId at = c.op("where", {c.op("gather", {*cond, i64({trees}, start_d)}, {{"axis", int64_t{1}}}),
                              i64({trees}, start_true), i64({trees}, start_false)});
  for (int64_t s = 1; s < steps; ++s) {
    const ValueId test = c.op("gather_nd", {*cond, c.op("unsqueeze", {at}, {{"axis", int64_t{-1}}})}, {{"batch_dims", int64_t{1}}});
    at = c.op("where", {test, c.op("gather", {true_tab, at}, {{"axis", int64_t{0}}}),
                        c.op("gather", {false_tab, at}, {{"axis", int64_t{0}}})});
  }

  // The leaves' values [K, targets] (branch rows never read) and their reduction over the trees.
  std::vector<double> contrib(k * static_cast<size_t>(n_targets), 0.0);
  std::copy(e.leaf_values.begin(), e.leaf_values.end(), contrib.begin() + static_cast<std::ptrdiff_t>(m * static_cast<size_t>(n_targets)));
  const ValueId table = c.constant(KnownValue::from_doubles(work, {ki, n_targets}, contrib));
  const ValueId per_tree = c.op("gather", {table, at}, {{"axis", int64_t{0}}});  // [N, T, targets]
  const ValueId y = c.op(reduce, {per_tree}, {{"axis", int64_t{1}}});
  return c.op("squeeze", {y}, {{"axis", int64_t{1}}});
}

namespace {

// ---- TreeEnsemble (opset 5) ----

void import_tree_ensemble(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kFloat16)
    c.unsupported("TreeEnsemble of ", dtype_name(dt), " (float16/32/64 only)");
  if (c.rank(0) != 2) c.invalid("X must have rank 2 ([N, F]), got rank ", c.rank(0));
  const DType work = dt == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;

  const int64_t aggregate = c.attr_int("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3) c.unsupported("aggregate_function ", aggregate, " (0 AVERAGE, 1 SUM, 2 MIN, 3 MAX only)");
  const int64_t post = c.attr_int("post_transform", 0);
  if (post != 0) c.unsupported("post_transform ", post, " (only 0, NONE)");
  if (!c.attr("n_targets")) c.invalid("attribute 'n_targets' is required");
  const int64_t n_targets = c.attr_int("n_targets", 0);
  if (n_targets < 1) c.invalid("attribute 'n_targets' is ", n_targets, "; it must be >= 1");

  const std::vector<int64_t> features = required_ints(c, "nodes_featureids");
  const std::vector<int64_t> true_ids = required_ints(c, "nodes_truenodeids");
  const std::vector<int64_t> false_ids = required_ints(c, "nodes_falsenodeids");
  const std::vector<int64_t> true_leafs = required_ints(c, "nodes_trueleafs");
  const std::vector<int64_t> false_leafs = required_ints(c, "nodes_falseleafs");
  const std::vector<int64_t> targets = required_ints(c, "leaf_targetids");
  const std::vector<int64_t> roots = required_ints(c, "tree_roots");
  std::optional<std::vector<double>> splits = tensor_attr(c, "nodes_splits");
  std::optional<std::vector<double>> modes_d = tensor_attr(c, "nodes_modes");
  std::optional<std::vector<double>> weights = tensor_attr(c, "leaf_weights");
  if (!splits || !modes_d || !weights) c.invalid("attributes 'nodes_splits', 'nodes_modes' and 'leaf_weights' are required");
  const std::optional<std::vector<double>> members = tensor_attr(c, "membership_values");
  const std::optional<std::vector<int64_t>> missing_true = c.attr_ints("nodes_missing_value_tracks_true");

  const size_t m = features.size(), l = targets.size();
  for (auto [what, size] : {std::pair<const char*, size_t>{"nodes_truenodeids", true_ids.size()},
                            {"nodes_falsenodeids", false_ids.size()}, {"nodes_trueleafs", true_leafs.size()},
                            {"nodes_falseleafs", false_leafs.size()}, {"nodes_splits", splits->size()},
                            {"nodes_modes", modes_d->size()}})
    if (size != m) c.invalid("attribute '", what, "' has ", size, " entries; nodes_featureids has ", m);
  if (missing_true && missing_true->size() != m)
    c.invalid("attribute 'nodes_missing_value_tracks_true' has ", missing_true->size(), " entries; expected ", m);
  if (weights->size() != l) c.invalid("attribute 'leaf_weights' has ", weights->size(), " entries; leaf_targetids has ", l);
  if (m == 0 || l == 0 || roots.empty()) c.invalid("the ensemble needs nodes, leaves and tree_roots");
  for (int64_t t : targets)
    if (t < 0 || t >= n_targets) c.invalid("leaf target id ", t, " is outside [0, n_targets = ", n_targets, ")");

  TreeEnsembleSpec e;
  e.feature = features;
  e.split = *splits;
  e.leaves = l;
  e.targets = n_targets;
  e.members.resize(m);
  e.missing_true.assign(m, false);
  auto child = [&](size_t j, bool is_leaf, int64_t id) -> int64_t {
    const size_t limit = is_leaf ? l : m;
    if (id < 0 || static_cast<size_t>(id) >= limit)
      c.invalid("node ", j, " has the child ", is_leaf ? "leaf " : "node ", id, " outside [0, ", limit, ")");
    return is_leaf ? static_cast<int64_t>(m) + id : id;
  };
  for (size_t j = 0; j < m; ++j) {
    e.next_true.push_back(child(j, true_leafs[j] != 0, true_ids[j]));
    e.next_false.push_back(child(j, false_leafs[j] != 0, false_ids[j]));
    const double md = (*modes_d)[j];
    if (!(md >= double(kTreeLeq) && md <= double(kTreeMember)) || md != std::floor(md)) c.invalid("node ", j, " has the mode ", md);
    e.mode.push_back(static_cast<int64_t>(md));
    if (missing_true) e.missing_true[j] = (*missing_true)[j] != 0;
  }
  for (int64_t r : roots) {
    if (r < 0 || static_cast<size_t>(r) >= m) c.invalid("tree root ", r, " is outside [0, ", m, ")");
    const size_t j = static_cast<size_t>(r);
    const bool degenerate = true_leafs[j] && false_leafs[j] && true_ids[j] == false_ids[j];
    e.roots.push_back(degenerate ? e.next_true[j] : r);
  }
  if (std::count(e.mode.begin(), e.mode.end(), kTreeMember) > 0) {
    if (!members) c.invalid("BRANCH_MEMBER nodes need the attribute 'membership_values'");
    size_t pos = 0;
    for (size_t j = 0; j < m; ++j) {
      if (e.mode[j] != kTreeMember) continue;
      while (pos < members->size() && !std::isnan((*members)[pos])) e.members[j].push_back((*members)[pos++]);
      if (pos >= members->size()) c.invalid("membership_values has no NaN-terminated set for node ", j);
      ++pos;
    }
  }

  const bool is_min = aggregate == 2, is_max = aggregate == 3;
  const double fill = is_min ? std::numeric_limits<double>::infinity()
                             : is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  bounded_elements(c, {static_cast<int64_t>(l), n_targets}, "the leaf table (leaves x n_targets)");
  e.leaf_values.assign(l * static_cast<size_t>(n_targets), fill);
  const double trees = static_cast<double>(roots.size());
  for (size_t i = 0; i < l; ++i)
    e.leaf_values[i * static_cast<size_t>(n_targets) + static_cast<size_t>(targets[i])] =
        aggregate == 0 ? (*weights)[i] / trees : (*weights)[i];

  ValueId y = evaluate_tree_ensemble(c, c.cast(c.input(0), work), e, is_min ? "min" : is_max ? "max" : "sum");
  if (is_min || is_max) {
    const double limit = dt == DType::kFloat16   ? 65504.0
                         : dt == DType::kFloat32 ? std::numeric_limits<float>::max()
                                                 : std::numeric_limits<double>::max();
    y = c.op(is_min ? "min" : "max", {y, c.scalar(work, is_min ? limit : -limit)});
  }
  c.set_output(0, c.cast(y, dt));
}

// ---- TreeEnsembleRegressor, TreeEnsembleClassifier (opset 1/3) ----

// The trees of the nodes_* attributes, and the weights of `prefix` (target_ or class_) per
// (leaf, target): summed, or their min / max (`reduce`), each leaf needing every target then.
TreeEnsembleSpec legacy_trees(NodeContext& c, std::string_view prefix, int64_t targets, std::string_view reduce) {
  const std::vector<int64_t> tree_ids = required_ints(c, "nodes_treeids");
  const std::vector<int64_t> node_ids = required_ints(c, "nodes_nodeids");
  const std::vector<int64_t> features = required_ints(c, "nodes_featureids");
  const std::vector<int64_t> true_ids = required_ints(c, "nodes_truenodeids");
  const std::vector<int64_t> false_ids = required_ints(c, "nodes_falsenodeids");
  const AttributeProto* modes_a = c.attr("nodes_modes");
  if (!modes_a || modes_a->type != AttrType::kStrings) c.invalid("attribute 'nodes_modes' (strings) is required");
  const std::vector<std::string>& modes = modes_a->strings;
  const std::optional<std::vector<double>> values = floats_or_tensor(c, "nodes_values");
  const std::optional<std::vector<int64_t>> missing = c.attr_ints("nodes_missing_value_tracks_true");
  const size_t n = node_ids.size();
  const std::vector<double> split = values.value_or(std::vector<double>(n, 0.0));
  for (auto [what, size] : {std::pair<const char*, size_t>{"nodes_treeids", tree_ids.size()},
                            {"nodes_featureids", features.size()}, {"nodes_truenodeids", true_ids.size()},
                            {"nodes_falsenodeids", false_ids.size()}, {"nodes_modes", modes.size()},
                            {"nodes_values", split.size()}})
    if (size != n) c.invalid("attribute '", what, "' has ", size, " entries; nodes_nodeids has ", n);
  if (missing && !missing->empty() && missing->size() != n)
    c.invalid("attribute 'nodes_missing_value_tracks_true' has ", missing->size(), " entries; nodes_nodeids has ", n);
  if (n == 0) c.invalid("the ensemble has no nodes");

  static const char* const kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
  // Each node's place in the combined index: branches first, then leaves, in attribute order.
  std::vector<int64_t> mode(n, -1);
  size_t branches = 0;
  for (size_t p = 0; p < n; ++p) {
    if (modes[p] == "LEAF") continue;
    const auto* found = std::find(std::begin(kModes), std::end(kModes), modes[p]);
    if (found == std::end(kModes)) c.invalid("node ", p, " has the mode '", modes[p], "'");
    mode[p] = found - std::begin(kModes);
    ++branches;
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> index;  // (tree, node) -> combined index
  size_t next_branch = 0, next_leaf = branches;
  for (size_t p = 0; p < n; ++p) {
    const int64_t at = static_cast<int64_t>(mode[p] >= 0 ? next_branch++ : next_leaf++);
    if (!index.emplace(std::pair{tree_ids[p], node_ids[p]}, at).second)
      c.invalid("tree ", tree_ids[p], " has node ", node_ids[p], " twice");
  }
  TreeEnsembleSpec e;
  e.leaves = n - branches;
  e.targets = targets;
  e.members.resize(branches);
  auto lookup = [&](int64_t tree, int64_t node, size_t p) {
    auto it = index.find({tree, node});
    if (it == index.end()) c.invalid("node ", node_ids[p], " of tree ", tree, " has the child ", node, ", which is not a node of the tree");
    return it->second;
  };
  for (size_t p = 0; p < n; ++p) {
    if (mode[p] < 0) continue;
    e.feature.push_back(features[p]);
    e.split.push_back(split[p]);
    e.mode.push_back(mode[p]);
    e.missing_true.push_back(missing && !missing->empty() && (*missing)[p] != 0);
    e.next_true.push_back(lookup(tree_ids[p], true_ids[p], p));
    e.next_false.push_back(lookup(tree_ids[p], false_ids[p], p));
  }
  // A tree's root: its first node listed, as onnxruntime reads the trees.
  std::set<int64_t> trees_seen;
  for (size_t p = 0; p < n; ++p)
    if (trees_seen.insert(tree_ids[p]).second) e.roots.push_back(index[{tree_ids[p], node_ids[p]}]);

  // The leaves' weights.
  const std::string p(prefix);
  const std::vector<int64_t> w_trees = required_ints(c, p + "treeids");
  const std::vector<int64_t> w_nodes = required_ints(c, p + "nodeids");
  const std::vector<int64_t> w_ids = required_ints(c, p + "ids");
  const std::optional<std::vector<double>> weights = floats_or_tensor(c, p + "weights");
  if (!weights) c.invalid("attribute '", p, "weights' is required");
  const size_t w = w_ids.size();
  if (w_trees.size() != w || w_nodes.size() != w || weights->size() != w)
    c.invalid("attributes '", p, "treeids', '", p, "nodeids', '", p, "ids' and '", p, "weights' differ in length");
  const size_t t = static_cast<size_t>(targets);
  bounded_elements(c, {static_cast<int64_t>(e.leaves), targets}, "the leaf table (leaves x targets)");
  e.leaf_values.assign(e.leaves * t, 0.0);
  std::vector<bool> seen(e.leaves * t, false);
  for (size_t i = 0; i < w; ++i) {
    auto it = index.find({w_trees[i], w_nodes[i]});
    if (it == index.end()) c.invalid(p, "weights entry ", i, " names node ", w_nodes[i], " of tree ", w_trees[i], ", which does not exist");
    if (static_cast<size_t>(it->second) < branches)
      c.unsupported(p, "weights entry ", i, " weighs node ", w_nodes[i], " of tree ", w_trees[i], ", a branch (weights belong to LEAF nodes)");
    if (w_ids[i] < 0 || w_ids[i] >= targets) c.invalid(p, "ids entry ", i, " is ", w_ids[i], ", outside [0, ", targets, ")");
    const size_t cell = (static_cast<size_t>(it->second) - branches) * t + static_cast<size_t>(w_ids[i]);
    double& v = e.leaf_values[cell];
    const double x = (*weights)[i];
    v = !seen[cell] ? x : reduce == "min" ? std::min(v, x) : reduce == "max" ? std::max(v, x) : v + x;
    seen[cell] = true;
  }
  if (reduce != "sum" && std::count(seen.begin(), seen.end(), false) > 0)
    c.unsupported("aggregate_function ", reduce == "min" ? "MIN" : "MAX",
                  " over leaves that do not weigh every target (onnxruntime then skips the tree per target)");
  return e;
}

ValueId legacy_input(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("X of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  const DType work = dt == DType::kFloat32 ? DType::kFloat32 : DType::kFloat64;
  ValueId x = c.cast(c.input(0), work);
  if (c.rank(0) == 1) return c.reshape(x, {Dim(1), c.type(0).dims[0]});
  if (c.rank(0) != 2) c.unsupported("X of rank ", c.rank(0), " (rank 1 or 2, [N, F], only)");
  return x;
}

void import_tree_regressor(NodeContext& c) {
  const int64_t targets = c.attr_int("n_targets", 1);
  if (targets < 1) c.invalid("attribute 'n_targets' is ", targets, "; it must be >= 1");
  const std::string aggregate = c.attr_string("aggregate_function", "SUM");
  if (aggregate != "SUM" && aggregate != "AVERAGE" && aggregate != "MIN" && aggregate != "MAX")
    c.invalid("aggregate_function '", aggregate, "' (AVERAGE, SUM, MIN or MAX)");
  const std::string reduce = aggregate == "MIN" ? "min" : aggregate == "MAX" ? "max" : "sum";
  TreeEnsembleSpec e = legacy_trees(c, "target_", targets, reduce);
  if (aggregate == "AVERAGE")
    for (double& v : e.leaf_values) v /= static_cast<double>(e.roots.size());
  ValueId y = c.cast(evaluate_tree_ensemble(c, legacy_input(c), e, reduce), DType::kFloat32);
  const std::vector<double> base = floats_or_tensor(c, "base_values").value_or(std::vector<double>{});
  const PostTransform t = post_transform(c);
  if (targets == 1) {
    if (base.size() == 1) y = c.op("add", {y, c.scalar(DType::kFloat32, base[0])});
    if (t == PostTransform::kProbit) y = probit(c, y);
  } else {
    if (static_cast<int64_t>(base.size()) == targets)
      y = c.op("add", {y, c.constant(KnownValue::from_doubles(DType::kFloat32, {targets}, base))});
    y = transform_scores(c, y, t);
  }
  c.set_output(0, y);
}

ValueId column(NodeContext& c, ValueId m, int64_t k) {
  return c.op("slice_tensor", {m}, {{"starts", std::vector<Dim>{0, k}},
                                    {"stops", std::vector<Dim>{INT64_MAX, k + 1}}});  // [N, 1]
}

void import_tree_classifier(NodeContext& c) {
  const std::vector<int64_t> labels = int_class_labels(c, "classlabels_int64s", "classlabels_strings");
  const int64_t classes = static_cast<int64_t>(labels.size());
  if (classes < 2) c.unsupported("a classifier of ", classes, " class labels (two or more only)");
  TreeEnsembleSpec e = legacy_trees(c, "class_", classes, "sum");
  const std::vector<int64_t> ids = required_ints(c, "class_ids");
  const std::optional<std::vector<double>> weights = floats_or_tensor(c, "class_weights");
  const std::set<int64_t> weighed(ids.begin(), ids.end());
  if (weighed.empty()) c.invalid("the ensemble weighs no class");
  const bool all_positive = std::all_of(weights->begin(), weights->end(), [](double v) { return v >= 0; });
  const std::vector<double> base = floats_or_tensor(c, "base_values").value_or(std::vector<double>{});
  if (static_cast<int64_t>(base.size()) > classes)
    c.invalid("base_values has ", base.size(), " values for ", classes, " classes");
  const PostTransform t = post_transform(c);
  const ValueId sums = c.cast(evaluate_tree_ensemble(c, legacy_input(c), e, "sum"), DType::kFloat32);  // [N, C]
  const Dim n = c.type_of(sums).dims[0];
  const DType f = DType::kFloat32;

  if (classes > 2) {
    std::vector<double> base_row(static_cast<size_t>(classes), 0.0), live(static_cast<size_t>(classes), 0.0);
    for (size_t k = 0; k < base_row.size(); ++k) {
      if (k < base.size()) base_row[k] = base[k];
      live[k] = (k < base.size() || weighed.count(static_cast<int64_t>(k))) ? 1 : 0;
    }
    const ValueId scores = c.op("add", {sums, c.constant(KnownValue::from_doubles(f, {classes}, base_row))});
    // Classes without weights or base value take no part in the vote.
    const ValueId candidates = c.op("where", {c.op("not_equal", {c.constant(KnownValue::from_doubles(f, {classes}, live)),
                                                                 c.scalar(f, 0)}),
                                              scores, c.scalar(f, -std::numeric_limits<double>::infinity())});
    const ValueId best = c.op("squeeze", {c.op("argmax", {candidates}, {{"axis", int64_t{1}}})}, {{"axis", int64_t{1}}});
    c.set_output(0, pick_labels(c, labels, best));
    return c.set_output(1, transform_scores(c, scores, t));
  }

  // Two classes.
  const bool has0 = weighed.count(0) > 0, has1 = weighed.count(1) > 0;
  const bool binary_case = weighed.size() == 1;
  ValueId p0 = column(c, sums, 0), p1 = column(c, sums, 1);
  if (base.size() == 2) {
    if (!has1) c.unsupported("base_values of two classes with no weights for class 1");
    // onnxruntime's reading: class 1 is base_values[1] plus class 0's sum, class 0 its negation.
    p1 = c.op("add", {p0, c.scalar(f, base[1])});
    p0 = c.op("negate", {p1});
  } else if (base.size() == 1) {
    p0 = c.op("add", {p0, c.scalar(f, base[0])});
  }
  const bool one_score = !has1;
  const ValueId positive_weight = c.reshape(one_score ? p0 : p1, {n});
  const double threshold = binary_case && all_positive ? 0.5 : 0.0;
  const ValueId positive = c.cast(c.op("greater", {positive_weight, c.scalar(f, threshold)}), DType::kInt64);
  c.set_output(0, pick_labels(c, binary_case ? labels : std::vector<int64_t>{0, 1}, positive));
  if (one_score) {
    if (t == PostTransform::kProbit)
      c.unsupported("post_transform PROBIT with one class weighed (onnxruntime leaves the second column unset)");
    const SecondClass how = all_positive ? SecondClass::kComplement
                            : t == PostTransform::kLogistic ? SecondClass::kLogistic : SecondClass::kNegation;
    return c.set_output(1, two_columns(c, p0, how, t));
  }
  if (!has0) p0 = c.op("mul", {p0, c.scalar(f, 0)});  // an unweighed class scores 0 there
  c.set_output(1, transform_scores(c, c.op("concat", {p0, p1}, {{"axis", int64_t{1}}}), t));
}

}  // namespace

void register_ml_tree_importers(ImportTable& t) {
  t["ai.onnx.ml.TreeEnsemble"] = import_tree_ensemble;
  t["ai.onnx.ml.TreeEnsembleRegressor"] = import_tree_regressor;
  t["ai.onnx.ml.TreeEnsembleClassifier"] = import_tree_classifier;
}

}  // namespace maxc::onnx
