// range(start, stop, step) (inventory §5.14): [start, start + step, ...) up to stop, exclusive.
// start, stop and step are scalars of one numeric dtype, which the output has too. The length
// comes from `out_dim` when given (it may be symbolic: the engine asserts it at run time);
// otherwise all three must be constants, and the length is computed here.
#include <cmath>

#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

// ceil((stop - start) / step) for integers; nullopt when an input's value is not known.
std::optional<int64_t> integer_length(const InferContext& ctx) {
  std::optional<int64_t> start, stop, step;
  if (auto* c = ctx.input_constant(0)) start = c->scalar_int();
  if (auto* c = ctx.input_constant(1)) stop = c->scalar_int();
  if (auto* c = ctx.input_constant(2)) step = c->scalar_int();
  if (!start || !stop || !step) return std::nullopt;
  if (*step == 0) ctx.fail("input 2 'step' is 0; it must be non-zero");
  int64_t span;
  if (__builtin_sub_overflow(*stop, *start, &span)) ctx.fail("stop - start overflows int64");
  if (span != 0 && (span < 0) != (*step < 0))
    ctx.fail("stop - start (", span, ") must be 0 or have the sign of step (", *step, ")");
  return span / *step + (span % *step != 0 ? 1 : 0);  // same signs: truncation is floor
}

std::optional<int64_t> float_length(const InferContext& ctx) {
  std::optional<double> start, stop, step;
  if (auto* c = ctx.input_constant(0)) start = c->scalar_float();
  if (auto* c = ctx.input_constant(1)) stop = c->scalar_float();
  if (auto* c = ctx.input_constant(2)) step = c->scalar_float();
  if (!start || !stop || !step) return std::nullopt;
  if (*step == 0) ctx.fail("input 2 'step' is 0; it must be non-zero");
  double span = *stop - *start;
  if (span != 0 && (span < 0) != (*step < 0))
    ctx.fail("stop - start (", span, ") must be 0 or have the sign of step (", *step, ")");
  double n = std::ceil(span / *step);
  if (!std::isfinite(n) || n > 9.0e18) ctx.fail("the range has too many elements (", n, ")");
  return static_cast<int64_t>(n);
}

std::vector<TensorType> infer_range(const InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    require_dtype(ctx, i, DTypeClass::kNumeric);
    if (ctx.input(i).rank() != 0)
      ctx.fail(ctx.input_label(i), " must be a scalar (rank 0), got ", dims_to_string(ctx.input(i).dims));
  }
  require_same_dtype(ctx);
  DeviceRef device = common_device(ctx);
  DType dtype = ctx.input(0).dtype;
  std::optional<int64_t> computed = dtype_is_float(dtype) ? float_length(ctx) : integer_length(ctx);

  if (!ctx.has_attr("out_dim")) {
    if (!computed) ctx.fail("attribute 'out_dim' is required when start, stop or step is not a constant");
    return {TensorType{dtype, {Dim(*computed)}, device}};
  }
  const auto& out_dim = ctx.attr<std::vector<Dim>>("out_dim");
  if (out_dim.size() != 1) ctx.fail("attribute 'out_dim' must hold exactly one dim, got ", dims_to_string(out_dim));
  const Dim& d = out_dim[0];
  if (d.is_static() && d.static_value() < 0) ctx.fail("attribute 'out_dim' is negative (", d, ")");
  if (computed && d.is_static() && d.static_value() != *computed)
    ctx.fail("attribute 'out_dim' is ", d, " but start, stop and step give ", *computed, " elements");
  return {TensorType{dtype, {d}, device}};
}

}  // namespace

void register_range_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "range",
                 .inputs = {{"start"}, {"stop"}, {"step"}},
                 .attrs = {AttrSpec::optional("out_dim", AttrKind::kDims)},
                 .infer = infer_range});
}

}  // namespace maxc
