// softmax, logsoftmax, layer_norm and rms_norm on a GPU: one block per row of the last dim
// (kernels/cuda/softmax.cu, layer_norm.cu, rms_norm.cu). softmax over another axis would read
// strided rows; it is not written yet and says so.
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

// The instance name for the input's dtype; UNIMPLEMENTED with the op's label when the GPU
// kernels have none.
template <typename F>
std::string instance(const LowerContext& ctx, F name_of) {
  try {
    return name_of(ctx.inputs[0].dtype);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
}

// The input as [rows, d] over its last dim, which output 0 has too.
Rows rows_of(const LowerContext& ctx, size_t first_param) {
  expect_output(ctx, 0, ctx.inputs[0]);
  return rows_over_last_dim(ctx, first_param);
}

Lowered lower_softmax(const LowerContext& ctx, bool log) {
  const AxisSplit s = split_at_axis(ctx, ctx.inputs[0]);
  if (s.inner != 1) ctx.unsupported("an axis other than the last (axis ", s.axis, " of ", ctx.inputs[0].to_string(), ")");
  const Rows r = rows_of(ctx, 1);
  const GpuKernel k = load_gpu_kernel(ctx, "softmax.cu", instance(ctx, [log](DType d) { return gpu::softmax_kernel(d, log); }));
  const cuda::LaunchShape launch = gpu_launch_for_rows(r.rows);
  Lowered l{[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t rows = r.rows, cols = r.d;
    void* args[] = {&x, &y, &rows, &cols};
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

}  // namespace

void register_gpu_normalization_kernels(KernelTable& t) {
  t.add("softmax", [](const LowerContext& ctx) { return lower_softmax(ctx, false); });
  t.add("logsoftmax", [](const LowerContext& ctx) { return lower_softmax(ctx, true); });
  t.add("layer_norm", lower_layer_norm);
  t.add("rms_norm", lower_rms_norm);
}

}  // namespace maxc
