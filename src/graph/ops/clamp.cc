// clamp(x, min, max) (max.nn.clamp): each bound is optional; leaving both out is the
// identity. Bounds are float64 attributes and the kernel converts them to x's dtype.
#include <cmath>

#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_clamp(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kNumeric);
  for (const char* bound : {"min", "max"}) {
    if (ctx.has_attr(bound) && std::isnan(ctx.attr<double>(bound))) ctx.fail("attribute '", bound, "' is NaN");
  }
  if (ctx.has_attr("min") && ctx.has_attr("max") && ctx.attr<double>("min") > ctx.attr<double>("max"))
    ctx.fail("attribute 'min' (", ctx.attr<double>("min"), ") is greater than attribute 'max' (",
             ctx.attr<double>("max"), ")");
  return {ctx.input(0)};
}

}  // namespace

void register_clamp_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "clamp",
                 .inputs = {{"x"}},
                 .attrs = {AttrSpec::optional("min", AttrKind::kFloat), AttrSpec::optional("max", AttrKind::kFloat)},
                 .infer = infer_clamp});
}

}  // namespace maxc
