// Elementwise binary arithmetic (inventory §5.2): numpy broadcasting of the shapes, promotion
// of the dtypes (graph/promotion.h), both inputs on one device.
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/promotion.h"

namespace maxc {
namespace {

// The type of `lhs op rhs`, before any op-specific dtype rule.
TensorType broadcast_binary(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  require_dtype(ctx, 1, DTypeClass::kNumeric);
  DeviceRef device = common_device(ctx);
  DType dtype = promote_inputs(ctx, {0, 1});
  return TensorType{dtype, broadcast_inputs(ctx, {0, 1}), device};
}

OpSchema arithmetic(std::string name) {
  return OpSchema{
      .name = std::move(name),
      .inputs = {{"lhs"}, {"rhs"}},
      .infer = [](const InferContext& ctx) -> std::vector<TensorType> { return {broadcast_binary(ctx)}; },
  };
}

// True division, like Python's `/`: integer operands give float32, MAX's default float.
std::vector<TensorType> infer_div(const InferContext& ctx) {
  TensorType out = broadcast_binary(ctx);
  if (!dtype_is_float(out.dtype)) out.dtype = DType::kFloat32;
  return {out};
}

// max/min, as in MAX: with two inputs elementwise (axis unused); with one, a reduction over
// `axis` that keeps it as size 1.
std::vector<TensorType> infer_max_min(const InferContext& ctx) {
  if (ctx.num_inputs() == 2) return {broadcast_binary(ctx)};
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  TensorType out = ctx.input(0);
  int64_t axis = normalize_axis(ctx, ctx.attr<int64_t>("axis"), out.rank());
  out.dims[static_cast<size_t>(axis)] = Dim(1);
  return {out};
}

OpSchema max_min(std::string name) {
  return OpSchema{
      .name = std::move(name),
      .inputs = {{"x"}, {"y", Arity::kOptional}},
      .attrs = {AttrSpec::with_default("axis", int64_t{-1})},
      .infer = infer_max_min,
  };
}

}  // namespace

void register_binary_ops(OpRegistry& r) {
  for (const char* name : {"add", "sub", "mul", "mod", "pow"}) r.add(arithmetic(name));
  OpSchema div = arithmetic("div");
  div.infer = infer_div;
  r.add(std::move(div));
  r.add(max_min("max"));
  r.add(max_min("min"));
}

}  // namespace maxc
