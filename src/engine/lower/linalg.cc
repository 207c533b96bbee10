// Lowering of the linear-algebra family: matmul, fused_matmul (compiler/fuse_matmul.cc),
// outer and attention (compiler/fuse_attention.cc). Each builds its kernel
// object once here; the closure shares it, read-only, with every concurrent execute.
#include <algorithm>
#include <memory>

#include "engine/lower/attention_shape.h"
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_outer.h"
#include "kernels/cpu/simd.h"

namespace maxc {
namespace {


// float32 x @ W for a bound 2-D weight W (stored [K, N], or [N, K] when rhs_transposed): W is
// packed once per model (PackedGemm), and each call runs our gemm on the packed panels, with
// the batch dims of x folded into its rows.
Lowered packed_matmul_kernel(const Shape& lhs, const Shape& rhs, bool rhs_transposed, const cpu::MatmulEpilogue& e) {
  const int64_t k = rhs.dims[rhs_transposed ? 1 : 0], n = rhs.dims[rhs_transposed ? 0 : 1];
  const int64_t m = k == 0 ? lhs.num_elements() : lhs.num_elements() / k;
  const bool bias = e.has_bias;
  Lowered lowered{[m, n, k, e, bias](const KernelArgs& a) {
                    cpu::gemm_packed(m, n, k, static_cast<const float*>(a.inputs[0]), k,
                                     static_cast<const float*>(a.inputs[1]), static_cast<float*>(a.outputs[0]), n,
                                     bias ? static_cast<const float*>(a.inputs[2]) : nullptr, e);
                  }};
  const int64_t stride_k = rhs_transposed ? 1 : n, stride_n = rhs_transposed ? k : 1;
  lowered.prepack = {1, str_cat("gemm_packed k=", k, " n=", n, rhs_transposed ? " from [n, k]" : ""),
                     cpu::PackedGemm::packed_bytes(k, n), [=](const void* w, void* packed) {
                       cpu::PackedGemm::pack(static_cast<const float*>(w), k, n, stride_k, stride_n,
                                             static_cast<float*>(packed));
                     }};
  return lowered;
}

// Packing pays where oneDNN's gemm would repack the weight on every call for few rows: at 8
// to 32 rows our kernel on the packed weight took 0.46-0.91x oneDNN's time (2 threads, K of
// 384 to 4096). Since its rows are blocked for L2 and its epilogue runs on cache-hot strips,
// it also matches or beats oneDNN at an encoder's 128-512 rows (1 thread: 77-91 GFLOP/s
// against 69-89 at 128 x 384..3072 x 384..3072), while oneDNN, which packs the activations
// too, stays ahead at 1024 rows. For one row oneDNN runs a gemv that packs nothing.
// All of that holds on an AVX2 CPU. Where AVX-512 runs, our kernel keeps AVX2's width and
// oneDNN doubles it: on a 2-core Zen 5, K x N of 384 x 1536 to 768 x 3072, oneDNN took
// 0.55-0.60x our time at 32-512 rows and 0.85-0.94x at 8, but 1.2-1.6x at 2.
constexpr int64_t kPackedMinRows = 2, kPackedMaxRows = 512, kPackedMaxRowsAvx512 = 7;

bool wants_packed(const LowerContext& ctx) {
  const Shape& lhs = ctx.inputs[0];
  const Shape& rhs = ctx.inputs[1];
  if (lhs.dtype != DType::kFloat32 || !ctx.input_is_weight(1) || rhs.rank() != 2 || lhs.rank() < 1) return false;
  const int64_t k = lhs.dims.back(), rows = k == 0 ? 0 : lhs.num_elements() / k;
  const int64_t max_rows = cpu::cpu_has_avx512() ? kPackedMaxRowsAvx512 : kPackedMaxRows;
  return rows >= kPackedMinRows && rows <= max_rows;
}

// A weight rhs that oneDNN reads in a layout of its own is packed once per model (the engine
// caches the copy per weight and layout) instead of on every call (kernels/cpu/matmul_dnnl.h).
Lowered matmul_kernel(const LowerContext& ctx, const cpu::MatmulEpilogue& e, bool rhs_transposed = false) {
  const Shape& lhs = ctx.inputs[0];
  const Shape& rhs = ctx.inputs[1];
  if (!cpu::gemm_supports(lhs.dtype)) ctx.unsupported("dtype ", dtype_label(lhs.dtype));
  if (wants_packed(ctx)) return packed_matmul_kernel(lhs, rhs, rhs_transposed, e);
  std::vector<int64_t> rhs_dims = rhs.dims;
  if (rhs_transposed) std::swap(rhs_dims[0], rhs_dims[1]);
  cpu::MatmulDims d = cpu::matmul_dims(lhs.dims, rhs_dims);
  d.rhs_transposed = rhs_transposed;
  const bool packable = ctx.input_is_weight(1) && rhs.rank() == 2;
  auto mm = std::make_shared<const cpu::Matmul>(d, lhs.dtype, e, packable, ctx.num_threads);
  const bool bias = e.has_bias;
  Lowered lowered{[mm, bias](const KernelArgs& a) {
                    mm->run(a.inputs[0], a.inputs[1], bias ? a.inputs[2] : nullptr, a.outputs[0], a.scratch);
                  },
                  mm->scratch_bytes()};
  if (mm->rhs_packed())
    lowered.prepack = {1, str_cat("onednn matmul ", mm->rhs_layout(), rhs_transposed ? " from [n, k]" : ""),
                       mm->packed_rhs_bytes(), [mm](const void* w, void* packed) { mm->pack_rhs(w, packed); }};
  return lowered;
}

Lowered lower_matmul(const LowerContext& ctx) { return matmul_kernel(ctx, {}); }

// The bias of a fused matmul broadcasts over the last dim only: [N] or [1, ..., N], or one
// element for all.
int64_t bias_length(const LowerContext& ctx, const Shape& bias, int64_t n) {
  const int64_t len = bias.dims.empty() ? 1 : bias.dims.back();
  if (bias.num_elements() != len || (len != n && len != 1))
    fail(Code::kInternal, ctx.op_label(), ": bias ", bias.to_string(), " does not broadcast over the last dim (",
         n, ") only");
  return len;
}

Lowered lower_fused_matmul(const LowerContext& ctx) {
  const std::string& name = ctx.attr<std::string>("activation");
  const std::optional<cpu::Activation> activation = cpu::activation_from_name(name);
  if (!activation) ctx.unsupported("activation '", name, "'");
  cpu::MatmulEpilogue e{*activation, ctx.attr<bool>("has_bias"), 0};
  if (ctx.inputs.size() != (e.has_bias ? 3u : 2u))
    fail(Code::kInternal, ctx.op_label(), ": ", ctx.inputs.size(), " inputs but has_bias is ", e.has_bias);
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype_is_integral(dtype) && *activation != cpu::Activation::kNone && *activation != cpu::Activation::kRelu)
    ctx.unsupported("activation '", name, "' on ", dtype_label(dtype));
  if (e.has_bias) {
    const Shape& out = ctx.outputs[0];
    e.bias_len = bias_length(ctx, ctx.inputs[2], out.dims.empty() ? 1 : out.dims.back());
  }
  const bool rhs_transposed = ctx.attrs().has("rhs_transposed") && ctx.attr<bool>("rhs_transposed");
  if (rhs_transposed && (ctx.inputs[1].rank() != 2 || dtype != DType::kFloat32))
    fail(Code::kInternal, ctx.op_label(), ": rhs_transposed needs a float32 matrix, got ", ctx.inputs[1].to_string());
  return matmul_kernel(ctx, e, rhs_transposed);
}

Lowered lower_outer(const LowerContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (!cpu::outer_supports(dtype)) ctx.unsupported("dtype ", dtype_label(dtype));
  const int64_t na = ctx.inputs[0].num_elements(), nb = ctx.inputs[1].num_elements();
  return {[dtype, na, nb](const KernelArgs& a) { cpu::outer(dtype, a.inputs[0], na, a.inputs[1], nb, a.outputs[0]); }};
}

// attention(q, k, v, mask?) {scale, k_transposed, layout?}: see engine/lower/attention_shape.h
// and kernels/cpu/attention.h.
Lowered lower_attention(const LowerContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (ctx.inputs[i].dtype != DType::kFloat32)
      ctx.unsupported("dtype ", dtype_label(ctx.inputs[i].dtype), " (float32 only)");
  if (ctx.inputs.size() == 4 && ctx.inputs[3].dtype != DType::kFloat32 && ctx.inputs[3].dtype != DType::kBool)
    ctx.unsupported("a ", dtype_label(ctx.inputs[3].dtype), " mask (float32 or bool)");
  const cpu::AttentionShape s = attention_shape(ctx);
  const float scale = static_cast<float>(ctx.attr<double>("scale"));
  auto attention = std::make_shared<const cpu::Attention>(s, scale, ctx.num_threads);
  const bool has_mask = s.has_mask;
  return {[attention, has_mask](const KernelArgs& a) {
            attention->run(static_cast<const float*>(a.inputs[0]), static_cast<const float*>(a.inputs[1]),
                           static_cast<const float*>(a.inputs[2]),
                           has_mask ? a.inputs[3] : nullptr,
                           static_cast<float*>(a.outputs[0]), a.scratch);
          },
          attention->scratch_bytes()};
}

}  // namespace

void register_linalg_kernels(KernelTable& t) {
  t.add("matmul", lower_matmul);
  t.add("fused_matmul", lower_fused_matmul);
  t.add("outer", lower_outer);
  t.add("attention", lower_attention);
}

}  // namespace maxc
