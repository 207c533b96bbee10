// masked_scatter(input, mask, updates, out_dim) (inventory §5.14, torch's masked_scatter):
// input with the positions where mask holds (mask broadcast to input's shape) filled, in
// row-major order, by updates' elements taken in order. The result has input's type, so the
// count of positions (out_dim, as MAX names it) appears in no type; the kernel checks that
// updates has enough elements for the mask it gets.
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_masked_scatter(const InferContext& ctx) {
  const TensorType& input = ctx.input(0);
  require_dtype(ctx, 1, DTypeClass::kBool);
  if (ctx.input(2).dtype != input.dtype)
    ctx.fail(ctx.input_label(2), " is ", dtype_name(ctx.input(2).dtype), " but input 0 'input' is ",
             dtype_name(input.dtype));
  if (dtype_is_sub_byte(input.dtype))
    ctx.fail("input 0 'input' is ", dtype_name(input.dtype), ", whose elements are not bytes");
  const auto& out_dim = ctx.attr<std::vector<Dim>>("out_dim");
  if (out_dim.size() != 1) ctx.fail("attribute 'out_dim' must hold exactly one dim, got ", dims_to_string(out_dim));
  require_non_negative_dims(ctx, "out_dim", out_dim);
  DeviceRef device = common_device(ctx);
  // The mask broadcasts to the input's shape, never the other way.
  const std::vector<Dim> dims = broadcast_inputs(ctx, {0, 1});
  if (!(dims == input.dims))
    ctx.fail(ctx.input_label(1), " ", dims_to_string(ctx.input(1).dims), " does not broadcast to the input's shape ",
             dims_to_string(input.dims));
  return {TensorType{input.dtype, input.dims, device}};
}

}  // namespace

void register_masked_scatter_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "masked_scatter",
                 .inputs = {{"input"}, {"mask"}, {"updates"}},
                 .attrs = {AttrSpec::required("out_dim", AttrKind::kDims)},
                 .infer = infer_masked_scatter});
}

}  // namespace maxc
