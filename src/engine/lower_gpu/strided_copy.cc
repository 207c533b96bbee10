// The layout ops' strided copy on a GPU: copy_strided of kernels/cuda/transpose.cu walks the
// output in order and reads the input through the strides. Dims that are contiguous in the
// source merge first, so a tile's [repeat, extent] pairs or a broadcast over many axes fit the
// kernel's kMaxRank.
#include <string>
#include <vector>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

struct Collapsed {
  std::vector<int64_t> dims, strides;
};

// Size-1 dims dropped, and a dim merged into the next where the source walks them as one.
Collapsed collapse(std::span<const int64_t> dims, std::span<const int64_t> strides) {
  Collapsed c;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!c.dims.empty() && c.strides.back() == strides[d] * dims[d]) {
      c.dims.back() *= dims[d];
      c.strides.back() = strides[d];
      continue;
    }
    c.dims.push_back(dims[d]);
    c.strides.push_back(strides[d]);
  }
  return c;
}

}  // namespace

Lowered lower_gpu_strided_copy(const LowerContext& ctx, std::span<const int64_t> dims,
                               std::span<const int64_t> src_strides, int64_t src_offset) {
  const Collapsed c = collapse(dims, src_strides);
  if (c.dims.size() > static_cast<size_t>(gpu::kMaxRank))
    ctx.unsupported("a copy over ", c.dims.size(), " strided dims (at most ", gpu::kMaxRank, ")");
  const GpuKernel k = load_gpu_kernel(
      ctx, "transpose.cu", ctx.labeled([&] { return gpu::copy_strided_kernel(ctx.inputs[0].dtype); }));
  gpu::Layout layout{};
  for (size_t d = 0; d < c.strides.size(); ++d) layout.strides[d] = c.strides[d];
  const gpu::Shape shape = gpu::fused_shape(c.dims);
  const cuda::LaunchShape launch = gpu_launch_for_elements(shape.numel);
  const int64_t offset_bytes = src_offset * element_bytes(ctx, ctx.inputs[0].dtype);
  return {[=](const KernelArgs& a) {
    const void* x = static_cast<const uint8_t*>(a.inputs[0]) + offset_bytes;
    void* y = a.outputs[0];
    gpu::Layout x_layout = layout;
    gpu::Shape y_shape = shape;
    void* args[] = {&x, &x_layout, &y, &y_shape};
    k.launch(launch, a.stream, args);
  }};
}

}  // namespace maxc
