// Lowerings of the indexing ops (inventory §5.13: slice_tensor, gather, gather_nd, scatter,
// scatter_nd), range (§5.14) and band_part (§5.8). Data moves as opaque 1/2/4/8-byte
// elements, so every dtype of those widths works; indices take any integer dtype.
//
// An index outside its axis cannot fail a call: kernels have no error channel. The kernels
// write zeros for it (gather, gather_nd) or skip it (scatter, scatter_nd); where the indices
// are a compile-time constant, the lowering checks them and fails with INVALID_ARGUMENT.
#include <climits>
#include <numeric>
#include <optional>

#include "base/checked_math.h"
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/band_part.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/gather.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/range.h"
#include "kernels/cpu/scatter.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

constexpr int64_t kOpen = INT64_MAX;  // an omitted slice bound, as the schema spells it

DType index_dtype(const LowerContext& ctx, size_t input, std::string_view name) {
  const DType t = ctx.inputs[input].dtype;
  if (!cpu::with_index_type(t, [](auto) {}))
    ctx.unsupported("input ", input, " '", name, "' of dtype ", dtype_label(t));
  return t;
}

// A kernel counts the indices it had to skip; any at all fails the call (after the kernel, on
// the calling thread), so a bad run-time index is an error, never zeros or a stray write.
void refuse_bad_indices(int64_t bad, std::string_view op, const Dims& dims) {
  if (bad > 0) {
    std::vector<Dim> ds(dims.begin(), dims.end());
    fail(Code::kInvalidArgument, "op '", op, "': ", bad, " index value(s) of 'indices' are out of range for ",
         dims_to_string(ds));
  }
}

// Checks constant indices (k per tuple, entry j bounded by dims[j]) now, at compile time.
void check_constant_indices(const LowerContext& ctx, size_t input, std::string_view name, const Dims& dims) {
  const Constant* c = ctx.input_constant(input);
  if (!c || dims.empty()) return;
  const int64_t n = ctx.inputs[input].num_elements(), k = static_cast<int64_t>(dims.size());
  cpu::with_index_type(ctx.inputs[input].dtype, [&](auto t) {
    const auto* idx = reinterpret_cast<const decltype(t)*>(c->data.get());
    for (int64_t e = 0; e < n; ++e) {
      const int64_t bound = dims[static_cast<size_t>(e % k)];
      if (cpu::wrap_index(idx[e], bound) < 0)
        fail(Code::kInvalidArgument, ctx.op_label(), ": index ", static_cast<int64_t>(idx[e]), " at element ", e,
             " of input ", input, " '", name, "' is out of range for a dim of size ", bound, " (expected ", -bound,
             " to ", bound - 1, ")");
    }
  });
}

// ---- slice_tensor ----------------------------------------------------------------------------

struct AxisSlice {
  int64_t start = 0;  // position of the first element read
  int64_t step = 1;
  int64_t length = 0;
};

// A static bound as a position, clamped the way Python's slice.indices clamps it.
int64_t clamp_bound(int64_t v, int64_t d, int64_t step) {
  if (v < 0) v += d;
  if (step > 0) return std::clamp<int64_t>(v, 0, d);
  return std::clamp<int64_t>(v, -1, d - 1);
}

int64_t slice_length(int64_t start, int64_t stop, int64_t step) {
  const int64_t span = step > 0 ? stop - start : start - stop;
  const int64_t s = step > 0 ? step : -step;
  return span <= 0 ? 0 : (span - 1) / s + 1;
}

// "start:stop:step" as Python writes it, an omitted bound left empty.
std::string slice_text(const Dim& start, const Dim& stop, int64_t step) {
  auto bound = [](const Dim& b) { return b == Dim(kOpen) ? std::string() : b.to_string(); };
  return str_cat(bound(start), ":", bound(stop), ":", step);
}

// A bound's value in this plan: static, or an expression of the plan's symbols (the end of
// a symbolic axis, t - 3); nullopt for a symbol the plan does not bind.
std::optional<int64_t> bound_value(const LowerContext& ctx, const Dim& b) {
  if (b.is_static()) return b.static_value();
  try {
    return ctx.eval_dim(b);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// One axis of the slice. `want` is the length the engine gave the output; known bounds must
// give it (out_dims is a run-time assertion), and a bound the plan cannot evaluate is
// recovered from it where the step is +-1 and the other bound is known.
AxisSlice slice_axis(const LowerContext& ctx, size_t axis, int64_t d, const Dim& start_b, const Dim& stop_b,
                     int64_t step, int64_t want) {
  auto known = [&](const Dim& b, bool is_start) -> std::optional<int64_t> {
    const std::optional<int64_t> value = bound_value(ctx, b);
    if (!value) return std::nullopt;
    const int64_t v = *value;
    if (v == kOpen) return is_start ? (step > 0 ? 0 : d - 1) : (step > 0 ? d : -1);
    return clamp_bound(v, d, step);
  };
  const std::optional<int64_t> start = known(start_b, true), stop = known(stop_b, false);
  AxisSlice s{0, step, want};
  if (start && stop) {
    s.start = *start;
    const int64_t len = slice_length(*start, *stop, step);
    if (len != want)
      fail(Code::kInvalidArgument, ctx.op_label(), ": axis ", axis, " of input 0 'x' ", ctx.inputs[0].to_string(),
           " sliced ", slice_text(start_b, stop_b, step), " has length ", len, " but the graph gives it ", want,
           " (attribute 'out_dims')");
  } else if (start) {
    s.start = *start;
  } else if (stop && (step == 1 || step == -1)) {
    s.start = *stop - want * step;
  } else {
    ctx.unsupported("the symbolic slice bounds ", slice_text(start_b, stop_b, step), " of axis ", axis,
                    " (a symbol the plan does not bind)");
  }
  // A step of up to INT64_MAX is the graph's to give: the last position read may not exist
  // as an int64 either.
  const std::optional<int64_t> span = checked_mul(want - 1, step);
  const std::optional<int64_t> last = span ? checked_add(s.start, *span) : std::nullopt;
  if (want > 0 && (s.start < 0 || s.start >= d || !last || *last < 0 || *last >= d))
    fail(Code::kInvalidArgument, ctx.op_label(), ": axis ", axis, " of input 0 'x' ", ctx.inputs[0].to_string(),
         " sliced ", slice_text(start_b, stop_b, step), " reads ", want, " positions from ", s.start, " by ", step,
         ", past the axis");
  return s;
}

// The output's length along each input axis: output 0's dims without the new axes, with a 1
// where an axis was squeezed.
Dims sliced_lengths(const LowerContext& ctx) {
  const Dims& out = ctx.outputs[0].dims;
  const int64_t rank = ctx.inputs[0].rank();
  std::vector<bool> is_new(out.size(), false), squeezed(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.attr<Dims>("new_axes")) is_new[static_cast<size_t>(axis_in(ctx, a, ctx.outputs[0].rank()))] = true;
  for (int64_t a : ctx.attr<Dims>("squeeze_axes")) squeezed[static_cast<size_t>(axis_in(ctx, a, rank))] = true;
  Dims kept;
  for (size_t i = 0; i < out.size(); ++i)
    if (!is_new[i]) kept.push_back(out[i]);
  Dims lengths;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) lengths.push_back(squeezed[static_cast<size_t>(i)] ? 1 : kept.at(next++));
  if (next != kept.size())
    fail(Code::kInternal, ctx.op_label(), ": output ", ctx.outputs[0].to_string(), " does not match input ",
         ctx.inputs[0].to_string(), " with its squeezed and new axes");
  return lengths;
}

}  // namespace

// The slice is a strided copy (lower_strided_copy, on the plan's device): each axis reads
// from its start with stride step * its stride; squeezed and new axes have size 1 and do not
// change the layout.
Lowered lower_slice_tensor(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  const auto& starts = ctx.attr<std::vector<Dim>>("starts");
  const auto& stops = ctx.attr<std::vector<Dim>>("stops");
  Dims steps(starts.size(), 1);
  if (ctx.attrs().has("steps")) steps = ctx.attr<Dims>("steps");
  const Dims lengths = sliced_lengths(ctx);
  const Dims in_strides = cpu::dense_strides(x.dims);
  Dims strides(in_strides);
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const AxisSlice s = slice_axis(ctx, i, x.dims[i], starts[i], stops[i], steps[i], lengths[i]);
    offset += s.start * in_strides[i];
    // One position read (or none): the step, which may be huge, moves nothing.
    strides[i] = lengths[i] > 1 ? in_strides[i] * s.step : in_strides[i];
  }
  for (size_t i = starts.size(); i < lengths.size(); ++i)
    if (lengths[i] != x.dims[i])
      fail(Code::kInternal, ctx.op_label(), ": unsliced axis ", i, " changed length");
  return lower_strided_copy(ctx, lengths, strides, offset);
}

namespace {

// ---- gather, gather_nd -----------------------------------------------------------------------

Lowered lower_gather(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), in.rank());
  const DType index_type = index_dtype(ctx, 1, "indices");
  const int64_t axis_dim = in.dims[static_cast<size_t>(axis)];
  check_constant_indices(ctx, 1, "indices", {axis_dim});
  const int64_t outer = product(in.dims, 0, static_cast<size_t>(axis));
  const int64_t count = ctx.inputs[1].num_elements();
  const int64_t slice = product(in.dims, static_cast<size_t>(axis) + 1, in.dims.size()) * element_bytes(ctx, in.dtype);
  return {[=](const KernelArgs& a) {
    refuse_bad_indices(cpu::gather(a.inputs[0], a.inputs[1], index_type, a.outputs[0], outer, axis_dim, count, slice),
                       "gather", {axis_dim});
  }};
}

Lowered lower_gather_nd(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& idx = ctx.inputs[1];
  const DType index_type = index_dtype(ctx, 1, "indices");
  const size_t b = static_cast<size_t>(ctx.attr<int64_t>("batch_dims"));
  const size_t k = static_cast<size_t>(idx.dims.back());
  if (b + k > in.dims.size() || b >= idx.dims.size())
    fail(Code::kInternal, ctx.op_label(), ": batch_dims ", b, " and index length ", k, " do not fit ", in.to_string());
  const Dims indexed(in.dims.begin() + b, in.dims.begin() + b + k);
  check_constant_indices(ctx, 1, "indices", indexed);
  const int64_t batch = product(in.dims, 0, b);
  const int64_t per_batch = product(idx.dims, b, idx.dims.size() - 1);
  const int64_t slice = product(in.dims, b + k, in.dims.size()) * element_bytes(ctx, in.dtype);
  return {[=](const KernelArgs& a) {
    refuse_bad_indices(
        cpu::gather_nd(a.inputs[0], a.inputs[1], index_type, a.outputs[0], batch, indexed, per_batch, slice),
        "gather_nd", indexed);
  }};
}

// ---- scatter, scatter_nd ---------------------------------------------------------------------

// A graph built before the attribute existed has none: it overwrites.
cpu::ScatterReduction scatter_reduction(const LowerContext& ctx) {
  const std::string reduction = ctx.attrs().has("reduction") ? ctx.attr<std::string>("reduction") : "none";
  if (reduction == "none") return cpu::ScatterReduction::kNone;
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::scatter_reduction_supports(dtype))
    ctx.unsupported("reduction \"", reduction, "\" on dtype ", dtype_label(dtype),
                    " (only floats, int32 and int64)");
  if (reduction == "add") return cpu::ScatterReduction::kAdd;
  if (reduction == "mul") return cpu::ScatterReduction::kMul;
  if (reduction == "max") return cpu::ScatterReduction::kMax;
  if (reduction == "min") return cpu::ScatterReduction::kMin;
  fail(Code::kInternal, ctx.op_label(), ": unknown reduction \"", reduction, "\"");
}

// Both write the updates over a copy of input 0, which the planner may make in place.
Lowered lower_scatter(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& upd = ctx.inputs[1];
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), in.rank());
  const DType index_type = index_dtype(ctx, 2, "indices");
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d != axis && upd.dims[d] > in.dims[d])
      fail(Code::kInvalidArgument, ctx.op_label(), ": input 1 'updates' ", upd.to_string(), " is longer than input 0 ",
           in.to_string(), " on axis ", d, ", which is not the scatter axis ", axis);
  }
  check_constant_indices(ctx, 2, "indices", {in.dims[static_cast<size_t>(axis)]});
  const int32_t w = element_bytes(ctx, in.dtype);
  const int64_t axis_dim = in.dims[static_cast<size_t>(axis)];
  const cpu::ScatterReduction reduction = scatter_reduction(ctx);
  const DType dtype = in.dtype;
  Lowered l{[=, in_dims = in.dims, upd_dims = upd.dims](const KernelArgs& a) {
    refuse_bad_indices(cpu::scatter(a.inputs[0], a.inputs[1], a.inputs[2], index_type, a.outputs[0], w, in_dims,
                                    upd_dims, axis, reduction, dtype),
                       "scatter", {axis_dim});
  }};
  l.inplace_input = 0;
  return l;
}

Lowered lower_scatter_nd(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& idx = ctx.inputs[2];
  const DType index_type = index_dtype(ctx, 2, "indices");
  const size_t k = static_cast<size_t>(idx.dims.back());
  const Dims indexed(in.dims.begin(), in.dims.begin() + k);
  check_constant_indices(ctx, 2, "indices", indexed);
  const int64_t count = product(idx.dims, 0, idx.dims.size() - 1);
  const int64_t slice = product(in.dims, k, in.dims.size()) * element_bytes(ctx, in.dtype);
  const cpu::ScatterReduction reduction = scatter_reduction(ctx);
  const DType dtype = in.dtype;
  Lowered l{[=](const KernelArgs& a) {
    refuse_bad_indices(cpu::scatter_nd(a.inputs[0], a.inputs[1], a.inputs[2], index_type, a.outputs[0], indexed, count,
                                       slice, reduction, dtype),
                       "scatter_nd", indexed);
  }};
  l.inplace_input = 0;
  return l;
}

// ---- range, band_part ------------------------------------------------------------------------

// The length is output 0's (out_dim, evaluated by the engine). The kernel cannot check it
// against start, stop and step; the schema did where they are constants.
Lowered lower_range(const LowerContext& ctx) {
  const DType dtype = ctx.outputs[0].dtype;
  const int64_t n = ctx.outputs[0].num_elements();
  if (!cpu::range_supports(dtype)) ctx.unsupported("dtype ", dtype_name(dtype));
  return {[=](const KernelArgs& a) { cpu::range_fill(dtype, a.inputs[0], a.inputs[2], a.outputs[0], n); }};
}

Lowered lower_band_part(const LowerContext& ctx) {
  const Shape& x = ctx.inputs[0];
  if (x.rank() < 2) fail(Code::kInternal, ctx.op_label(), ": ", x.to_string(), " has rank < 2");
  const int64_t m = x.dims[x.dims.size() - 2], n = x.dims.back();
  const int64_t batch = product(x.dims, 0, x.dims.size() - 2);
  const int64_t lower = ctx.attrs().has("num_lower") ? ctx.attr<int64_t>("num_lower") : -1;
  const int64_t upper = ctx.attrs().has("num_upper") ? ctx.attr<int64_t>("num_upper") : -1;
  const bool exclude = ctx.attr<bool>("exclude");
  const int32_t w = element_bytes(ctx, x.dtype);
  Lowered l{[=](const KernelArgs& a) {
    cpu::band_part(a.inputs[0], a.outputs[0], w, batch, m, n, lower, upper, exclude);
  }};
  l.inplace_input = 0;
  return l;
}

}  // namespace

void register_indexing_kernels(KernelTable& t) {
  t.add("slice_tensor", lower_slice_tensor);
  t.add("gather", lower_gather);
  t.add("gather_nd", lower_gather_nd);
  t.add("scatter", lower_scatter);
  t.add("scatter_nd", lower_scatter_nd);
  t.add("range", lower_range);
  t.add("band_part", lower_band_part);
}

}  // namespace maxc
