// The elementwise family on a GPU: every registry op and every fused chain becomes one
// generated kernel (kernels/cuda/fused_elementwise.h) built from the same ElemProgramSpec the
// CPU engine runs (engine/lower/elementwise_spec.h), so the two devices compute the same
// program. The kernel's source depends only on the program's structure, so plans for other
// shapes, and other models, reuse its compiled image. A cast to or from float8 runs a kernel
// of its own (float8_cast.cc), as on the CPU, and so does one to or from a sub-byte dtype,
// float4 or a packed integer (packed_cast.cc).
#include <memory>
#include <vector>

#include "engine/lower/elementwise_spec.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_sources.h"

namespace maxc {
namespace {

using Param = gpu::FusedKernel::Param;
using ParamKind = gpu::FusedKernel::ParamKind;

gpu::FusedKernel generate(const LowerContext& ctx, const cpu::ElemProgramSpec& spec) {
  return ctx.labeled([&] { return gpu::generate_fused_elementwise(spec); });
}

// Output 0 may overwrite an input of its own dtype and shape: each thread reads every leaf
// of its element before it writes that element.
int32_t inplace_input_of(const LowerContext& ctx, const gpu::FusedKernel& kernel) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (kernel.leaf_kinds[i] == gpu::FusedKernel::LeafKind::kDense && ctx.inputs[i] == ctx.outputs[0])
      return static_cast<int32_t>(i);
  return -1;
}

// The launch-time values of the kernel's parameters other than pointers, made once per plan.
struct LaunchValues {
  gpu::Shape shape;
  std::vector<gpu::Layout> layouts;  // by leaf (only broadcast leaves' are read)
};

Lowered lower_with_kernel(const LowerContext& ctx, const cpu::ElemProgramSpec& spec) {
  const gpu::FusedKernel fused = generate(ctx, spec);
  const GpuKernel kernel =
      load_generated_gpu_kernel(ctx, gpu::kernel_source_from_text(fused.name + ".cu", fused.source), fused.name);
  auto values = std::make_shared<LaunchValues>();
  values->shape = gpu::fused_shape(spec.dims);
  for (const auto& leaf : spec.leaves) values->layouts.push_back(gpu::broadcast_layout(leaf.dims, spec.dims));
  const cuda::LaunchShape launch = gpu_launch_for_elements(values->shape.numel);
  const std::vector<Param> params = fused.params;
  Lowered l{[kernel, values, params, launch](const KernelArgs& a) {
    // The driver reads every parameter through its address during the launch call.
    std::vector<const void*> pointers(params.size());
    std::vector<void*> args(params.size());
    for (size_t p = 0; p < params.size(); ++p) {
      const Param& param = params[p];
      switch (param.kind) {
        case ParamKind::kShape: args[p] = &values->shape; break;
        case ParamKind::kLeafLayout: args[p] = &values->layouts[param.index]; break;
        case ParamKind::kLeaf:
          pointers[p] = a.inputs[param.index];
          args[p] = &pointers[p];
          break;
        case ParamKind::kOutput:
          pointers[p] = a.outputs[param.index];
          args[p] = &pointers[p];
          break;
      }
    }
    kernel.launch(launch, a.stream, args.data());
  }};
  l.inplace_input = inplace_input_of(ctx, fused);
  return l;
}

Lowered lower_program(const LowerContext& ctx) {
  if (ctx.node.op == "cast") {
    const DType src = ctx.inputs[0].dtype, dst = ctx.outputs[0].dtype;
    if (is_gpu_packed_cast(src, dst)) return lower_gpu_packed_cast(ctx);
    if (cpu::is_cast_minifloat(src) || cpu::is_cast_minifloat(dst)) return lower_gpu_minifloat_cast(ctx);
  }
  std::optional<cpu::ElemProgramSpec> spec = elementwise_spec(ctx);
  if (!spec) return Lowered::alias_of_input();
  return lower_with_kernel(ctx, *spec);
}

}  // namespace

void register_gpu_elementwise_kernels(KernelTable& t) {
  register_elementwise_lowerings(t, lower_program, lower_gpu_reduce_max_min);
}

}  // namespace maxc
