// NonMaxSuppression: per (batch, class), boxes taken greedily by descending score, each one
// suppressing the boxes that overlap it by more than iou_threshold; the selected (batch,
// class, box) triples come out in that order, batch-major.
//
// Every (batch, class) pair advances together, one score-sorted position per iteration of a
// while_loop that carries which boxes are suppressed (in box order), how many each pair has
// selected, and which sorted positions were selected. Whether a box suppresses another is a
// [B, N, N] matrix computed once, before the loop (the box count N, which top_k sorts by,
// must be static). nonzero over the selected positions, in sorted order, then gives the
// triples, their count known only when the model runs (data_dependent.h).
#include <climits>

#include "onnx/data_dependent.h"
#include "onnx/loop_parts.h"
#include "onnx/subgraph.h"
#include "onnx/value_table.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;

ValueId coordinate(NodeContext& c, ValueId boxes, int64_t k) {
  return c.op("slice_tensor", {boxes}, {{"starts", std::vector<Dim>{0, 0, k}},
                                        {"stops", std::vector<Dim>{kOpen, kOpen, k + 1}},
                                        {"squeeze_axes", std::vector<int64_t>{2}}});
}

// One axis of every box: its low and high edge, [B, N] each.
struct Extent {
  ValueId lo, hi;
};

// Corner boxes [y1, x1, y2, x2] may name either diagonal; center boxes are
// [x_center, y_center, width, height]. Axis 0 is x, 1 is y.
Extent extent(NodeContext& c, ValueId boxes, bool center, int axis) {
  if (!center) {
    ValueId a = coordinate(c, boxes, axis == 0 ? 1 : 0), b = coordinate(c, boxes, axis == 0 ? 3 : 2);
    return {c.op("min", {a, b}), c.op("max", {a, b})};
  }
  ValueId mid = coordinate(c, boxes, axis), half = c.op("div", {coordinate(c, boxes, axis + 2), c.scalar(c.dtype(0), 2)});
  return {c.op("sub", {mid, half}), c.op("add", {mid, half})};
}

// Whether box i suppresses box j, [B, N, N]: ONNX's test, each comparison strict as the
// reference's (boxes that only touch, or have no area, never suppress).
ValueId suppression_matrix(NodeContext& c, ValueId boxes, const Dim& b, const Dim& n, ValueId iou_threshold) {
  const bool center = c.attr_int("center_point_box", 0) != 0;
  auto rows = [&](ValueId v) { return c.reshape(v, {b, n, Dim(1)}); };
  auto cols = [&](ValueId v) { return c.reshape(v, {b, Dim(1), n}); };
  auto gt = [&](ValueId x, ValueId y) { return c.op("greater", {x, y}); };
  auto both = [&](ValueId x, ValueId y) { return c.op("logical_and", {x, y}); };
  ValueId zero = c.scalar(c.dtype(0), 0);
  ValueId meets, inter, area_r, area_c;
  for (int axis = 0; axis < 2; ++axis) {
    const Extent e = extent(c, boxes, center, axis);
    ValueId lo = c.op("max", {rows(e.lo), cols(e.lo)}), hi = c.op("min", {rows(e.hi), cols(e.hi)});
    ValueId side = c.op("sub", {e.hi, e.lo});
    ValueId len = c.op("sub", {hi, lo});
    meets = axis == 0 ? gt(hi, lo) : both(meets, gt(hi, lo));
    inter = axis == 0 ? len : c.op("mul", {inter, len});
    area_r = axis == 0 ? rows(side) : c.op("mul", {area_r, rows(side)});
    area_c = axis == 0 ? cols(side) : c.op("mul", {area_c, cols(side)});
  }
  ValueId uni = c.op("sub", {c.op("add", {area_r, area_c}), inter});
  ValueId valid = both(both(gt(inter, zero), both(gt(area_r, zero), gt(area_c, zero))), gt(uni, zero));
  ValueId over = gt(c.op("div", {inter, uni}), c.cast(iou_threshold, c.dtype(0)));
  return both(both(meets, valid), over);
}

// The while_loop's values, in order.
enum Slot : size_t {
  kStep,        // int64 []: the sorted position this iteration looks at
  kLimit,       // int64 []: N
  kGoOn,        // bool []: some pair can still select
  kSuppressed,  // bool [B, C, N], in box order
  kCount,       // int64 [B, C]: selected so far
  kSelected,    // bool [B, C, N], in sorted order
  kScores,      // [B, C, N] sorted descending
  kBoxes,       // int64 [B, C, N]: the box at each sorted position
  kSuppresses,  // bool [B, N, N]
  kMaxOut,      // int64 []
  kScoreMin,    // []: only present with a score_threshold
};

// One sorted position for every (batch, class) pair.
std::vector<ValueId> step(NodeContext& b, const std::vector<ValueId>& in, const Dim& n) {
  const Dim nb = b.type_of(in[kCount]).dims[0], nc = b.type_of(in[kCount]).dims[1];
  ValueId pos = b.reshape(in[kStep], {Dim(1)});
  ValueId box = b.op("gather", {in[kBoxes], pos}, {{"axis", int64_t{2}}});  // [B, C, 1]
  ValueId gone = b.op("gather_nd", {in[kSuppressed], box}, {{"batch_dims", int64_t{2}}});
  ValueId open = b.op("less", {in[kCount], in[kMaxOut]});
  ValueId take = b.op("logical_and", {b.op("logical_not", {gone}), open});
  if (in.size() > kScoreMin) {
    ValueId score = b.reshape(b.op("gather", {in[kScores], pos}, {{"axis", int64_t{2}}}), {nb, nc});
    take = b.op("logical_and", {take, b.op("greater", {score, in[kScoreMin]})});
  }
  ValueId take3 = b.reshape(take, {nb, nc, Dim(1)});
  ValueId here = b.op("equal", {b.reshape(arange(b, n), {Dim(1), Dim(1), n}), in[kStep]});
  ValueId hits = b.op("gather_nd", {in[kSuppresses], box}, {{"batch_dims", int64_t{1}}});  // [B, C, N]
  std::vector<ValueId> out = in;
  out[kStep] = b.op("add", {in[kStep], b.scalar(DType::kInt64, 1)});
  out[kCount] = b.op("add", {in[kCount], b.cast(take, DType::kInt64)});
  out[kSelected] = b.op("logical_or", {in[kSelected], b.op("logical_and", {take3, here})});
  out[kSuppressed] = b.op("logical_or", {in[kSuppressed], b.op("logical_and", {take3, hits})});
  ValueId still = b.cast(b.reshape(b.op("less", {out[kCount], in[kMaxOut]}), {nb * nc}), DType::kInt32);
  out[kGoOn] = b.reshape(b.op("greater", {b.op("sum", {still}, {{"axis", int64_t{0}}}), b.scalar(DType::kInt32, 0)}), {});
  return out;
}

// The loop's body graph, added to c's graph, and its predicate: step < limit and go_on.
std::pair<GraphRef, GraphRef> add_body(NodeContext& c, const std::vector<ValueId>& init, const Dim& n) {
  Graph body(str_cat("nms_", c.index(), "_body"));
  std::vector<ValueId> in;
  for (size_t k = 0; k < init.size(); ++k) in.push_back(body.add_input(str_cat("v", k), c.type_of(init[k])));
  ValueTable scope(body);
  NodeContext b(c.node(), c.index(), c.opset(), scope, body);
  const std::vector<ValueId> out = step(b, in, n);
  std::vector<NamedValue> named;
  for (size_t k = 0; k < out.size(); ++k) named.push_back({str_cat("v", k), out[k]});
  body.set_outputs(std::move(named));
  const GraphRef predicate = add_predicate(c, body, kStep, kLimit, kGoOn);
  return {predicate, GraphRef{c.graph().add_subgraph(std::move(body))}};
}

// An optional scalar input; an empty tensor is omitted too, as in ONNX's reference.
std::optional<ValueId> scalar_input(NodeContext& c, size_t i, std::string_view what) {
  if (!c.has_input(i) || (c.known(i) && c.known(i)->num_elements() == 0)) return std::nullopt;
  return as_scalar(c, c.input(i), what);
}

void import_nms(NodeContext& c) {
  if (c.rank(0) != 3 || c.rank(1) != 3) c.invalid("boxes must be [B, N, 4] and scores [B, C, N]");
  const Dim nb = c.type(1).dims[0], nc = c.type(1).dims[1], n = c.type(1).dims[2];
  if (!n.is_static()) c.unsupported("the box count ", n, " must be static (the scores are sorted by top_k of it)");
  const ValueId none = c.constant(KnownValue::from_doubles(DType::kInt64, {0, 3}, {}));
  std::optional<ValueId> max_out = scalar_input(c, 2, "max_output_boxes_per_class");
  if (!max_out || (c.known(2) && c.known_scalar(2, "max_output_boxes_per_class") <= 0)) return c.set_output(0, none);
  std::optional<ValueId> iou = scalar_input(c, 3, "iou_threshold");
  if (!iou) iou = c.scalar(DType::kFloat32, 0);
  const std::vector<ValueId> sorted = c.ops("top_k", {c.input(1)}, {{"k", n.static_value()}, {"axis", int64_t{2}}});
  std::vector<ValueId> init(kScoreMin);
  init[kStep] = c.scalar(DType::kInt64, 0);
  init[kLimit] = c.scalar(DType::kInt64, static_cast<double>(n.static_value()));
  init[kGoOn] = c.scalar(DType::kBool, 1);
  init[kSuppressed] = c.op("broadcast_to", {c.scalar(DType::kBool, 0)}, {{"shape", std::vector<Dim>{nb, nc, n}}});
  init[kCount] = c.op("broadcast_to", {c.scalar(DType::kInt64, 0)}, {{"shape", std::vector<Dim>{nb, nc}}});
  init[kSelected] = init[kSuppressed];
  init[kScores] = sorted[0];
  init[kBoxes] = sorted[1];
  init[kSuppresses] = suppression_matrix(c, c.input(0), c.type(0).dims[0], n, *iou);
  init[kMaxOut] = c.cast(*max_out, DType::kInt64);
  if (std::optional<ValueId> s = scalar_input(c, 4, "score_threshold")) init.push_back(c.cast(*s, c.dtype(1)));
  const auto [predicate, body] = add_body(c, init, n);
  const std::vector<ValueId> out = c.ops("while_loop", init, {{"predicate", predicate}, {"body", body}});
  const Dim k = fresh_count_symbol(c, "selected");
  ValueId at = c.op("nonzero", {out[kSelected]}, {{"out_dim", std::vector<Dim>{k}}});  // [K, 3]: b, c, position
  ValueId box = c.reshape(c.op("gather_nd", {sorted[1], at}), {k, Dim(1)});
  ValueId pair = c.op("slice_tensor", {at}, {{"starts", std::vector<Dim>{0, 0}}, {"stops", std::vector<Dim>{kOpen, 2}}});
  c.set_output(0, c.op("concat", {pair, box}, {{"axis", int64_t{1}}}));
}

}  // namespace

void register_nms_importers(ImportTable& t) { t["NonMaxSuppression"] = import_nms; }

}  // namespace maxc::onnx
