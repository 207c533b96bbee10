// Linear algebra (inventory §5.8): matmul, outer, band_part.
// matmul and outer take two numeric inputs of one dtype (no promotion: a mixed-dtype matmul
// is almost always a missing cast, and the kernels compute in one type).
#include "graph/broadcast.h"
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

void check_operands(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  require_dtype(ctx, 1, DTypeClass::kNumeric);
  require_same_dtype(ctx);
}

// numpy's matmul: [..., M, K] @ [..., K, N] -> [broadcast(...), M, N]. A rank-1 lhs is [1, K]
// and a rank-1 rhs is [K, 1], and the added axis is removed from the result.
std::vector<TensorType> infer_matmul(const InferContext& ctx) {
  check_operands(ctx);
  DeviceRef device = common_device(ctx);
  require_min_rank(ctx, 0, 1);
  require_min_rank(ctx, 1, 1);
  std::vector<Dim> a = ctx.input(0).dims, b = ctx.input(1).dims;
  bool lhs_vector = a.size() == 1, rhs_vector = b.size() == 1;
  if (lhs_vector) a.insert(a.begin(), Dim(1));
  if (rhs_vector) b.push_back(Dim(1));
  const Dim& k_lhs = a[a.size() - 1];
  const Dim& k_rhs = b[b.size() - 2];
  if (!(k_lhs == k_rhs))
    ctx.fail("inner dims differ: ", ctx.input_label(0), " ", dims_to_string(ctx.input(0).dims), " has K = ", k_lhs,
             " but ", ctx.input_label(1), " ", dims_to_string(ctx.input(1).dims), " has K = ", k_rhs);
  std::vector<Dim> out = broadcast_shapes(
      ctx, {{"batch dims of " + ctx.input_label(0), std::vector<Dim>(a.begin(), a.end() - 2)},
            {"batch dims of " + ctx.input_label(1), std::vector<Dim>(b.begin(), b.end() - 2)}});
  if (!lhs_vector) out.push_back(a[a.size() - 2]);
  if (!rhs_vector) out.push_back(b.back());
  return {TensorType{ctx.input(0).dtype, std::move(out), device}};
}

// outer: both inputs flattened, [n_lhs, n_rhs].
std::vector<TensorType> infer_outer(const InferContext& ctx) {
  check_operands(ctx);
  DeviceRef device = common_device(ctx);
  return {TensorType{ctx.input(0).dtype, {ctx.input(0).num_elements(), ctx.input(1).num_elements()}, device}};
}

std::vector<TensorType> infer_band_part(const InferContext& ctx) {
  require_min_rank(ctx, 0, 2);
  for (const char* bound : {"num_lower", "num_upper"}) {
    if (ctx.has_attr(bound) && ctx.attr<int64_t>(bound) < 0)
      ctx.fail("attribute '", bound, "' is ", ctx.attr<int64_t>(bound),
               "; it must be >= 0 (leave it out to keep the whole triangle)");
  }
  return {ctx.input(0)};
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "matmul", .inputs = {{"lhs"}, {"rhs"}}, .infer = infer_matmul});
  r.add(OpSchema{.name = "outer", .inputs = {{"lhs"}, {"rhs"}}, .infer = infer_outer});
  r.add(OpSchema{.name = "band_part",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::optional("num_lower", AttrKind::kInt), AttrSpec::optional("num_upper", AttrKind::kInt),
                           AttrSpec::with_default("exclude", false)},
                 .infer = infer_band_part});
}

}  // namespace maxc
