// A cast to or from float8 (float8_e8m0fnu too) on a GPU: cast.cu's cast<In, Out> on its
// own, as the CPU runs its cast_minifloat (engine/lower/elementwise.cc), because no fused
// program holds float8 values. The saturate attribute is the CPU's, passed to the kernel at
// launch. float4, two elements per byte, is packed_cast.cc's.
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cuda/common/indexing.cuh"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {

Lowered lower_gpu_minifloat_cast(const LowerContext& ctx) {
  const DType src = ctx.inputs[0].dtype, dst = ctx.outputs[0].dtype;
  if (src == dst) return Lowered::alias_of_input();
  if (!cpu::cast_minifloat_supports(src, dst))
    ctx.unsupported("a cast from ", dtype_label(src), " to ", dtype_label(dst));
  const GpuKernel k = load_gpu_kernel(ctx, "cast.cu", ctx.labeled([&] { return gpu::cast_kernel(src, dst); }));
  const gpu::i32 saturate = !ctx.attrs().has("saturate") || ctx.attr<bool>("saturate") ? 1 : 0;
  // Kernel inputs are dense, so one flat dim walks both tensors.
  const gpu::Shape shape = gpu::fused_shape({ctx.outputs[0].num_elements()});
  gpu::Layout dense{};
  dense.dense = 1;
  const cuda::LaunchShape launch = gpu_launch_for_elements(shape.numel);
  return {[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    gpu::Layout x_layout = dense;
    gpu::Shape y_shape = shape;
    gpu::i32 saturate_arg = saturate;
    void* args[] = {&x, &x_layout, &y, &y_shape, &saturate_arg};
    k.launch(launch, a.stream, args);
  }};
}

}  // namespace maxc
