// Elementwise unary math and activations (inventory §5.1). The output has the input's type.
// Transcendental ops take float inputs only: MAX rejects integers for them (acos says so),
// and a silent int -> float conversion would hide a missing cast in the caller's model.
#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

OpSchema unary(std::string name, DTypeClass accepts, std::vector<AttrSpec> attrs = {}) {
  return OpSchema{
      .name = std::move(name),
      .inputs = {{"x"}},
      .attrs = std::move(attrs),
      .infer = [accepts](const InferContext& ctx) -> std::vector<TensorType> {
        require_dtype(ctx, 0, accepts);
        return {ctx.input(0)};
      },
  };
}

std::vector<TensorType> infer_gelu(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  const std::string& mode = ctx.attr<std::string>("approximate");
  if (mode != "none" && mode != "tanh" && mode != "quick")
    ctx.fail("attribute 'approximate' is \"", mode, "\"; expected \"none\", \"tanh\" or \"quick\"");
  return {ctx.input(0)};
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  // Defined on integers too: abs/negate/relu by value, floor/round/trunc as the identity.
  for (const char* name : {"abs", "negate", "relu", "floor", "round", "trunc"})
    r.add(unary(name, DTypeClass::kNumeric));
  for (const char* name : {"acos", "atanh", "cos", "erf", "exp", "log", "log1p", "rsqrt", "sigmoid", "silu", "sin",
                           "sqrt", "tanh"})
    r.add(unary(name, DTypeClass::kFloat));
  OpSchema gelu = unary("gelu", DTypeClass::kFloat, {AttrSpec::with_default("approximate", std::string("none"))});
  gelu.infer = infer_gelu;
  r.add(std::move(gelu));
}

}  // namespace maxc
