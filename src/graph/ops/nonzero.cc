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

}  // namespace

void register_nonzero_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "nonzero",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("out_dim", AttrKind::kDims)},
                 .infer = infer_nonzero});
}

}  // namespace maxc
