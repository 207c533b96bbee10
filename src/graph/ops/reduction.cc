// Reductions, scans and sorting (inventory §5.6): sum, mean, argmax, argmin, cumsum, top_k,
// argsort. Reductions keep the reduced axis as size 1; a negative axis counts from the end.
// The max/min reductions are `max`/`min` with one input (binary.cc), as in MAX.
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

// The input's type with `axis` (normalized) set to `d`; the input must be numeric.
TensorType along_axis(const InferContext& ctx, int64_t* axis_out = nullptr) {
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  TensorType out = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), out.rank());
  if (axis_out) *axis_out = axis;
  return out;
}

// sum, mean: the input's dtype, size 1 on the axis.
std::vector<TensorType> infer_reduce(const InferContext& ctx) {
  int64_t axis;
  TensorType out = along_axis(ctx, &axis);
  out.dims = with_dim(out.dims, axis, 1);
  return {out};
}

// argmax, argmin: int64 indices, size 1 on the axis.
std::vector<TensorType> infer_arg_reduce(const InferContext& ctx) {
  std::vector<TensorType> out = infer_reduce(ctx);
  out[0].dtype = DType::kInt64;
  return out;
}

std::vector<TensorType> infer_cumsum(const InferContext& ctx) { return {along_axis(ctx)}; }

// top_k: (values, int64 indices), both with k on the axis.
std::vector<TensorType> infer_top_k(const InferContext& ctx) {
  int64_t axis;
  TensorType values = along_axis(ctx, &axis);
  int64_t k = ctx.attr<int64_t>("k");
  if (k < 0) ctx.fail("attribute 'k' is ", k, "; it must be >= 0");
  const Dim& d = values.dims[static_cast<size_t>(axis)];
  if (d.is_static() && k > d.static_value())
    ctx.fail("attribute 'k' is ", k, " but axis ", axis, " of ", ctx.input_label(0), " ", dims_to_string(values.dims),
             " has only ", d, " elements");
  values.dims = with_dim(values.dims, axis, k);
  TensorType indices = values;
  indices.dtype = DType::kInt64;
  return {values, indices};
}

// argsort: int64 indices of the same shape. Like MAX, rank 1 only.
std::vector<TensorType> infer_argsort(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  require_rank(ctx, 0, 1);
  TensorType out = ctx.input(0);
  out.dtype = DType::kInt64;
  return {out};
}

OpSchema along(std::string name, std::vector<AttrSpec> extra, InferFn infer) {
  std::vector<AttrSpec> attrs = {AttrSpec::with_default("axis", int64_t{-1})};
  for (AttrSpec& a : extra) attrs.push_back(std::move(a));
  return OpSchema{.name = std::move(name), .inputs = {{"x"}}, .attrs = std::move(attrs), .infer = std::move(infer)};
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  r.add(along("sum", {}, infer_reduce));
  r.add(along("mean", {}, infer_reduce));
  r.add(along("argmax", {}, infer_arg_reduce));
  r.add(along("argmin", {}, infer_arg_reduce));
  r.add(along("cumsum", {AttrSpec::with_default("exclusive", false), AttrSpec::with_default("reverse", false)},
              infer_cumsum));
  OpSchema top_k = along("top_k", {AttrSpec::required("k", AttrKind::kInt)}, infer_top_k);
  top_k.inputs = {{"input"}};
  r.add(std::move(top_k));
  r.add(OpSchema{.name = "argsort",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::with_default("ascending", true)},
                 .infer = infer_argsort});
}

}  // namespace maxc
