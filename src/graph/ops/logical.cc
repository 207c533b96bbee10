// Logical ops and float predicates (inventory §5.4). Logical ops take bool only, like MAX;
// is_inf/is_nan take floats and give bool.
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_logical_binary(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kBool);
  require_dtype(ctx, 1, DTypeClass::kBool);
  DeviceRef device = common_device(ctx);
  return {TensorType{DType::kBool, broadcast_inputs(ctx, {0, 1}), device}};
}

std::vector<TensorType> infer_logical_not(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kBool);
  return {ctx.input(0)};
}

std::vector<TensorType> infer_float_predicate(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  TensorType out = ctx.input(0);
  out.dtype = DType::kBool;
  return {out};
}

}  // namespace

void register_logical_ops(OpRegistry& r) {
  for (const char* name : {"logical_and", "logical_or", "logical_xor"})
    r.add(OpSchema{.name = name, .inputs = {{"lhs"}, {"rhs"}}, .infer = infer_logical_binary});
  r.add(OpSchema{.name = "logical_not", .inputs = {{"x"}}, .infer = infer_logical_not});
  r.add(OpSchema{.name = "is_inf", .inputs = {{"x"}}, .infer = infer_float_predicate});
  r.add(OpSchema{.name = "is_nan", .inputs = {{"x"}}, .infer = infer_float_predicate});
}

}  // namespace maxc
