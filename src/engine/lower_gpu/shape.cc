// Shape ops on a GPU (the aliases are engine/lower/alias.cc's, as on the CPU): permute and
// transpose are one strided copy (kernels/cuda/transpose.cu) that walks the
// output in order and reads the input through permuted strides.
#include <numeric>
#include <string>
#include <vector>

#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

using Dims = std::vector<int64_t>;

Lowered permuted(const LowerContext& ctx, const Dims& perm) {
  const Shape& in = ctx.inputs[0];
  if (in.rank() > gpu::kMaxRank) ctx.unsupported("rank ", in.rank(), " (at most ", gpu::kMaxRank, ")");
  Dims identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return lower_alias(ctx);
  std::string name;
  try {
    name = gpu::copy_strided_kernel(in.dtype);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
  const GpuKernel k = load_gpu_kernel(ctx, "transpose.cu", name);
  Dims in_strides(in.dims.size(), 1);
  for (int64_t d = in.rank() - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in.dims[d + 1];
  gpu::Layout layout{};
  for (size_t d = 0; d < perm.size(); ++d)
    layout.strides[d] = in_strides[static_cast<size_t>(axis_in(ctx, perm[d], in.rank(), "axis"))];
  const gpu::Shape shape = gpu::fused_shape(ctx.outputs[0].dims);
  const cuda::LaunchShape launch = gpu_launch_for_elements(shape.numel);
  return {[=](const KernelArgs& a) {
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    gpu::Layout x_layout = layout;
    gpu::Shape y_shape = shape;
    void* args[] = {&x, &x_layout, &y, &y_shape};
    k.launch(launch, a.stream, args);
  }};
}

Lowered lower_permute(const LowerContext& ctx) { return permuted(ctx, ctx.attr<Dims>("dims")); }

Lowered lower_transpose(const LowerContext& ctx) { return permuted(ctx, transpose_permutation(ctx)); }

}  // namespace

void register_gpu_shape_kernels(KernelTable& t) {
  t.add("permute", lower_permute);
  t.add("transpose", lower_transpose);
}

}  // namespace maxc
