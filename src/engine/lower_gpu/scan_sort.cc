// argmax, argmin and cumsum on a GPU (kernels/cuda/arg_reduce.cu, scan.cu), with the CPU
// lowerings' checks (engine/lower/reduction.cc): the input seen as [outer, n, inner] around
// its axis, one thread per line. top_k and argsort are not written yet: the GPU table does
// not have them, so a graph that uses them fails to compile naming the op.
#include <string>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

template <typename F>
std::string instance(const LowerContext& ctx, F name_of) {
  try {
    return name_of(ctx.inputs[0].dtype);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
}

// `in` with its `axis` dim replaced by `extent`, of `dtype`.
Shape with_axis(const Shape& in, int64_t axis, int64_t extent, DType dtype) {
  Shape out{dtype, in.dims};
  out.dims[static_cast<size_t>(axis)] = extent;
  return out;
}

// The lines' launch: one thread each, grid-stride.
cuda::LaunchShape line_launch(const AxisSplit& s) { return gpu_launch_for_elements(s.outer * s.inner); }

Lowered lower_arg_reduce(const LowerContext& ctx, bool max) {
  const Shape& in = ctx.inputs[0];
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, with_axis(in, s.axis, 1, DType::kInt64));
  // No identity: an empty axis has no answer, as in numpy and on the CPU.
  if (s.n == 0 && s.outer * s.inner > 0)
    fail(Code::kInvalidArgument, ctx.op_label(), ": cannot reduce over axis ", s.axis, " of input ", in.to_string(),
         ": it is empty and the reduction has no identity");
  const GpuKernel k =
      load_gpu_kernel(ctx, "arg_reduce.cu", instance(ctx, [max](DType d) { return gpu::arg_reduce_kernel(d, max); }));
  const cuda::LaunchShape launch = line_launch(s);
  return {[k, launch, s](const KernelArgs& a) {
    if (s.outer * s.inner == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t outer = s.outer, n = s.n, inner = s.inner;
    void* args[] = {&x, &y, &outer, &n, &inner};
    k.launch(launch, a.stream, args);
  }};
}

Lowered lower_cumsum(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, in);
  const GpuKernel k = load_gpu_kernel(ctx, "scan.cu", instance(ctx, gpu::cumsum_kernel));
  const cuda::LaunchShape launch = line_launch(s);
  const int32_t exclusive = ctx.attr<bool>("exclusive") ? 1 : 0, reverse = ctx.attr<bool>("reverse") ? 1 : 0;
  Lowered l{[=](const KernelArgs& a) {
    if (s.outer * s.n * s.inner == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t outer = s.outer, n = s.n, inner = s.inner;
    int32_t excl = exclusive, rev = reverse;
    void* args[] = {&x, &y, &outer, &n, &inner, &excl, &rev};
    k.launch(launch, a.stream, args);
  }};
  l.inplace_input = 0;  // each thread reads an element before it writes it, and only its own line
  return l;
}

}  // namespace

void register_gpu_scan_sort_kernels(KernelTable& t) {
  t.add("argmax", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, true); });
  t.add("argmin", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, false); });
  t.add("cumsum", lower_cumsum);
}

}  // namespace maxc
