// The strided copy behind every layout op, on the plan's device: kernels/cpu/copy.h on the
// host, kernels/cuda/transpose.cu's copy_strided on a GPU.
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/copy.h"

namespace maxc {

Lowered lower_strided_copy(const LowerContext& ctx, std::span<const int64_t> dims, std::span<const int64_t> src_strides,
                           int64_t src_offset) {
  const int32_t w = element_bytes(ctx, ctx.inputs[0].dtype);
  cpu::StridedCopy plan = cpu::plan_strided_copy(w, dims, src_strides, src_offset);
  if (plan.kind == cpu::StridedCopy::Kind::kContiguous && plan.src_offset == 0 &&
      plan.num_elements == ctx.inputs[0].num_elements())
    return lower_alias(ctx);
  if (!ctx.on_host()) return lower_gpu_strided_copy(ctx, dims, src_strides, src_offset);
  return {[plan = std::move(plan)](const KernelArgs& a) { cpu::strided_copy(plan, a.inputs[0], a.outputs[0]); }};
}

}  // namespace maxc
