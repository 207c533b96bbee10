// where(condition, x, y) (inventory §5.5): condition ? x : y, elementwise, with the three
// shapes broadcast together and x, y promoted to one dtype.
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/promotion.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_where(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kBool);
  DeviceRef device = common_device(ctx);
  DType dtype = promote_inputs(ctx, {1, 2});
  return {TensorType{dtype, broadcast_inputs(ctx, {0, 1, 2}), device}};
}

}  // namespace

void register_where_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "where", .inputs = {{"condition"}, {"x"}, {"y"}}, .infer = infer_where});
}

}  // namespace maxc
