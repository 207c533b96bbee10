// Indexing (inventory §5.13, P0 part): slice_tensor, gather, gather_nd, scatter, scatter_nd.
// Index inputs take any integer dtype; data and updates share one dtype; all inputs share
// one device.
#include <algorithm>
#include <climits>

#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

constexpr int64_t kOpen = INT64_MAX;  // an omitted slice bound (Python's None)

std::string input_shape(const InferContext& ctx, size_t i) {
  return ctx.input_label(i) + " " + dims_to_string(ctx.input(i).dims);
}

// ---- slice_tensor ----------------------------------------------------------------------------

// A bound made a position: static negatives count from the end (within MAX's limits, checked
// when the dim is static); symbolic bounds are positions as they are.
Dim slice_position(const InferContext& ctx, const Dim& bound, const Dim& d, int64_t step, size_t axis,
                   std::string_view which) {
  if (!bound.is_static()) return bound;
  int64_t v = bound.static_value();
  if (d.is_static()) {
    int64_t n = d.static_value();
    int64_t lo = step > 0 ? -n : -n - 1, hi = step > 0 ? n : n - 1;
    if (v < lo || v > hi)
      ctx.fail(which, " ", v, " of axis ", axis, " is out of range for dim ", n, " with step ", step, " (expected ", lo,
               " to ", hi, ")");
  }
  return v < 0 ? d + v : Dim(v);
}

// The length of start:stop:step over dim d (numpy's rule); a static result is clamped at 0.
Dim slice_length(const InferContext& ctx, const Dim& d, const Dim& start, const Dim& stop, int64_t step,
                 size_t axis) {
  Dim len;
  if (step > 0) {
    Dim lo = start == Dim(kOpen) ? Dim(0) : slice_position(ctx, start, d, step, axis, "start");
    Dim hi = stop == Dim(kOpen) ? d : slice_position(ctx, stop, d, step, axis, "stop");
    len = step == 1 ? hi - lo : floordiv(hi - lo + (step - 1), step);
  } else {
    Dim hi = start == Dim(kOpen) ? d - 1 : slice_position(ctx, start, d, step, axis, "start");
    Dim lo = stop == Dim(kOpen) ? Dim(-1) : slice_position(ctx, stop, d, step, axis, "stop");
    len = floordiv(hi - lo + (-step - 1), -step);
  }
  if (len.is_static() && len.static_value() < 0) return 0;
  return len;
}

// NumPy basic slicing, as MAX's slice_tensor, with the index list spelled as attributes:
//   starts, stops (dims) and steps (ints, default all 1): one entry per leading input axis;
//     later axes are taken whole. INT64_MAX is an omitted bound. A step of -1 reverses.
//   squeeze_axes (input axes): axes indexed by an integer (x[3] is starts 3, stops 4, squeezed);
//     their slice must have length 1 and they leave the result.
//   new_axes (result axes): where a `None` inserts a size-1 axis.
//   out_dims: optional, one per entry of starts; names a sliced axis' length (asserted at
//     run time) where the computed one is not wanted.
std::vector<TensorType> infer_slice_tensor(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& starts = ctx.attr<std::vector<Dim>>("starts");
  const auto& stops = ctx.attr<std::vector<Dim>>("stops");
  size_t n = starts.size();
  if (stops.size() != n)
    ctx.fail("attributes 'starts' ", dims_to_string(starts), " and 'stops' ", dims_to_string(stops),
             " must have the same number of entries");
  std::vector<int64_t> steps(n, 1);
  if (ctx.has_attr("steps")) steps = ints_attr_of_size(ctx, "steps", n);
  if (static_cast<int64_t>(n) > x.rank())
    ctx.fail("attribute 'starts' has ", n, " entries but ", input_shape(ctx, 0), " has rank ", x.rank());
  const std::vector<Dim>* out_dims = nullptr;
  if (ctx.has_attr("out_dims")) {
    out_dims = &ctx.attr<std::vector<Dim>>("out_dims");
    if (out_dims->size() != n)
      ctx.fail("attribute 'out_dims' ", dims_to_string(*out_dims), " must have one entry per entry of 'starts' (", n,
               ")");
    require_non_negative_dims(ctx, "out_dims", *out_dims);
  }

  std::vector<Dim> dims = x.dims;
  for (size_t i = 0; i < n; ++i) {
    if (steps[i] == 0 || steps[i] == INT64_MIN)
      ctx.fail("attribute 'steps' ", ints_to_string(steps), " has ", steps[i], " at entry ", i,
               "; steps must be non-zero (and > INT64_MIN)");
    dims[i] = slice_length(ctx, x.dims[i], starts[i], stops[i], steps[i], i);
    if (out_dims) {
      const Dim& want = (*out_dims)[i];
      if (dims[i].is_static() && want.is_static() && !(dims[i] == want))
        ctx.fail("attribute 'out_dims' gives axis ", i, " the length ", want, " but the slice has ", dims[i]);
      dims[i] = want;
    }
  }

  std::vector<bool> squeezed(dims.size(), false);
  const auto& squeeze_axes = ctx.attr<std::vector<int64_t>>("squeeze_axes");
  for (int64_t a : squeeze_axes) {
    size_t axis = static_cast<size_t>(normalize_axis(ctx, a, x.rank(), "an entry of attribute 'squeeze_axes'"));
    if (squeezed[axis]) ctx.fail("attribute 'squeeze_axes' ", ints_to_string(squeeze_axes), " names axis ", axis, " twice");
    if (!(dims[axis] == Dim(1)))
      ctx.fail("axis ", axis, " is in attribute 'squeeze_axes' but its slice has length ", dims[axis], ", not 1");
    squeezed[axis] = true;
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!squeezed[i]) out.push_back(dims[i]);

  const auto& new_axes = ctx.attr<std::vector<int64_t>>("new_axes");
  int64_t out_rank = static_cast<int64_t>(out.size() + new_axes.size());
  std::vector<int64_t> positions;
  for (int64_t a : new_axes) positions.push_back(normalize_axis(ctx, a, out_rank, "an entry of attribute 'new_axes'"));
  std::sort(positions.begin(), positions.end());
  if (std::adjacent_find(positions.begin(), positions.end()) != positions.end())
    ctx.fail("attribute 'new_axes' ", ints_to_string(new_axes), " names one result axis twice");
  for (int64_t p : positions) out.insert(out.begin() + p, Dim(1));
  return {TensorType{x.dtype, std::move(out), x.device}};
}

// ---- gather, gather_nd -----------------------------------------------------------------------

// input[:axis] + indices.shape + input[axis+1:].
std::vector<TensorType> infer_gather(const InferContext& ctx) {
  require_dtype(ctx, 1, DTypeClass::kInteger);
  DeviceRef device = common_device(ctx);
  const TensorType& in = ctx.input(0);
  size_t axis = static_cast<size_t>(normalize_axis(ctx, ctx.attr<int64_t>("axis"), in.rank()));
  std::vector<Dim> dims(in.dims.begin(), in.dims.begin() + axis);
  dims.insert(dims.end(), ctx.input(1).dims.begin(), ctx.input(1).dims.end());
  dims.insert(dims.end(), in.dims.begin() + axis + 1, in.dims.end());
  return {TensorType{in.dtype, std::move(dims), device}};
}

// input[:b] + indices[b:-1] + input[b+k:], with k = indices' last dim (static) and b = batch_dims;
// the first b dims of input and indices must be equal (no broadcasting).
std::vector<TensorType> infer_gather_nd(const InferContext& ctx) {
  require_dtype(ctx, 1, DTypeClass::kInteger);
  DeviceRef device = common_device(ctx);
  const TensorType& in = ctx.input(0);
  const TensorType& idx = ctx.input(1);
  int64_t b = ctx.attr<int64_t>("batch_dims");
  if (b < 0) ctx.fail("attribute 'batch_dims' is ", b, "; it must be >= 0");
  if (b >= idx.rank())
    ctx.fail(input_shape(ctx, 1), " must have rank > batch_dims (", b, "), got rank ", idx.rank());
  const Dim& last = idx.dims.back();
  if (!last.is_static())
    ctx.fail("the last dim of ", input_shape(ctx, 1), " is ", last, "; it must be static (the index length)");
  int64_t k = last.static_value();
  if (b > in.rank() || k > in.rank() - b)
    ctx.fail("batch_dims (", b, ") + index length (", k, ", the last dim of ", ctx.input_label(1), ") exceed the rank ",
             in.rank(), " of ", input_shape(ctx, 0));
  for (int64_t i = 0; i < b; ++i) {
    if (!(in.dims[static_cast<size_t>(i)] == idx.dims[static_cast<size_t>(i)]))
      ctx.fail("batch axis ", i, " differs: ", input_shape(ctx, 0), " has ", in.dims[static_cast<size_t>(i)], " but ",
               input_shape(ctx, 1), " has ", idx.dims[static_cast<size_t>(i)]);
  }
  std::vector<Dim> dims(in.dims.begin(), in.dims.begin() + b);
  dims.insert(dims.end(), idx.dims.begin() + b, idx.dims.end() - 1);
  dims.insert(dims.end(), in.dims.begin() + b + k, in.dims.end());
  return {TensorType{in.dtype, std::move(dims), device}};
}

// ---- scatter, scatter_nd ---------------------------------------------------------------------

// reduction: how an update meets the element it lands on (ONNX's attribute): "none"
// overwrites, "add", "mul", "max" and "min" combine, so repeated indices accumulate.
void check_scatter_operands(const InferContext& ctx) {
  const std::string& reduction = ctx.attr<std::string>("reduction");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    ctx.fail("attribute 'reduction' is \"", reduction, "\"; expected \"none\", \"add\", \"mul\", \"max\" or \"min\"");
  require_dtype(ctx, 2, DTypeClass::kInteger);
  if (ctx.input(1).dtype != ctx.input(0).dtype)
    ctx.fail(ctx.input_label(1), " has dtype ", dtype_name(ctx.input(1).dtype), " but ", ctx.input_label(0), " has ",
             dtype_name(ctx.input(0).dtype), "; they must match");
  common_device(ctx);
}

// Like ONNX ScatterElements: updates and indices have one shape, of input's rank; the result
// is input's type.
std::vector<TensorType> infer_scatter(const InferContext& ctx) {
  check_scatter_operands(ctx);
  const TensorType& in = ctx.input(0);
  normalize_axis(ctx, ctx.attr<int64_t>("axis"), in.rank());
  if (ctx.input(1).rank() != in.rank())
    ctx.fail(input_shape(ctx, 1), " must have the rank ", in.rank(), " of ", input_shape(ctx, 0));
  if (ctx.input(2).dims != ctx.input(1).dims)
    ctx.fail(input_shape(ctx, 2), " must have the shape of ", input_shape(ctx, 1));
  return {in};
}

// indices [..., k] (k static, <= input's rank) address slices input[i_0, ..., i_k-1, :]:
// updates must be indices.shape[:-1] + input.shape[k:].
std::vector<TensorType> infer_scatter_nd(const InferContext& ctx) {
  check_scatter_operands(ctx);
  const TensorType& in = ctx.input(0);
  const TensorType& idx = ctx.input(2);
  require_min_rank(ctx, 2, 1);
  const Dim& last = idx.dims.back();
  if (!last.is_static())
    ctx.fail("the last dim of ", input_shape(ctx, 2), " is ", last, "; it must be static (the index length)");
  int64_t k = last.static_value();
  if (k > in.rank())
    ctx.fail("the index length ", k, " (the last dim of ", ctx.input_label(2), ") exceeds the rank ", in.rank(), " of ",
             input_shape(ctx, 0));
  std::vector<Dim> want(idx.dims.begin(), idx.dims.end() - 1);
  want.insert(want.end(), in.dims.begin() + k, in.dims.end());
  require_shape(ctx, 1, want, "indices.shape[:-1] + input.shape[k:]");
  return {in};
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "slice_tensor",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("starts", AttrKind::kDims), AttrSpec::required("stops", AttrKind::kDims),
                           AttrSpec::optional("steps", AttrKind::kInts),
                           AttrSpec::with_default("squeeze_axes", std::vector<int64_t>{}),
                           AttrSpec::with_default("new_axes", std::vector<int64_t>{}),
                           AttrSpec::optional("out_dims", AttrKind::kDims)},
                 .infer = infer_slice_tensor});
  r.add(OpSchema{.name = "gather",
                 .inputs = {{"input"}, {"indices"}},
                 .attrs = {AttrSpec::required("axis", AttrKind::kInt)},
                 .infer = infer_gather});
  r.add(OpSchema{.name = "gather_nd",
                 .inputs = {{"input"}, {"indices"}},
                 .attrs = {AttrSpec::with_default("batch_dims", int64_t{0})},
                 .infer = infer_gather_nd});
  r.add(OpSchema{.name = "scatter",
                 .inputs = {{"input"}, {"updates"}, {"indices"}},
                 .attrs = {AttrSpec::with_default("axis", int64_t{-1}),
                           AttrSpec::with_default("reduction", std::string("none"))},
                 .infer = infer_scatter});
  r.add(OpSchema{.name = "scatter_nd",
                 .inputs = {{"input"}, {"updates"}, {"indices"}},
                 .attrs = {AttrSpec::with_default("reduction", std::string("none"))},
                 .infer = infer_scatter_nd});
}

}  // namespace maxc
