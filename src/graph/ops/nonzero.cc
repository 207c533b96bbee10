// nonzero(x, out_dim) (inventory §5.14): the row-major indices of x's nonzero elements, as
// int64 [out_dim, rank(x)]. How many there are is known only once x is, so `out_dim` names
// that count: a symbol no input binds is bound when the op runs (the compiler splits the
// program there, compiler/stages.h); one an input binds, or a static dim, is checked then.
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_nonzero(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& out_dim = ctx.attr<std::vector<Dim>>("out_dim");
  if (out_dim.size() != 1) ctx.fail("attribute 'out_dim' must hold exactly one dim, got ", dims_to_string(out_dim));
  require_non_negative_dims(ctx, "out_dim", out_dim);
  if (dtype_is_sub_byte(x.dtype))
    ctx.fail(ctx.input_label(0), " is ", dtype_name(x.dtype), ", whose elements are not bytes");
  return {TensorType{DType::kInt64, {out_dim[0], Dim(x.rank())}, x.device}};
}

// bind_dims(x, out_dim): x itself, an int64 [N] whose entries are dims (a Reshape's shape
// computed from data), naming them: out_dim holds N symbols no input binds, which the
// engine binds to x's entries once x is computed (compiler/stages.h), so ops after it may
// use them in their types.
std::vector<TensorType> infer_bind_dims(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto& out_dim = ctx.attr<std::vector<Dim>>("out_dim");
  if (x.dtype != DType::kInt64 || x.rank() != 1 || !x.dims[0].is_static())
    ctx.fail(ctx.input_label(0), " must be int64 of one static axis, got ", x);
  if (static_cast<int64_t>(out_dim.size()) != x.dims[0].static_value())
    ctx.fail("attribute 'out_dim' names ", out_dim.size(), " dims for the ", x.dims[0], " entries of x");
  for (const Dim& d : out_dim)
    if (!d.is_symbolic()) ctx.fail("attribute 'out_dim' must hold symbols, got ", d);
  return {x};
}

}  // namespace

void register_nonzero_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "bind_dims",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("out_dim", AttrKind::kDims)},
                 .infer = infer_bind_dims});
  r.add(OpSchema{.name = "nonzero",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("out_dim", AttrKind::kDims)},
                 .infer = infer_nonzero});
}

}  // namespace maxc
