// Lowerings of softmax, logsoftmax, layer_norm, rms_norm and the fused add_layer_norm
// (inventory §5.7; the fused node's convention is at the top of compiler/fuse_layer_norm.cc).
// The norms work over the last dim, seen as [rows, d]; softmax over any axis, seen as
// [outer, n, inner].
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/softmax.h"

namespace maxc {
namespace {

[[noreturn]] void no_dtype_kernel(const LowerContext& ctx, const Shape& in) {
  ctx.unsupported("dtype ", dtype_label(in.dtype), " (input ", in.to_string(),
                  ")");
}

Lowered lower_softmax(const LowerContext& ctx, bool log) {
  const Shape& in = ctx.inputs[0];
  const cpu::SoftmaxFn fn = cpu::find_softmax_kernel(in.dtype, log);
  if (!fn) no_dtype_kernel(ctx, in);
  expect_output(ctx, 0, in);
  const AxisSplit s = split_at_axis(ctx, in);
  const int64_t outer = s.outer, n = s.n, inner = s.inner;
  Lowered l{[=](const KernelArgs& a) { fn(a.inputs[0], a.outputs[0], outer, n, inner); }};
  l.inplace_input = 0;
  return l;
}

Lowered lower_layer_norm(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const cpu::LayerNormFn fn = cpu::find_layer_norm_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  expect_output(ctx, 0, in);
  const Rows r = rows_over_last_dim(ctx, 1);
  const double eps = ctx.attr<double>("epsilon");
  Lowered l{[=](const KernelArgs& a) { fn(a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], r.rows, r.d, eps); }};
  l.inplace_input = 0;
  return l;
}

Lowered lower_rms_norm(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const cpu::RmsNormFn fn = cpu::find_rms_norm_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  expect_output(ctx, 0, in);
  const Rows r = rows_over_last_dim(ctx, 1);
  const double eps = ctx.attr<double>("epsilon"), offset = ctx.attr<double>("weight_offset");
  const bool multiply_before_cast = ctx.attr<bool>("multiply_before_cast");
  Lowered l{[=](const KernelArgs& a) {
    fn(a.inputs[0], a.inputs[1], a.outputs[0], r.rows, r.d, eps, offset, multiply_before_cast);
  }};
  l.inplace_input = 0;
  return l;
}

// Inputs (x, residual, gamma, beta); outputs (normalized) or (normalized, x + residual).
Lowered lower_add_layer_norm(const LowerContext& ctx) {
  if (ctx.inputs.size() != 4 || ctx.outputs.empty() || ctx.outputs.size() > 2)
    fail(Code::kInternal, ctx.op_label(), ": expected 4 inputs and 1 or 2 outputs, got ", ctx.inputs.size(), " and ",
         ctx.outputs.size());
  const Shape& in = ctx.inputs[0];
  const cpu::AddLayerNormFn fn = cpu::find_add_layer_norm_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  expect_output(ctx, 0, in);
  if (ctx.outputs.size() == 2) expect_output(ctx, 1, in);
  const Rows r = rows_over_last_dim(ctx, 2);
  const Shape& residual = ctx.inputs[1];
  int64_t residual_stride = r.d;
  if (residual.dtype != in.dtype)
    fail(Code::kInternal, ctx.op_label(), ": residual ", residual.to_string(), " has another dtype than input ",
         in.to_string());
  if (residual.dims != in.dims) {
    if (residual.num_elements() != r.d)
      fail(Code::kInternal, ctx.op_label(), ": residual ", residual.to_string(), " is neither the shape of input ",
           in.to_string(), " nor one row of it");
    residual_stride = 0;
  }
  const double eps = ctx.attr<double>("epsilon");
  const bool with_sum = ctx.outputs.size() == 2;
  Lowered l{[=](const KernelArgs& a) {
    fn(a.inputs[0], a.inputs[1], residual_stride, a.inputs[2], a.inputs[3], a.outputs[0],
       with_sum ? a.outputs[1] : nullptr, r.rows, r.d, eps);
  }};
  l.inplace_input = 0;
  return l;
}

}  // namespace

void register_normalization_kernels(KernelTable& t) {
  t.add("softmax", [](const LowerContext& ctx) { return lower_softmax(ctx, false); });
  t.add("logsoftmax", [](const LowerContext& ctx) { return lower_softmax(ctx, true); });
  t.add("layer_norm", lower_layer_norm);
  t.add("rms_norm", lower_rms_norm);
  t.add("add_layer_norm", lower_add_layer_norm);
}

}  // namespace maxc
