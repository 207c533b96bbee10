// Operators of ai.onnx.ml that our graph ops express:
//   Binarizer: y = x > threshold ? 1 : 0, in x's type (integers compare in float64, as the
//     threshold is a float);
//   ArrayFeatureExtractor: x[..., indices] along the last axis, the indices flattened; a
//     rank-1 x gives [1, k], as ONNX's reference (and onnxruntime) do. Negative indices count
//     from the end where the last axis is static;
//   TreeEnsemble (opset 5): the trees are attributes, so the traversal is unrolled at import
//     to the deepest path. Every node's test is evaluated at once on X gathered by the nodes'
//     feature ids ([N, K], K = nodes + leaves, leaves padded as never-taken LEQ tests; set
//     membership against a NaN-padded [K, S] table of members), then each step moves every
//     tree's current index [N, T] to its true or false child through constant tables (a leaf
//     is its own child). The reached leaves read a constant [K, n_targets] table of their
//     weights at their targets, reduced over the trees: SUM, AVERAGE (weights / T), MIN and
//     MAX (starting from the dtype's largest / lowest finite value, as the reference does).
//     post_transform must be NONE (ONNX's reference ignores it; we refuse the others).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"
#include "onnx/tensor_data.h"

namespace maxc::onnx {
namespace {

void import_binarizer(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("Binarizer of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  const double threshold = c.attr_float("threshold", 0);
  const DType cmp = dtype_is_float(dt) ? dt : DType::kFloat64;
  const ValueId above = c.op("greater", {c.cast(c.input(0), cmp), c.scalar(cmp, threshold)});
  c.set_output(0, c.cast(above, dt));
}

void import_array_feature_extractor(NodeContext& c) {
  const DType it = c.dtype(1);
  if (it != DType::kInt64 && it != DType::kInt32) c.invalid("indices must be int64, got ", dtype_name(it));
  const std::vector<Dim> in = c.type(0).dims;
  if (in.empty()) c.invalid("X must have rank >= 1");
  ValueId idx = c.cast(c.input(1), DType::kInt64);
  const Dim k = dims_product(c.type(1).dims);
  if (c.rank(1) != 1) idx = c.reshape(idx, {k});
  const Dim& last = in.back();
  if (last.is_static()) {
    const ValueId negative = c.op("less", {idx, c.scalar(DType::kInt64, 0)});
    idx = c.op("where", {negative, c.op("add", {idx, c.scalar(DType::kInt64, static_cast<double>(last.static_value()))}), idx});
  }
  const int64_t axis = static_cast<int64_t>(in.size()) - 1;
  ValueId y = c.op("gather", {c.input(0), idx}, {{"axis", axis}});
  if (in.size() == 1) y = c.reshape(y, {Dim(1), k});
  c.set_output(0, y);
}

// A tensor attribute's elements as doubles; nullopt when absent.
std::optional<std::vector<double>> tensor_attr(NodeContext& c, std::string_view name) {
  const AttributeProto* a = c.attr(name);
  if (!a) return std::nullopt;
  if (a->type != AttrType::kTensor || !a->t) c.invalid("attribute '", name, "' must be a tensor");
  KnownValue k = KnownValue::from_tensor(tensor_from_proto(*a->t, c.label() + " attribute '" + std::string(name) + "'", ""));
  std::optional<std::vector<double>> v = k.doubles();
  if (!v) c.unsupported("attribute '", name, "' of dtype ", dtype_name(k.dtype));
  return v;
}

std::vector<int64_t> required_ints(NodeContext& c, std::string_view name) {
  std::optional<std::vector<int64_t>> v = c.attr_ints(name);
  if (!v) c.invalid("attribute '", name, "' is required");
  return *v;
}

// The deepest tree path the traversal is unrolled for.
constexpr int64_t kMaxTreeDepth = 4096;

// nodes_modes: BRANCH_LEQ, LT, GTE, GT, EQ, NEQ, MEMBER.
constexpr int64_t kLeq = 0, kMember = 6;

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
  for (int64_t f : features)
    if (f < 0) c.invalid("feature id ", f, " is negative");

  // The combined index space: node j is j, leaf i is m + i; a leaf is its own child.
  const size_t k = m + l;
  std::vector<int64_t> next_true(k), next_false(k);
  auto target_of = [&](size_t j, bool is_leaf, int64_t id) -> int64_t {
    const size_t limit = is_leaf ? l : m;
    if (id < 0 || static_cast<size_t>(id) >= limit)
      c.invalid("node ", j, " has the child ", is_leaf ? "leaf " : "node ", id, " outside [0, ", limit, ")");
    return is_leaf ? static_cast<int64_t>(m) + id : id;
  };
  for (size_t j = 0; j < m; ++j) {
    next_true[j] = target_of(j, true_leafs[j] != 0, true_ids[j]);
    next_false[j] = target_of(j, false_leafs[j] != 0, false_ids[j]);
  }
  for (size_t i = m; i < k; ++i) next_true[i] = next_false[i] = static_cast<int64_t>(i);
  std::vector<int64_t> start(roots.size());
  for (size_t t = 0; t < roots.size(); ++t) {
    const int64_t r = roots[t];
    if (r < 0 || static_cast<size_t>(r) >= m) c.invalid("tree root ", r, " is outside [0, ", m, ")");
    const size_t j = static_cast<size_t>(r);
    const bool degenerate = true_leafs[j] && false_leafs[j] && true_ids[j] == false_ids[j];
    start[t] = degenerate ? next_true[j] : r;
  }
  // The deepest path (tests on it), refusing cycles.
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
    depth[u] = 1 + std::max(depth_of(next_true[u], level + 1), depth_of(next_false[u], level + 1));
    state[u] = 2;
    return depth[u];
  };
  int64_t steps = 1;
  for (int64_t s : start) steps = std::max(steps, depth_of(s, 1));

  // The tests, over the combined index (leaves: feature 0, LEQ 0, never read).
  std::vector<int64_t> modes(k, kLeq);
  for (size_t j = 0; j < m; ++j) {
    const double md = (*modes_d)[j];
    if (!(md >= double(kLeq) && md <= double(kMember)) || md != std::floor(md)) c.invalid("node ", j, " has the mode ", md);
    modes[j] = static_cast<int64_t>(md);
  }
  bounded_elements(c, {static_cast<int64_t>(k), n_targets}, "the leaf table (nodes and leaves x n_targets)");
  std::vector<std::vector<double>> sets(k);
  size_t widest = 0;
  if (std::count(modes.begin(), modes.end(), kMember) > 0) {
    if (!members) c.invalid("BRANCH_MEMBER nodes need the attribute 'membership_values'");
    size_t pos = 0;
    for (size_t j = 0; j < m; ++j) {
      if (modes[j] != kMember) continue;
      while (pos < members->size() && !std::isnan((*members)[pos])) sets[j].push_back((*members)[pos++]);
      if (pos >= members->size()) c.invalid("membership_values has no NaN-terminated set for node ", j);
      ++pos;
      widest = std::max(widest, sets[j].size());
    }
  }
  std::vector<double> feat_d(k, 0), split_d(k, 0), missing_d(k, 0);
  for (size_t j = 0; j < m; ++j) {
    feat_d[j] = static_cast<double>(features[j]);
    split_d[j] = (*splits)[j];
    if (missing_true) missing_d[j] = (*missing_true)[j] != 0 ? 1 : 0;
  }
  const int64_t ki = static_cast<int64_t>(k);
  auto i64 = [&](std::vector<int64_t> shape, const std::vector<double>& v) {
    return c.constant(KnownValue::from_doubles(DType::kInt64, std::move(shape), v));
  };
  auto mask = [&](const std::vector<double>& v) {
    return c.op("not_equal", {i64({static_cast<int64_t>(v.size())}, v), c.scalar(DType::kInt64, 0)});
  };
  const ValueId x = c.cast(c.input(0), work);
  const ValueId xf = c.op("gather", {x, i64({ki}, feat_d)}, {{"axis", int64_t{1}}});  // [N, K]
  const ValueId split = c.constant(KnownValue::from_doubles(work, {ki}, split_d));
  std::optional<ValueId> cond;
  static const char* const kCompare[] = {"less_equal", "less", "greater_equal", "greater", "equal", "not_equal"};
  for (int64_t md = kLeq; md <= kMember; ++md) {
    if (std::count(modes.begin(), modes.end(), md) == 0) continue;
    ValueId hit;
    if (md == kMember) {
      const int64_t width = static_cast<int64_t>(std::max<size_t>(widest, 1));
      std::vector<double> table(static_cast<size_t>(bounded_elements(c, {ki, width}, "the membership table")), std::nan(""));
      for (size_t j = 0; j < k; ++j)
        for (size_t s = 0; s < sets[j].size(); ++s) table[j * std::max<size_t>(widest, 1) + s] = sets[j][s];
      const ValueId set_table =
          c.constant(KnownValue::from_doubles(work, {ki, static_cast<int64_t>(std::max<size_t>(widest, 1))}, table));
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

  // The traversal: [N, T] current indices.
  std::vector<double> true_d(next_true.begin(), next_true.end()), false_d(next_false.begin(), next_false.end());
  const ValueId true_tab = i64({ki}, true_d), false_tab = i64({ki}, false_d);
  const int64_t trees = static_cast<int64_t>(start.size());
  std::vector<double> start_d(start.begin(), start.end()), start_true(start.size()), start_false(start.size());
  for (size_t t = 0; t < start.size(); ++t) {
    start_true[t] = static_cast<double>(next_true[static_cast<size_t>(start[t])]);
    start_false[t] = static_cast<double>(next_false[static_cast<size_t>(start[t])]);
  }
  ValueId at = c.op("where", {c.op("gather", {*cond, i64({trees}, start_d)}, {{"axis", int64_t{1}}}),
                              i64({trees}, start_true), i64({trees}, start_false)});
  for (int64_t s = 1; s < steps; ++s) {
    const ValueId test = c.op("gather_nd", {*cond, c.op("unsqueeze", {at}, {{"axis", int64_t{-1}}})}, {{"batch_dims", int64_t{1}}});
    at = c.op("where", {test, c.op("gather", {true_tab, at}, {{"axis", int64_t{0}}}),
                        c.op("gather", {false_tab, at}, {{"axis", int64_t{0}}})});
  }

  // The leaves' contributions [K, n_targets] and their reduction over the trees.
  const bool is_min = aggregate == 2, is_max = aggregate == 3;
  const double fill = is_min ? std::numeric_limits<double>::infinity()
                             : is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> contrib(k * static_cast<size_t>(n_targets), fill);
  for (size_t i = 0; i < l; ++i) {
    double w = (*weights)[i];
    if (aggregate == 0) w /= static_cast<double>(trees);
    contrib[(m + i) * static_cast<size_t>(n_targets) + static_cast<size_t>(targets[i])] = w;
  }
  const ValueId table = c.constant(KnownValue::from_doubles(work, {ki, n_targets}, contrib));
  const ValueId per_tree = c.op("gather", {table, at}, {{"axis", int64_t{0}}});  // [N, T, n_targets]
  ValueId y;
  if (is_min || is_max) {
    const double limit = dt == DType::kFloat16   ? 65504.0
                         : dt == DType::kFloat32 ? std::numeric_limits<float>::max()
                                                 : std::numeric_limits<double>::max();
    y = c.op(is_min ? "min" : "max", {per_tree}, {{"axis", int64_t{1}}});
    y = c.op(is_min ? "min" : "max", {y, c.scalar(work, is_min ? limit : -limit)});
  } else {
    y = c.op("sum", {per_tree}, {{"axis", int64_t{1}}});
  }
  c.set_output(0, c.cast(c.op("squeeze", {y}, {{"axis", int64_t{1}}}), dt));
}

}  // namespace

void register_ml_importers(ImportTable& t) {
  t["ai.onnx.ml.Binarizer"] = import_binarizer;
  t["ai.onnx.ml.ArrayFeatureExtractor"] = import_array_feature_extractor;
  t["ai.onnx.ml.TreeEnsemble"] = import_tree_ensemble;
}

}  // namespace maxc::onnx
