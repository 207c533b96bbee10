// A cast to or from a sub-byte dtype (float4_e2m1fn, uint2, int2, uint4, int4) on a GPU:
// cast_packed.cu's cast_packed<In, Out> on its own, as the CPU runs cast_minifloat or
// cast_packed_int, because no fused program holds packed values. The GPU casts what the CPU
// does, with the same bits. A packed output launches a thread per output byte (each writes
// its byte whole), any other output a thread per element.
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/cast_packed_int.h"
#include "kernels/cuda/common/platform.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {

bool is_gpu_packed_cast(DType src, DType dst) { return dtype_is_sub_byte(src) || dtype_is_sub_byte(dst); }

Lowered lower_gpu_packed_cast(const LowerContext& ctx) {
  const DType src = ctx.inputs[0].dtype, dst = ctx.outputs[0].dtype;
  if (src == dst) return Lowered::alias_of_input();
  // A packed integer on either side is cast_packed_int's, else cast_minifloat's: exactly one
  // of the two can hold for any pair.
  if (!cpu::cast_packed_int_supports(src, dst) && !cpu::cast_minifloat_supports(src, dst))
    ctx.unsupported("a cast from ", dtype_label(src), " to ", dtype_label(dst));
  const GpuKernel k =
      load_gpu_kernel(ctx, "cast_packed.cu", ctx.labeled([&] { return gpu::cast_packed_kernel(src, dst); }));
  const gpu::i32 saturate = !ctx.attrs().has("saturate") || ctx.attr<bool>("saturate") ? 1 : 0;
  const int64_t numel = ctx.outputs[0].num_elements();
  const int64_t threads = dtype_is_sub_byte(dst) ? static_cast<int64_t>(dtype_bytes_for(dst, numel)) : numel;
  const cuda::LaunchShape launch = gpu_launch_for_elements(threads);
  return {[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    gpu::i64 numel_arg = numel;
    gpu::i32 saturate_arg = saturate;
    void* args[] = {&x, &y, &numel_arg, &saturate_arg};
    k.launch(launch, a.stream, args);
  }};
}

}  // namespace maxc
