// The fused attention node (compiler/fuse_attention.cc) on a GPU: kernels/cuda/attention.cu,
// one block per (batch, query row), with the CPU lowering's checks, semantics and strides
// (engine/lower/attention_shape.h, kernels/cpu/attention.h). q, k and v share a float dtype
// (float32, float16, bfloat16); the mask is float32 or that dtype (added), or bool (selecting),
// and broadcasts to the scores [batch..., Lq, Lk].
#include <algorithm>
#include <string>
#include <vector>

#include "engine/lower/attention_shape.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/common/attention_params.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

// The operand's strides along the batch dims into `layout`; its row stride.
int64_t set_strides(const std::vector<int64_t>& strides, gpu::Layout& layout) {
  const size_t batch_rank = strides.size() - 1;
  for (size_t i = 0; i < batch_rank; ++i) layout.strides[i] = strides[i];
  return strides[batch_rank];
}

// The node's extents and strides (engine/lower/attention_shape.h) as the kernel reads them.
gpu::AttentionParams attention_params(const LowerContext& ctx) {
  const cpu::AttentionShape s = attention_shape(ctx);
  const size_t batch_rank = s.batch_dims.size();
  if (batch_rank > static_cast<size_t>(gpu::kMaxRank))
    ctx.unsupported("more than ", gpu::kMaxRank, " batch dims (q ", ctx.inputs[0].to_string(), ")");
  gpu::AttentionParams p{};
  p.batch = s.batch();
  p.q_len = s.q_len;
  p.kv_len = s.kv_len;
  p.head_dim = s.head_dim;
  p.v_dim = s.v_dim;
  p.k_transposed = s.k_transposed ? 1 : 0;
  p.batch_shape.numel = p.batch;
  p.batch_shape.rank = static_cast<int32_t>(batch_rank);
  std::copy(s.batch_dims.begin(), s.batch_dims.end(), p.batch_shape.dims);
  p.q_row_stride = set_strides(s.q_strides, p.q_layout);
  p.k_row_stride = set_strides(s.k_strides, p.k_layout);
  p.v_row_stride = set_strides(s.v_strides, p.v_layout);
  p.out_row_stride = set_strides(s.out_strides, p.out_layout);
  if (s.has_mask) {
    p.mask_row_stride = set_strides({s.mask_strides.begin(), s.mask_strides.end() - 1}, p.mask_layout);
    p.mask_col_stride = s.mask_strides.back();
    p.mask_selects = s.mask_selects ? 1 : 0;
    p.mask_fill = s.mask_fill;
  }
  p.scale = static_cast<float>(ctx.attr<double>("scale"));
  return p;
}

std::string attention_instance(const LowerContext& ctx, bool has_mask) {
  const DType d = ctx.inputs[0].dtype;
  for (size_t i = 1; i < 3; ++i)
    if (ctx.inputs[i].dtype != d)
      ctx.unsupported("q, k and v of different dtypes (", ctx.inputs[0].to_string(), ", ", ctx.inputs[i].to_string(),
                      ")");
  return ctx.labeled([&] { return gpu::attention_kernel(d, has_mask ? ctx.inputs[3].dtype : d); });
}

// attention(q, k, v, mask?) {scale, k_transposed, layout?}.
Lowered lower_attention(const LowerContext& ctx) {
  const gpu::AttentionParams params = attention_params(ctx);
  const bool has_mask = ctx.inputs.size() == 4;
  const GpuKernel k = load_gpu_kernel(ctx, "attention.cu", attention_instance(ctx, has_mask));
  const int64_t items = params.batch * params.q_len;
  const cuda::LaunchShape launch = gpu_launch_for_rows(items);
  // One row of float scores per block of the grid.
  const uint64_t scratch = sizeof(float) * static_cast<uint64_t>(launch.grid[0]) * static_cast<uint64_t>(params.kv_len);
  Lowered l{[k, launch, params, has_mask](const KernelArgs& a) {
    if (params.batch * params.q_len == 0 || params.v_dim == 0) return;  // nothing to write
    const void *q = a.inputs[0], *key = a.inputs[1], *v = a.inputs[2];
    const void* mask = has_mask ? a.inputs[3] : nullptr;
    void* out = a.outputs[0];
    void* scores = a.scratch;
    gpu::AttentionParams p = params;
    void* args[] = {&q, &key, &v, &mask, &out, &scores, &p};
    k.launch(launch, a.stream, args);
  }};
  l.scratch_bytes = scratch;
  return l;
}

}  // namespace

void register_gpu_attention_kernels(KernelTable& t) { t.add("attention", lower_attention); }

}  // namespace maxc
