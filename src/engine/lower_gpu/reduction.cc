// sum, mean and the one-input max and min on a GPU (kernels/cuda/reduce.cu): over the last
// axis one block per row, over any other a thread per (outer, inner) output that walks the
// axis, so reads along the axis stay coalesced across threads.
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

Lowered lower_reduce(const LowerContext& ctx, gpu::Reduction reduction) {
  const Shape& in = ctx.inputs[0];
  const AxisSplit s = split_at_axis(ctx, in);
  Shape out = in;
  out.dims[static_cast<size_t>(s.axis)] = 1;
  expect_output(ctx, 0, out);
  const bool max_or_min = reduction == gpu::Reduction::kMax || reduction == gpu::Reduction::kMin;
  if (max_or_min && s.n == 0 && s.outer * s.inner > 0)
    fail(Code::kInvalidArgument, ctx.op_label(), ": cannot reduce over axis ", s.axis, " of input ", in.to_string(),
         ": it is empty and the reduction has no identity");
  const bool rows = s.inner == 1;
  const GpuKernel k =
      load_gpu_kernel(ctx, "reduce.cu", ctx.labeled([&] { return gpu::reduce_kernel(reduction, in.dtype, rows); }));
  if (rows) {
    const cuda::LaunchShape launch = gpu_launch_for_rows(s.outer);
    return {[=](const KernelArgs& a) {
      const void* x = a.inputs[0];
      void* y = a.outputs[0];
      int64_t outer = s.outer, n = s.n;
      void* args[] = {&x, &y, &outer, &n};
      k.launch(launch, a.stream, args);
    }};
  }
  const cuda::LaunchShape launch = gpu_launch_for_elements(s.outer * s.inner);
  return {[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t outer = s.outer, n = s.n, inner = s.inner;
    void* args[] = {&x, &y, &outer, &n, &inner};
    k.launch(launch, a.stream, args);
  }};
}

}  // namespace

Lowered lower_gpu_reduce_max_min(const LowerContext& ctx) {
  return lower_reduce(ctx, ctx.node.op == "max" ? gpu::Reduction::kMax : gpu::Reduction::kMin);
}

void register_gpu_reduction_kernels(KernelTable& t) {
  t.add("sum", [](const LowerContext& ctx) { return lower_reduce(ctx, gpu::Reduction::kSum); });
  t.add("mean", [](const LowerContext& ctx) { return lower_reduce(ctx, gpu::Reduction::kMean); });
}

}  // namespace maxc
