// matmul and the fused dense layer (compiler/fuse_matmul.cc) on a GPU: the tiled kernel of
// kernels/cuda/matmul.cu with the bias and activation in its epilogue. Batches broadcast as
// numpy's matmul does, as long as they collapse to one batch dim (each operand then has one
// batch stride, 0 where it is shared).
#include <string>

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
  cuda::LaunchShape shape;
};

MatmulLaunch plan_matmul(const LowerContext& ctx, bool rhs_transposed, int64_t bias_len) {
  std::vector<int64_t> rhs_dims = ctx.inputs[1].dims;
  if (rhs_transposed) std::swap(rhs_dims[0], rhs_dims[1]);
  const cpu::MatmulDims d = cpu::matmul_dims(ctx.inputs[0].dims, rhs_dims);
  if (d.out_batch.size() > 1)
    ctx.unsupported("batch dims that broadcast unevenly (", ctx.inputs[0].to_string(), " @ ", ctx.inputs[1].to_string(),
                    ")");
  MatmulLaunch l{d.m, d.n, d.k, 0, 0, bias_len, rhs_transposed ? 1 : 0, {}};
  const int64_t batch = d.batch_count();
  if (!d.out_batch.empty()) {
    l.a_batch_stride = d.lhs_batch[0] == 1 ? 0 : d.m * d.k;
    l.b_batch_stride = d.rhs_batch[0] == 1 ? 0 : d.k * d.n;
  }
  if (batch > 65535) ctx.unsupported("more than 65535 batches (", batch, ")");
  l.shape.block[0] = l.shape.block[1] = kTile;
  l.shape.grid[0] = static_cast<unsigned>(std::max<int64_t>((d.n + kTile - 1) / kTile, 1));
  l.shape.grid[1] = static_cast<unsigned>(std::max<int64_t>((d.m + kTile - 1) / kTile, 1));
  l.shape.grid[2] = static_cast<unsigned>(std::max<int64_t>(batch, 1));
  return l;
}

Lowered matmul_kernel(const LowerContext& ctx, cpu::Activation activation, bool rhs_transposed, int64_t bias_len) {
  std::string name;
  try {
    name = gpu::matmul_kernel(ctx.inputs[0].dtype, activation);
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
  const GpuKernel k = load_gpu_kernel(ctx, "matmul.cu", name);
  const MatmulLaunch l = plan_matmul(ctx, rhs_transposed, bias_len);
  return {[k, l](const KernelArgs& a) {
    const void *lhs = a.inputs[0], *rhs = a.inputs[1], *bias = l.bias_len > 0 ? a.inputs[2] : nullptr;
    void* out = a.outputs[0];
    MatmulLaunch v = l;
    void* args[] = {&lhs, &rhs, &bias, &out, &v.m, &v.n, &v.k, &v.a_batch_stride, &v.b_batch_stride,
                    &v.b_transposed, &v.bias_len};
    k.launch(l.shape, a.stream, args);
  }};
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
