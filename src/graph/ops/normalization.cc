// Softmax and normalization (inventory §5.7): softmax, logsoftmax, layer_norm, rms_norm.
// All take float inputs and give the input's type. rms_norm is not a MAX graph op (only the
// nn.RMSNorm layer); its attributes are that layer's (eps, weight_offset,
// multiply_before_cast), with eps named `epsilon` like layer_norm's.
#include <cmath>

#include "graph/op_registry.h"
#include "graph/ops/checks.h"
#include "graph/ops/ops.h"
#include "graph/ops/shape_checks.h"

namespace maxc {
namespace {

std::vector<TensorType> infer_softmax(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  normalize_axis(ctx, ctx.attr<int64_t>("axis"), ctx.input(0).rank());
  return {ctx.input(0)};
}

void require_positive_epsilon(const InferContext& ctx) {
  double eps = ctx.attr<double>("epsilon");
  if (!(eps > 0) || !std::isfinite(eps)) ctx.fail("attribute 'epsilon' is ", eps, "; it must be finite and > 0");
}

// The parameter inputs (gamma, beta; weight) must be the input's dtype, on its device, with
// the shape [last dim of the input].
void check_norm_params(const InferContext& ctx) {
  require_dtype(ctx, 0, DTypeClass::kFloat);
  require_min_rank(ctx, 0, 1);
  require_same_dtype(ctx);
  common_device(ctx);
  const Dim& last = ctx.input(0).dims.back();
  for (size_t i = 1; i < ctx.num_inputs(); ++i) require_shape(ctx, i, {last}, "the last dim of input 0 'input'");
  require_positive_epsilon(ctx);
}

std::vector<TensorType> infer_layer_norm(const InferContext& ctx) {
  check_norm_params(ctx);
  return {ctx.input(0)};
}

std::vector<TensorType> infer_rms_norm(const InferContext& ctx) {
  check_norm_params(ctx);
  double offset = ctx.attr<double>("weight_offset");
  if (!std::isfinite(offset)) ctx.fail("attribute 'weight_offset' is ", offset, "; it must be finite");
  return {ctx.input(0)};
}

}  // namespace

void register_normalization_ops(OpRegistry& r) {
  for (const char* name : {"softmax", "logsoftmax"})
    r.add(OpSchema{.name = name,
                   .inputs = {{"value"}},
                   .attrs = {AttrSpec::with_default("axis", int64_t{-1})},
                   .infer = infer_softmax});
  r.add(OpSchema{.name = "layer_norm",
                 .inputs = {{"input"}, {"gamma"}, {"beta"}},
                 .attrs = {AttrSpec::required("epsilon", AttrKind::kFloat)},
                 .infer = infer_layer_norm});
  r.add(OpSchema{.name = "rms_norm",
                 .inputs = {{"input"}, {"weight"}},
                 .attrs = {AttrSpec::with_default("epsilon", 1e-6), AttrSpec::with_default("weight_offset", 0.0),
                           AttrSpec::with_default("multiply_before_cast", true)},
                 .infer = infer_rms_norm});
}

}  // namespace maxc
