// Comparisons (inventory §5.3, plus less and less_equal, which MAX spells as swapped
// greater/greater_equal): broadcast, compare in the promoted dtype, bool result.
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/promotion.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_comparison(const InferContext& ctx) {
  DeviceRef device = common_device(ctx);
  promote_inputs(ctx, {0, 1});  // only to reject pairs with no common dtype
  return {TensorType{DType::kBool, broadcast_inputs(ctx, {0, 1}), device}};
}

}  // namespace

void register_comparison_ops(OpRegistry& r) {
  for (const char* name : {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"})
    r.add(OpSchema{.name = name, .inputs = {{"lhs"}, {"rhs"}}, .infer = infer_comparison});
}

}  // namespace maxc
