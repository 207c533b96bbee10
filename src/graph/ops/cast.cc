// cast(x, dtype) (inventory §5.12): same shape and device, any dtype to any dtype.
#include "graph/op_registry.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_cast(const InferContext& ctx) {
  DType dtype = ctx.attr<DType>("dtype");
  if (!dtype_is_valid(dtype)) ctx.fail("attribute 'dtype' has unknown dtype code ", static_cast<int32_t>(dtype));
  TensorType out = ctx.input(0);
  out.dtype = dtype;
  return {out};
}

}  // namespace

void register_cast_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "cast",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::required("dtype", AttrKind::kDType)},
                 .infer = infer_cast});
}

}  // namespace maxc
