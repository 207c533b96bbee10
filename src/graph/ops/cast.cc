// cast(x, dtype, saturate=true) (inventory §5.12): same shape and device, any dtype to any dtype.
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
                 // saturate (ONNX Cast's): whether a value out of a float8 dtype's range
                 // becomes its largest finite value (true) or inf/NaN (false); only float8
                 // outputs read it (kernels/cpu/minifloat.h).
                 .attrs = {AttrSpec::required("dtype", AttrKind::kDType), AttrSpec::with_default("saturate", true)},
                 .infer = infer_cast});
}

}  // namespace maxc
