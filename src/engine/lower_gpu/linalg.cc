// matmul and the fused dense layer (compiler/fuse_matmul.cc) on a GPU. Batches broadcast as
// numpy's matmul does: the last collapsed batch dim is the launch's (each operand has one
// batch stride there, 0 where it is shared), and the batch dims before it, when they do not
// collapse into it ([2, 1, M, K] @ [5, K, N]), are a loop of launches, one per index.
//
// Two kernels serve them. cuBLASLt (driver/cuda/cublaslt_matmul.h; on a HIP device hipBLASLt
// behind the same plan), when the process has it and it can compute the node exactly:
// float32, float16 or bfloat16; no activation, relu, or gelu_tanh (the libraries' GELU
// epilogue is the tanh approximation, so the erf "gelu" is not one they have); a bias of one
// value per output column. Otherwise, and for a call whose pointers are not aligned as the
// library's algorithm was promised, the tiled kernel of kernels/cuda/matmul.cu with the bias
// and activation in its epilogue.
//
// MAX_C_CUBLASLT=0 in the environment (read when a plan is built) keeps every matmul on the
// tiled kernel. The choice is logged at debug level (MAX_C_LOG_LEVEL=debug), one line a node.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/log.h"
#include "driver/cuda/cublaslt_matmul.h"
#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/device.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/matmul_shape.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

constexpr unsigned kTile = 16;  // kMatmulTile of matmul.cu

struct MatmulLaunch {
  int64_t m = 0, n = 0, k = 0, a_batch_stride = 0, b_batch_stride = 0, bias_len = 0;
  int32_t b_transposed = 0;
  int64_t batch = 1;  // of one launch: the last batch dim
  cuda::LaunchShape shape;
  // One launch per index of the batch dims before the last (one at offset 0 when there are
  // none): each one's element offsets in A, B and C.
  struct Offsets {
    int64_t a = 0, b = 0, c = 0;
  };
  std::vector<Offsets> outer;
  int64_t element_bytes = 0;
};

MatmulLaunch plan_matmul(const LowerContext& ctx, bool rhs_transposed, int64_t bias_len) {
  std::vector<int64_t> rhs_dims = ctx.inputs[1].dims;
  if (rhs_transposed) std::swap(rhs_dims[0], rhs_dims[1]);
  const cpu::MatmulDims d = cpu::matmul_dims(ctx.inputs[0].dims, rhs_dims);
  MatmulLaunch l{d.m, d.n, d.k, 0, 0, bias_len, rhs_transposed ? 1 : 0, 1, {}, {}, 0};
  l.element_bytes = dtype_size_in_bytes(ctx.inputs[0].dtype);
  if (!d.out_batch.empty()) {
    l.batch = d.out_batch.back();
    l.a_batch_stride = d.lhs_batch.back() == 1 ? 0 : d.m * d.k;
    l.b_batch_stride = d.rhs_batch.back() == 1 ? 0 : d.k * d.n;
  }
  const int64_t launches = l.batch > 0 ? d.batch_count() / l.batch : 0;
  for (int64_t o = 0; launches > 1 && o < launches; ++o)
    l.outer.push_back({d.lhs_offset(o * l.batch), d.rhs_offset(o * l.batch), o * l.batch * d.m * d.n});
  if (l.outer.empty()) l.outer.push_back({});
  l.batch = std::max<int64_t>(l.batch, 1);
  if (l.batch > 65535) ctx.unsupported("more than 65535 batches in the last batch dim (", l.batch, ")");
  l.shape.block[0] = l.shape.block[1] = kTile;
  l.shape.grid[0] = static_cast<unsigned>(std::max<int64_t>((d.n + kTile - 1) / kTile, 1));
  l.shape.grid[1] = static_cast<unsigned>(std::max<int64_t>((d.m + kTile - 1) / kTile, 1));
  l.shape.grid[2] = static_cast<unsigned>(l.batch);
  return l;
}

GpuKernel load_tiled_kernel(const LowerContext& ctx, cpu::Activation activation) {
  return load_gpu_kernel(ctx, "matmul.cu",
                         ctx.labeled([&] { return gpu::matmul_kernel(ctx.inputs[0].dtype, activation); }));
}

void launch_tiled(const GpuKernel& k, const MatmulLaunch& l, const KernelArgs& a) {
  const auto at = [&](const void* p, int64_t elements) {
    return static_cast<const char*>(p) + elements * l.element_bytes;
  };
  const void* bias = l.bias_len > 0 ? a.inputs[2] : nullptr;
  int64_t m = l.m, n = l.n, k_dim = l.k, a_stride = l.a_batch_stride, b_stride = l.b_batch_stride;
  int64_t bias_len = l.bias_len;
  int32_t b_transposed = l.b_transposed;
  for (const MatmulLaunch::Offsets& o : l.outer) {
    const void *lhs = at(a.inputs[0], o.a), *rhs = at(a.inputs[1], o.b);
    void* out = const_cast<char*>(at(a.outputs[0], o.c));
    void* args[] = {&lhs, &rhs, &bias, &out, &m, &n, &k_dim, &a_stride, &b_stride, &b_transposed, &bias_len};
    k.launch(l.shape, a.stream, args);
  }
}

// ---- cuBLASLt --------------------------------------------------------------------------------

bool cublaslt_enabled() {
  const char* env = std::getenv("MAX_C_CUBLASLT");
  return !(env && std::string_view(env) == "0");
}

// The epilogue activation cuBLASLt computes exactly as the graph means it, if it has one.
std::optional<cuda::CublasLtActivation> cublaslt_activation(cpu::Activation a) {
  switch (a) {
    case cpu::Activation::kNone: return cuda::CublasLtActivation::kNone;
    case cpu::Activation::kRelu: return cuda::CublasLtActivation::kRelu;
    case cpu::Activation::kGeluTanh: return cuda::CublasLtActivation::kGeluTanh;
    default: return std::nullopt;  // erf gelu, sigmoid, tanh, silu: not cuBLASLt epilogues
  }
}

cuda::CublasLtMatmulSpec cublaslt_spec(const LowerContext& ctx, const MatmulLaunch& l, cuda::CublasLtActivation act) {
  cuda::CublasLtMatmulSpec s;
  s.dtype = ctx.inputs[0].dtype;
  s.m = l.m;
  s.n = l.n;
  s.k = l.k;
  s.batch = l.batch;
  s.a_batch_stride = l.a_batch_stride;
  s.b_batch_stride = l.b_batch_stride;
  s.b_transposed = l.b_transposed != 0;
  s.bias = l.bias_len > 0;
  s.activation = act;
  return s;
}

// The node's cuBLASLt plan, or null with the reason the tiled kernel serves it instead.
std::shared_ptr<const cuda::CublasLtMatmul> plan_cublaslt(const LowerContext& ctx, const MatmulLaunch& l,
                                                          cpu::Activation activation, std::string* why_not) {
  if (!cublaslt_enabled()) {
    *why_not = "MAX_C_CUBLASLT=0";
    return nullptr;
  }
  const std::shared_ptr<const cuda::CublasLtLibrary> library = cuda::cublaslt(ctx.device->cuda()->api().backend);
  if (!library->available) {
    *why_not = library->unavailable_reason;
    return nullptr;
  }
  const std::optional<cuda::CublasLtActivation> act = cublaslt_activation(activation);
  if (!act) {
    *why_not = str_cat(library->name(), " has no '", cpu::activation_name(activation), "' epilogue");
    return nullptr;
  }
  if (l.bias_len > 0 && l.bias_len != l.n) {
    *why_not = str_cat(library->name(), "'s bias is one value per output column, not one for all");
    return nullptr;
  }
  if (l.outer.size() > 1) {
    *why_not = "batch dims that do not collapse into one (the tiled kernel loops over them)";
    return nullptr;
  }
  try {
    auto handle = cuda::CublasLtHandle::get(library, *ctx.device->cuda());
    return cuda::CublasLtMatmul::plan(std::move(handle), cublaslt_spec(ctx, l, *act), why_not);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what(), " (MAX_C_CUBLASLT=0 uses the tiled kernel instead)");
  }
}

Lowered cublaslt_kernel(const LowerContext& ctx, std::shared_ptr<const cuda::CublasLtMatmul> plan,
                        cpu::Activation activation, const MatmulLaunch& l) {
  // For a call whose pointers are less aligned than the plan promised cuBLASLt (a tensor
  // imported at an odd offset): the arena and the allocators align far more than that.
  const GpuKernel fallback = load_tiled_kernel(ctx, activation);
  const std::string label = ctx.op_label();
  Lowered lowered{[plan, fallback, l, label](const KernelArgs& a) {
    const void* bias = l.bias_len > 0 ? a.inputs[2] : nullptr;
    if (!cuda::CublasLtMatmul::pointers_aligned(a.inputs[0], a.inputs[1], bias, a.outputs[0])) {
      launch_tiled(fallback, l, a);
      return;
    }
    try {
      plan->run(a.inputs[0], a.inputs[1], bias, a.outputs[0], a.scratch, a.stream ? a.stream->handle() : nullptr);
    } catch (const Error& e) {
      fail(e.code(), label, ": ", e.what());
    }
  }};
  lowered.scratch_bytes = plan->workspace_bytes();
  return lowered;
}

// ---- the lowerings ---------------------------------------------------------------------------

Lowered matmul_kernel(const LowerContext& ctx, cpu::Activation activation, bool rhs_transposed, int64_t bias_len) {
  if (!ctx.device || !ctx.device->cuda())
    fail(Code::kInternal, ctx.op_label(), ": a GPU kernel was asked for a plan on the host");
  const MatmulLaunch l = plan_matmul(ctx, rhs_transposed, bias_len);
  std::string why_not;
  if (auto plan = plan_cublaslt(ctx, l, activation, &why_not)) {
    MAXC_LOG(kDebug, ctx.op_label(), " ", ctx.inputs[0].to_string(), " @ ", ctx.inputs[1].to_string(),
             ": ", plan->library_name(), ", workspace ", plan->workspace_bytes(), " bytes");
    return cublaslt_kernel(ctx, std::move(plan), activation, l);
  }
  MAXC_LOG(kDebug, ctx.op_label(), " ", ctx.inputs[0].to_string(), " @ ", ctx.inputs[1].to_string(),
           ": tiled kernel (", why_not, ")");
  const GpuKernel k = load_tiled_kernel(ctx, activation);
  return {[k, l](const KernelArgs& a) { launch_tiled(k, l, a); }};
}

Lowered lower_matmul(const LowerContext& ctx) { return matmul_kernel(ctx, cpu::Activation::kNone, false, 0); }

Lowered lower_fused_matmul(const LowerContext& ctx) {
  const std::string& name = ctx.attr<std::string>("activation");
  const std::optional<cpu::Activation> activation = cpu::activation_from_name(name);
  if (!activation) ctx.unsupported("activation '", name, "'");
  const bool has_bias = ctx.attr<bool>("has_bias");
  int64_t bias_len = 0;
  if (has_bias) {
    if (ctx.inputs.size() != 3) fail(Code::kInternal, ctx.op_label(), ": has_bias but ", ctx.inputs.size(), " inputs");
    const Shape& bias = ctx.inputs[2];
    const int64_t n = ctx.outputs[0].dims.empty() ? 1 : ctx.outputs[0].dims.back();
    bias_len = bias.dims.empty() ? 1 : bias.dims.back();
    if (bias.num_elements() != bias_len || (bias_len != n && bias_len != 1) || bias.dtype != ctx.inputs[0].dtype)
      fail(Code::kInternal, ctx.op_label(), ": bias ", bias.to_string(), " does not broadcast over the last dim (", n,
           ") only");
  }
  const bool rhs_transposed = ctx.attrs().has("rhs_transposed") && ctx.attr<bool>("rhs_transposed");
  return matmul_kernel(ctx, *activation, rhs_transposed, bias_len);
}

}  // namespace

void register_gpu_linalg_kernels(KernelTable& t) {
  t.add("matmul", lower_matmul);
  t.add("fused_matmul", lower_fused_matmul);
}

}  // namespace maxc
