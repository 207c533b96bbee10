// Indexing operators: Gather, GatherElements, GatherND, Slice, ScatterElements, ScatterND,
// OneHot. Slice's bounds become slice_tensor attributes (symbolic bounds included), with
// ONNX's clamping applied here wherever the dim is static.
#include <algorithm>
#include <climits>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;

// ---- Gather ----

// Gather on a known rank-1 integer tensor (a shape) with known indices stays known.
bool fold_gather(NodeContext& c) {
  const KnownValue* data = c.known(0);
  const KnownValue* idx = c.known(1);
  if (!data || !data->ints || data->shape.size() != 1 || !idx) return false;
  auto indices = idx->static_ints();
  if (!indices) return false;
  int64_t n = data->shape[0];
  std::vector<Dim> out;
  for (int64_t i : *indices) {
    if (i < -n || i >= n) c.invalid("index ", i, " is out of range for ", n, " elements");
    out.push_back((*data->ints)[static_cast<size_t>(i < 0 ? i + n : i)]);
  }
  c.set_known_output(0, KnownValue::from_dims(data->dtype, idx->shape, std::move(out)));
  return true;
}

void import_gather(NodeContext& c) {
  c.axis(c.attr_int("axis", 0), c.rank(0));
  if (c.attr_int("axis", 0) % std::max<int64_t>(c.rank(0), 1) == 0 && fold_gather(c)) return;
  c.set_output(0, c.op("gather", {c.input(0), c.input(1)}, {{"axis", c.attr_int("axis", 0)}}));
}

void import_gather_nd(NodeContext& c) {
  c.set_output(0, c.op("gather_nd", {c.input(0), c.input(1)}, {{"batch_dims", c.attr_int("batch_dims", 0)}}));
}

// ---- GatherElements: gather_nd with every other axis' coordinate an iota ----

// Coordinate `axis` of every element of a static `shape`: an iota along it, broadcast.
ValueId iota_along(NodeContext& c, const std::vector<int64_t>& shape, size_t axis) {
  std::vector<int64_t> along(shape.size(), 1);
  along[axis] = shape[axis];
  std::vector<double> seq(static_cast<size_t>(bounded_elements(c, {shape[axis]}, "an index range of the indices")));
  for (size_t i = 0; i < seq.size(); ++i) seq[i] = static_cast<double>(i);
  ValueId iota = c.constant(KnownValue::from_doubles(DType::kInt64, along, seq));
  return c.op("broadcast_to", {iota}, {{"shape", std::vector<Dim>(shape.begin(), shape.end())}});
}

void import_gather_elements(NodeContext& c) {
  int64_t r = c.rank(0);
  if (c.rank(1) != r) c.invalid("indices must have the rank ", r, " of the data, got ", c.rank(1));
  if (r == 0) c.invalid("the data must have rank >= 1");
  size_t axis = static_cast<size_t>(c.axis(c.attr_int("axis", 0), r));
  std::vector<int64_t> shape;
  for (const Dim& d : c.type(1).dims) {
    if (!d.is_static()) c.unsupported("the indices' shape must be static, got ", dims_to_string(c.type(1).dims));
    shape.push_back(d.static_value());
  }
  // ONNX allows negative indices, counted from the end of the axis.
  ValueId idx = c.cast(c.input(1), DType::kInt64);
  ValueId n = c.constant(KnownValue::from_dims(DType::kInt64, {}, {c.type(0).dims[axis]}));
  idx = c.op("where", {c.op("less", {idx, c.scalar(DType::kInt64, 0)}), c.op("add", {idx, n}), idx});
  std::vector<ValueId> coords;
  for (size_t a = 0; a < shape.size(); ++a) coords.push_back(a == axis ? idx : iota_along(c, shape, a));
  ValueId nd = c.op("stack", coords, {{"axis", r}});
  c.set_output(0, c.op("gather_nd", {c.input(0), nd}));
}

// ---- Slice ----

struct Bounds {
  Dim start, stop;
};

// ONNX clamps bounds into the dim; with a static dim we compute the clamped positions, with
// a symbolic one we keep in-range forms (open ends for the saturating values).
Bounds slice_bounds(const Dim& d, const Dim& start, const Dim& end, int64_t step) {
  constexpr int64_t kHuge = INT64_MAX / 2;
  if (d.is_static() && start.is_static() && end.is_static()) {
    int64_t n = d.static_value(), s = start.static_value(), e = end.static_value();
    if (s < 0) s = s < -n ? -1 : s + n;  // -1 marks "before the first" for the clamps below
    if (e < 0) e = e < -n ? -1 : e + n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      return {s, std::max(e, s)};
    }
    s = std::clamp<int64_t>(s, -1, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
    if (s < 0) return {0, 0};  // nothing to take
    return {s, e < 0 ? Dim(kOpen) : Dim(e)};
  }
  auto open_or = [&](const Dim& b, bool is_start) -> Dim {
    if (!b.is_static()) return b;
    int64_t v = b.static_value();
    if (v >= kHuge) return is_start && step > 0 ? d : Dim(kOpen);  // a start past the end is empty
    if (v <= -kHuge) return step > 0 ? Dim(0) : Dim(kOpen);
    return b;
  };
  return {open_or(start, true), open_or(end, false)};
}

// A known value sliced along one axis (of any rank: a pads list reshaped to [-1, 2] and
// reversed, as PyTorch's exporter writes F.pad, must stay known for Pad).
bool fold_slice(NodeContext& c, int64_t axis, const Bounds& b, int64_t step) {
  const KnownValue* k = c.known(0);
  if (!k || !k->ints || axis < 0 || axis >= static_cast<int64_t>(k->shape.size())) return false;
  if (!b.start.is_static() || !b.stop.is_static()) return false;
  const size_t ax = static_cast<size_t>(axis);
  int64_t n = k->shape[ax], s = b.start.static_value(), e = b.stop.static_value();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < ax; ++i) outer *= k->shape[i];
  for (size_t i = ax + 1; i < k->shape.size(); ++i) inner *= k->shape[i];
  // Positions first + j * step for j < count, counted without stepping past int64 (a step
  // may be as large as a file says).
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const int64_t first = step > 0 ? s : std::min(s, n - 1);
  const int64_t bound = step > 0 ? std::min(e, n) : (e == kOpen ? -1 : e);
  const int64_t span = step > 0 ? bound - first : first - bound;  // both within [-1, n]: no overflow
  const uint64_t count = n > 0 && span > 0 ? (static_cast<uint64_t>(span) - 1) / stride + 1 : 0;
  std::vector<Dim> out;
  for (int64_t o = 0; o < outer; ++o)
    for (uint64_t j = 0; j < count; ++j) {
      const uint64_t offset = j * stride;  // < span <= n
      const int64_t i = step > 0 ? first + static_cast<int64_t>(offset) : first - static_cast<int64_t>(offset);
      for (int64_t in = 0; in < inner; ++in) out.push_back((*k->ints)[static_cast<size_t>((o * n + i) * inner + in)]);
    }
  std::vector<int64_t> shape = k->shape;
  shape[ax] = static_cast<int64_t>(count);
  c.set_known_output(0, KnownValue::from_dims(k->dtype, std::move(shape), std::move(out)));
  return true;
}

std::vector<Dim> as_dims(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

void import_slice(NodeContext& c) {
  // Before opset 10, starts, ends and axes were attributes, and there were no steps.
  const bool attributes = c.opset() < 10;
  std::vector<Dim> starts = attributes ? as_dims(c.required_attr_ints("starts")) : c.known_dims(1, "starts");
  std::vector<Dim> ends = attributes ? as_dims(c.required_attr_ints("ends")) : c.known_dims(2, "ends");
  int64_t r = c.rank(0);
  std::vector<int64_t> axes;
  if (attributes && c.attr("axes")) axes = *c.attr_ints("axes");
  else if (!attributes && c.has_input(3)) axes = c.known_ints(3, "axes");
  else for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
  std::vector<int64_t> steps(axes.size(), 1);
  if (!attributes && c.has_input(4)) steps = c.known_ints(4, "steps");
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
    c.invalid("starts, ends, axes and steps must have the same length");
  const std::vector<Dim>& in = c.type(0).dims;
  int64_t last = -1;
  std::vector<Bounds> per_axis(static_cast<size_t>(r), Bounds{Dim(kOpen), Dim(kOpen)});
  std::vector<int64_t> per_step(static_cast<size_t>(r), 1);
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = c.axis(axes[i], r, "axes entry");
    if (seen[static_cast<size_t>(a)]) c.invalid("axes names axis ", a, " twice");
    seen[static_cast<size_t>(a)] = true;
    if (steps[i] == 0) c.invalid("step 0 on axis ", a);
    per_axis[static_cast<size_t>(a)] = slice_bounds(in[static_cast<size_t>(a)], starts[i], ends[i], steps[i]);
    per_step[static_cast<size_t>(a)] = steps[i];
    last = std::max(last, a);
  }
  if (axes.size() == 1 && fold_slice(c, c.axis(axes[0], r), per_axis[static_cast<size_t>(c.axis(axes[0], r))], steps[0]))
    return;
  std::vector<Dim> s, e;
  std::vector<int64_t> st;
  for (int64_t a = 0; a <= last; ++a) {
    s.push_back(per_axis[static_cast<size_t>(a)].start);
    e.push_back(per_axis[static_cast<size_t>(a)].stop);
    st.push_back(per_step[static_cast<size_t>(a)]);
  }
  if (last < 0) return c.set_output(0, c.input(0));
  c.set_output(0, c.op("slice_tensor", {c.input(0)}, {{"starts", s}, {"stops", e}, {"steps", st}}));
}

// ---- Scatter ----

// ONNX's reduction names are our scatter ops' (which apply updates in order, so repeated
// indices accumulate). The CPU kernels reduce floats, int32 and int64 only.
Attrs scatter_attrs(NodeContext& c) {
  std::string red = c.attr_string("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    c.invalid("reduction \"", red, "\" is not one of none, add, mul, max, min");
  DType dt = c.dtype(0);
  bool reducible = dt == DType::kFloat32 || dt == DType::kFloat64 || dtype_is_half(dt) || dt == DType::kInt32 ||
                   dt == DType::kInt64;
  if (red != "none" && !reducible)
    c.unsupported("reduction \"", red, "\" on ", dtype_name(dt), " data (only floats, int32 and int64)");
  return {{"reduction", red}};
}

void import_scatter_elements(NodeContext& c) {
  Attrs attrs = scatter_attrs(c);
  attrs.set("axis", c.attr_int("axis", 0));
  c.set_output(0, c.op("scatter", {c.input(0), c.input(2), c.input(1)}, attrs));
}

void import_scatter_nd(NodeContext& c) {
  c.set_output(0, c.op("scatter_nd", {c.input(0), c.input(2), c.input(1)}, scatter_attrs(c)));
}

// ---- OneHot: where(indices == range(depth), on, off) along `axis` ----

void import_one_hot(NodeContext& c) {
  const double depth_value = c.known_scalar(1, "depth");
  // Checked as a double: a NaN or a value past int64 has no integer to convert to.
  if (!(depth_value >= 1)) c.invalid("depth must be at least 1, got ", depth_value);
  if (depth_value > static_cast<double>(kMaxBuiltElements))
    c.exhausted("depth ", depth_value, " is past the ", kMaxBuiltElements, " classes a one-hot range is built for");
  const auto depth = static_cast<int64_t>(depth_value);
  int64_t r = c.rank(0) + 1;
  int64_t axis = c.axis(c.attr_int("axis", -1), r);
  ValueId idx = c.cast(c.input(0), DType::kInt64);
  // Negative indices count from the end of the depth.
  ValueId zero = c.scalar(DType::kInt64, 0), d = c.scalar(DType::kInt64, static_cast<double>(depth));
  idx = c.op("where", {c.op("less", {idx, zero}), c.op("add", {idx, d}), idx});
  std::vector<Dim> idx_dims = c.type(0).dims;
  idx_dims.insert(idx_dims.begin() + axis, Dim(1));
  idx = c.reshape(idx, idx_dims);
  std::vector<double> seq(static_cast<size_t>(depth));
  for (int64_t i = 0; i < depth; ++i) seq[static_cast<size_t>(i)] = static_cast<double>(i);
  std::vector<int64_t> range_shape(static_cast<size_t>(r), 1);
  range_shape[static_cast<size_t>(axis)] = depth;
  ValueId range = c.constant(KnownValue::from_doubles(DType::kInt64, range_shape, seq));
  ValueId hit = c.op("equal", {idx, range});
  ValueId values = c.input(2);
  ValueId off = c.op("slice_tensor", {values}, {{"starts", std::vector<Dim>{0}}, {"stops", std::vector<Dim>{1}},
                                                {"squeeze_axes", std::vector<int64_t>{0}}});
  ValueId on = c.op("slice_tensor", {values}, {{"starts", std::vector<Dim>{1}}, {"stops", std::vector<Dim>{2}},
                                               {"squeeze_axes", std::vector<int64_t>{0}}});
  c.set_output(0, c.op("where", {hit, on, off}));
}

}  // namespace

void register_indexing_importers(ImportTable& t) {
  t["Gather"] = import_gather;
  t["GatherND"] = import_gather_nd;
  t["GatherElements"] = import_gather_elements;
  t["Slice"] = import_slice;
  t["ScatterElements"] = import_scatter_elements;
  t["Scatter"] = import_scatter_elements;  // opsets 9 and 10: ScatterElements without reduction
  t["ScatterND"] = import_scatter_nd;
  t["OneHot"] = import_one_hot;
}

}  // namespace maxc::onnx
