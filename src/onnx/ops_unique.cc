// Unique: X's distinct elements (or, with `axis`, its distinct slices along the axis), each
// one's first position, each item's unique (inverse_indices) and each unique's count.
//
// The items become rows [A, M] (the elements as one column; slices moved to the front and
// flattened) and are sorted stably, lexicographically by row. A sorted row that differs from
// the one before it starts a run of equal rows; nonzero over those flags gives the run
// starts, U of them, a count the engine learns when the model runs (data_dependent.h).
// Stability makes each run's first row the item's first occurrence, so the first positions,
// a cumsum of the flags (each sorted row's run) and the counts (a scatter-add) follow.
#include <climits>
#include <optional>

#include "onnx/data_dependent.h"
#include "onnx/order_key.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;
// Slices are sorted by one stable sort per element; past this the graph grows too large.
constexpr int64_t kMaxSliceElements = 256;

struct Rows {
  ValueId rows;  // [A, M]
  Dim a;
  int64_t m;
};

ValueId i64(NodeContext& c, double v) { return c.scalar(DType::kInt64, v); }

ValueId gather0(NodeContext& c, ValueId x, ValueId idx) { return c.op("gather", {x, idx}, {{"axis", int64_t{0}}}); }

ValueId filled(NodeContext& c, double v, const Dim& n) {
  return c.op("broadcast_to", {i64(c, v)}, {{"shape", std::vector<Dim>{n}}});
}

// int64 [0, n). A symbolic n may be a count that an earlier nonzero learns; shape_to_tensor
// (what arange reads a symbolic length with) has no output dim naming it, so the engine's
// stages would schedule it before the count exists. Counting ones names n in the type.
ValueId positions(NodeContext& c, const Dim& n) {
  if (n.is_static()) return arange(c, n);
  return c.op("cumsum", {filled(c, 1, n)}, {{"axis", int64_t{0}}, {"exclusive", true}});
}

Rows as_rows(NodeContext& c, std::optional<int64_t> axis) {
  const std::vector<Dim> dims = c.type(0).dims;
  if (!axis) {
    Dim n(1);
    for (const Dim& d : dims) n = n * d;
    return {c.reshape(c.input(0), {n, Dim(1)}), n, 1};
  }
  const size_t ax = static_cast<size_t>(*axis);
  std::vector<int64_t> slice;
  std::vector<int64_t> perm{*axis};
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i == ax) continue;
    if (!dims[i].is_static())
      c.unsupported("Unique along axis ", *axis, " of X ", dims_to_string(dims), ": its slices must have a static size");
    slice.push_back(dims[i].static_value());
    perm.push_back(static_cast<int64_t>(i));
  }
  const int64_t m = checked_product(slice).value_or(INT64_MAX);
  if (m > kMaxSliceElements)
    c.unsupported("Unique along axis ", *axis, " of X ", dims_to_string(dims), ": slices of ", m,
                  " elements (at most ", kMaxSliceElements, ", one stable sort per element)");
  ValueId x = ax == 0 ? c.input(0) : c.op("permute", {c.input(0)}, {{"dims", perm}});
  return {c.reshape(x, {dims[ax], Dim(m)}), dims[ax], m};
}

ValueId column(NodeContext& c, ValueId rows, int64_t j) {
  return c.op("slice_tensor", {rows}, {{"starts", std::vector<Dim>{0, j}},
                                       {"stops", std::vector<Dim>{kOpen, j + 1}},
                                       {"squeeze_axes", std::vector<int64_t>{1}}});
}

// The positions that sort the rows lexicographically, equal rows in their original order:
// stable sorts by each column from the last to the first, each keeping among equals the
// order the later columns gave.
ValueId lexicographic_order(NodeContext& c, const Rows& r) {
  if (r.m == 0) return positions(c, r.a);
  std::optional<ValueId> perm;
  for (int64_t j = r.m - 1; j >= 0; --j) {
    ValueId col = column(c, r.rows, j);
    if (perm) col = gather0(c, col, *perm);
    ValueId step = c.op("argsort", {order_key(c, col)});
    perm = perm ? gather0(c, *perm, step) : step;
  }
  return *perm;
}

// Whether each element of a differs from b's; NaNs, which our sort puts together at the
// end, count as equal (numpy's unique collapses them too).
ValueId differs(NodeContext& c, ValueId a, ValueId b) {
  ValueId ne = c.op("not_equal", {a, b});
  if (!dtype_is_float(c.type_of(a).dtype)) return ne;
  ValueId both_nan = c.op("logical_and", {c.op("is_nan", {a}), c.op("is_nan", {b})});
  return c.op("logical_and", {ne, c.op("logical_not", {both_nan})});
}

// Per sorted row: whether it starts a run (the first row, or one unlike the row before).
ValueId run_starts(NodeContext& c, ValueId sorted, const Rows& r) {
  ValueId i = positions(c, r.a);
  ValueId prev = gather0(c, sorted, c.op("max", {c.op("sub", {i, i64(c, 1)}), i64(c, 0)}));
  ValueId unlike = differs(c, sorted, prev);  // [A, M]
  ValueId ints = c.op("sum", {c.cast(unlike, DType::kInt32)}, {{"axis", int64_t{1}}});
  unlike = c.reshape(c.op("greater", {ints, c.scalar(DType::kInt32, 0)}), {r.a});
  return c.op("logical_or", {c.op("equal", {i, i64(c, 0)}), unlike});
}

struct Uniques {
  ValueId first;    // [U] each unique's first position in X
  ValueId inverse;  // [A] each item's unique
  ValueId counts;   // [U]
};

// From the sorted order to the order of first occurrence (sorted=0): the firsts sorted, and
// each unique's new place, which the inverse indices go through.
Uniques by_first_occurrence(NodeContext& c, Uniques u) {
  const Dim n = c.type_of(u.first).dims[0];
  ValueId order = c.op("argsort", {u.first});
  ValueId place = c.op("scatter", {filled(c, 0, n), positions(c, n), order}, {{"axis", int64_t{0}}});
  return {gather0(c, u.first, order), gather0(c, place, u.inverse), gather0(c, u.counts, order)};
}

void import_unique(NodeContext& c) {
  std::optional<int64_t> axis;
  if (c.attr("axis")) axis = c.axis(c.attr_int("axis", 0), c.rank(0));
  const Rows r = as_rows(c, axis);
  ValueId perm = lexicographic_order(c, r);
  ValueId starts_flag = run_starts(c, gather0(c, r.rows, perm), r);
  ValueId starts = nonzero_positions(c, starts_flag, "unique");
  const Dim n = c.type_of(starts).dims[0];
  ValueId run = c.op("sub", {c.op("cumsum", {c.cast(starts_flag, DType::kInt64)}, {{"axis", int64_t{0}}}), i64(c, 1)});
  Uniques u{gather0(c, perm, starts),
            c.op("scatter", {filled(c, 0, r.a), run, perm}, {{"axis", int64_t{0}}}),
            c.op("scatter", {filled(c, 0, n), filled(c, 1, r.a), run}, {{"axis", int64_t{0}}, {"reduction", std::string("add")}})};
  if (c.attr_int("sorted", 1) == 0) u = by_first_occurrence(c, u);
  ValueId x = axis ? c.input(0) : c.reshape(c.input(0), {r.a});
  c.set_output(0, c.op("gather", {x, u.first}, {{"axis", axis.value_or(0)}}));
  if (c.wants_output(1)) c.set_output(1, u.first);
  if (c.wants_output(2)) c.set_output(2, u.inverse);
  if (c.wants_output(3)) c.set_output(3, u.counts);
}

}  // namespace

void register_unique_importers(ImportTable& t) { t["Unique"] = import_unique; }

}  // namespace maxc::onnx
