// softmax, logsoftmax, layer_norm, the fused add_layer_norm and rms_norm on a GPU: one block
// per row of the last dim (kernels/cuda/softmax.cu, layer_norm.cu, rms_norm.cu); softmax over
// another axis reads its rows strided.
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

// The instance name for the input's dtype; UNIMPLEMENTED with the op's label when the GPU
// kernels have none (these ops are defined on float types only, as on the CPU).
template <typename F>
std::string instance(const LowerContext& ctx, F name_of) {
  const DType d = ctx.inputs[0].dtype;
  if (!dtype_is_float(d)) ctx.unsupported("dtype ", dtype_label(d), " (float types only)");
  return ctx.labeled([&] { return name_of(d); });
}

// The input as [rows, d] over its last dim, which output 0 has too.
Rows rows_of(const LowerContext& ctx, size_t first_param) {
  expect_output(ctx, 0, ctx.inputs[0]);
  return rows_over_last_dim(ctx, first_param);
}

Lowered lower_softmax(const LowerContext& ctx, bool log) {
  expect_output(ctx, 0, ctx.inputs[0]);
  const AxisSplit s = split_at_axis(ctx, ctx.inputs[0]);
  const GpuKernel k = load_gpu_kernel(ctx, "softmax.cu", instance(ctx, [log](DType d) { return gpu::softmax_kernel(d, log); }));
  const cuda::LaunchShape launch = gpu_launch_for_rows(s.outer * s.inner);
  Lowered l{[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t rows = s.outer * s.inner, cols = s.n, inner = s.inner;
    void* args[] = {&x, &y, &rows, &cols, &inner};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;  // a block reads its whole row before it writes it
  return l;
}

Lowered lower_layer_norm(const LowerContext& ctx) {
  const Rows r = rows_of(ctx, 1);
  const GpuKernel k = load_gpu_kernel(ctx, "layer_norm.cu", instance(ctx, gpu::layer_norm_kernel));
  const cuda::LaunchShape launch = gpu_launch_for_rows(r.rows);
  const double epsilon = ctx.attr<double>("epsilon");
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *gamma = a.inputs[1], *beta = a.inputs[2];
    void* y = a.outputs[0];
    int64_t rows = r.rows, cols = r.d;
    double eps = epsilon;
    void* args[] = {&x, &gamma, &beta, &y, &rows, &cols, &eps};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;
  return l;
}

Lowered lower_rms_norm(const LowerContext& ctx) {
  const Rows r = rows_of(ctx, 1);
  const GpuKernel k = load_gpu_kernel(ctx, "rms_norm.cu", instance(ctx, gpu::rms_norm_kernel));
  const cuda::LaunchShape launch = gpu_launch_for_rows(r.rows);
  const double epsilon = ctx.attr<double>("epsilon"), weight_offset = ctx.attr<double>("weight_offset");
  const int32_t multiply_before_cast = ctx.attr<bool>("multiply_before_cast") ? 1 : 0;
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *weight = a.inputs[1];
    void* y = a.outputs[0];
    int64_t rows = r.rows, cols = r.d;
    double eps = epsilon, offset = weight_offset;
    int32_t before_cast = multiply_before_cast;
    void* args[] = {&x, &weight, &y, &rows, &cols, &eps, &offset, &before_cast};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;
  return l;
}

// The residual's row stride: d when it has input 0's shape, 0 when it is one row for all.
int64_t residual_stride(const LowerContext& ctx, const Rows& r) {
  const Shape &in = ctx.inputs[0], &residual = ctx.inputs[1];
  if (residual.dtype != in.dtype)
    fail(Code::kInternal, ctx.op_label(), ": residual ", residual.to_string(), " has another dtype than input ",
         in.to_string());
  if (residual.dims == in.dims) return r.d;
  if (residual.num_elements() != r.d)
    fail(Code::kInternal, ctx.op_label(), ": residual ", residual.to_string(), " is neither the shape of input ",
         in.to_string(), " nor one row of it");
  return 0;
}

// Inputs (x, residual, gamma, beta); outputs (normalized) or (normalized, x + residual): see
// compiler/fuse_layer_norm.cc.
Lowered lower_add_layer_norm(const LowerContext& ctx) {
  if (ctx.inputs.size() != 4 || ctx.outputs.empty() || ctx.outputs.size() > 2)
    fail(Code::kInternal, ctx.op_label(), ": expected 4 inputs and 1 or 2 outputs, got ", ctx.inputs.size(), " and ",
         ctx.outputs.size());
  const Rows r = rows_of(ctx, 2);
  if (ctx.outputs.size() == 2) expect_output(ctx, 1, ctx.inputs[0]);
  const int64_t stride = residual_stride(ctx, r);
  const GpuKernel k = load_gpu_kernel(ctx, "layer_norm.cu", instance(ctx, gpu::add_layer_norm_kernel));
  const cuda::LaunchShape launch = gpu_launch_for_rows(r.rows);
  const double epsilon = ctx.attr<double>("epsilon");
  const bool with_sum = ctx.outputs.size() == 2;
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *residual = a.inputs[1], *gamma = a.inputs[2], *beta = a.inputs[3];
    void* y = a.outputs[0];
    void* sum = with_sum ? a.outputs[1] : nullptr;
    int64_t residual_stride = stride, rows = r.rows, cols = r.d;
    double eps = epsilon;
    void* args[] = {&x, &residual, &residual_stride, &gamma, &beta, &y, &sum, &rows, &cols, &eps};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;  // each thread reads its elements of x before it writes them to y
  return l;
}

}  // namespace

void register_gpu_normalization_kernels(KernelTable& t) {
  t.add("softmax", [](const LowerContext& ctx) { return lower_softmax(ctx, false); });
  t.add("logsoftmax", [](const LowerContext& ctx) { return lower_softmax(ctx, true); });
  t.add("layer_norm", lower_layer_norm);
  t.add("rms_norm", lower_rms_norm);
  t.add("add_layer_norm", lower_add_layer_norm);
}

}  // namespace maxc
