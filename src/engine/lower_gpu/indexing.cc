// gather on a GPU (kernels/cuda/gather.cu): x as [outer, axis, inner], the indices as one flat
// list. An index out of range cannot throw from a kernel: the kernel sets the step's error
// word, and the call fails with this lowering's error once its stream is done.
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

Lowered lower_gather(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& indices = ctx.inputs[1];
  const int64_t axis = axis_in(ctx, ctx.attr<int64_t>("axis"), in.rank());
  std::string name;
  try {
    name = gpu::gather_kernel(in.dtype, indices.dtype);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
  const GpuKernel k = load_gpu_kernel(ctx, "gather.cu", name);
  const int64_t outer = product(in.dims, 0, static_cast<size_t>(axis));
  const int64_t axis_size = in.dims[static_cast<size_t>(axis)];
  const int64_t inner = product(in.dims, static_cast<size_t>(axis) + 1, in.dims.size());
  const int64_t count = indices.num_elements();
  const cuda::LaunchShape launch = gpu_launch_for_elements(outer * count * inner);
  Lowered l{[=](const KernelArgs& a) {
    const void *x = a.inputs[0], *idx = a.inputs[1];
    void* y = a.outputs[0];
    int32_t* bad = a.error_word;
    int64_t o = outer, n = axis_size, i = inner, c = count;
    void* args[] = {&x, &idx, &y, &o, &n, &i, &c, &bad};
    k.launch(launch, a.stream, args);
  }};
  l.error = str_cat("index values of 'indices' are out of range for an axis of ", axis_size);
  return l;
}

}  // namespace

void register_gpu_indexing_kernels(KernelTable& t) { t.add("gather", lower_gather); }

}  // namespace maxc
