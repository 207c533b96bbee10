// The fused attention node (compiler/fuse_attention.cc) on a GPU: kernels/cuda/attention.cu,
// one block per (batch, query row), with the CPU lowering's checks and semantics
// (engine/lower/linalg.cc, kernels/cpu/attention.h). q, k and v share a float dtype
// (float32, float16, bfloat16); the mask is float32 or that dtype and broadcasts to the
// scores [batch..., Lq, Lk].
#include <algorithm>
#include <string>
#include <vector>

#include "engine/lower/extents.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/common/attention_params.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

// q [..., Lq, D], k [..., Lk, D] (kᵀ [..., D, Lk] when k_transposed), v [..., Lk, Dv]; a
// mismatch is the fusion pass's bug (INTERNAL), as on the CPU.
gpu::AttentionParams attention_extents(const LowerContext& ctx, bool k_transposed) {
  const Shape &q = ctx.inputs[0], &k = ctx.inputs[1], &v = ctx.inputs[2];
  const size_t rank = q.dims.size();
  if (rank < 2 || k.dims.size() != rank || v.dims.size() != rank ||
      !std::equal(q.dims.begin(), q.dims.end() - 2, k.dims.begin()) ||
      !std::equal(q.dims.begin(), q.dims.end() - 2, v.dims.begin()))
    fail(Code::kInternal, ctx.op_label(), ": q ", q.to_string(), ", k ", k.to_string(), " and v ", v.to_string(),
         " do not share their batch dims");
  gpu::AttentionParams p{};
  p.batch = 1;
  for (size_t i = 0; i + 2 < rank; ++i) p.batch *= q.dims[i];
  p.q_len = q.dims[rank - 2];
  p.head_dim = q.dims[rank - 1];
  p.kv_len = k_transposed ? k.dims[rank - 1] : k.dims[rank - 2];
  p.v_dim = v.dims[rank - 1];
  p.k_transposed = k_transposed ? 1 : 0;
  if ((k_transposed ? k.dims[rank - 2] : k.dims[rank - 1]) != p.head_dim || v.dims[rank - 2] != p.kv_len)
    fail(Code::kInternal, ctx.op_label(), ": q ", q.to_string(), ", k ", k.to_string(), " and v ", v.to_string(),
         " do not fit (k_transposed = ", k_transposed, ")");
  return p;
}

// The mask's element strides against the scores [batch..., Lq, Lk], 0 where it broadcasts;
// into p's batch layout and row and column strides.
void set_mask_strides(const LowerContext& ctx, gpu::AttentionParams& p) {
  const Shape& mask = ctx.inputs[3];
  const Shape& q = ctx.inputs[0];
  const size_t rank = q.dims.size(), batch_rank = rank - 2;
  if (batch_rank > static_cast<size_t>(gpu::kMaxRank))
    ctx.unsupported("more than ", gpu::kMaxRank, " batch dims (q ", q.to_string(), ")");
  std::vector<int64_t> target(q.dims.begin(), q.dims.end() - 2);
  target.push_back(p.q_len);
  target.push_back(p.kv_len);
  const std::vector<int64_t> strides = broadcast_strides(ctx, mask, target, "mask", "the scores");
  p.mask_batch.numel = p.batch;
  p.mask_batch.rank = static_cast<int32_t>(batch_rank);
  for (size_t i = 0; i < batch_rank; ++i) {
    p.mask_batch.dims[i] = target[i];
    p.mask_layout.strides[i] = strides[i];
  }
  p.mask_row_stride = strides[rank - 2];
  p.mask_col_stride = strides[rank - 1];
}

std::string attention_instance(const LowerContext& ctx, bool has_mask) {
  const DType d = ctx.inputs[0].dtype;
  for (size_t i = 1; i < 3; ++i)
    if (ctx.inputs[i].dtype != d)
      ctx.unsupported("q, k and v of different dtypes (", ctx.inputs[0].to_string(), ", ", ctx.inputs[i].to_string(),
                      ")");
  return ctx.labeled([&] { return gpu::attention_kernel(d, has_mask ? ctx.inputs[3].dtype : d); });
}

// attention(q, k, v, mask?) {scale, k_transposed}.
Lowered lower_attention(const LowerContext& ctx) {
  if (ctx.inputs.size() != 3 && ctx.inputs.size() != 4)
    fail(Code::kInternal, ctx.op_label(), ": ", ctx.inputs.size(), " inputs (q, k, v and an optional mask)");
  const bool has_mask = ctx.inputs.size() == 4;
  const bool k_transposed = ctx.attrs().has("k_transposed") && ctx.attr<bool>("k_transposed");
  gpu::AttentionParams params = attention_extents(ctx, k_transposed);
  params.scale = static_cast<float>(ctx.attr<double>("scale"));
  if (has_mask) set_mask_strides(ctx, params);
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
