// dequantize and qmatmul on a GPU (kernels/cuda/quantized.cu) for the GGUF block encodings,
// with the CPU lowering's reading of the node (engine/lower/quantized.cc): the leading dims
// fold into rows. dequantize is one thread per decoded element over the packed blocks, which
// gives the CPU reference's bits; qmatmul one block per (column, group of rows), which
// multiplies the activations as they are with the decoded weights (the CPU quantizes the
// activations to 8 bits first), so the two agree to float rounding and the CPU's activation
// error, not bit for bit.
#include <algorithm>
#include <optional>
#include <string>

#include "base/quant_encoding.h"
#include "engine/lower/quantized_dims.h"
#include "engine/lower_gpu/kernel_loader.h"
#include "engine/lower_gpu/lower_gpu.h"
#include "engine/lowering.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc {
namespace {

// Rows of lhs per qmatmul block: kQmatmulRows of quantized.cu.
constexpr int64_t kQmatmulRows = 4;

void require_dtype(const LowerContext& ctx, const Shape& s, DType want, const char* what) {
  if (s.dtype != want)
    ctx.unsupported(what, " ", s.to_string(), " (the GPU kernels take ", dtype_name(want), ")");
}

template <typename F>
GpuKernel load(const LowerContext& ctx, QuantEncoding e, F instance_of) {
  return load_gpu_kernel(ctx, "quantized.cu", ctx.labeled([&] { return instance_of(e); }));
}

Lowered lower_dequantize(const LowerContext& ctx) {
  const QuantEncoding e = quant_encoding_of(ctx);
  const Shape& in = ctx.inputs[0];
  require_dtype(ctx, in, DType::kUInt8, "input");
  if (in.rank() < 1) ctx.unsupported("input ", in.to_string(), " of rank 0");
  const int64_t k = quant_row_elements(e, in.dims.back());
  const int64_t elements = k == 0 ? 0 : in.num_elements() / in.dims.back() * k;
  const GpuKernel kernel = load(ctx, e, gpu::dequantize_kernel);
  const cuda::LaunchShape launch = gpu_launch_for_elements(elements);
  return {[kernel, launch, elements](const KernelArgs& a) {
    if (elements == 0) return;
    const void* x = a.inputs[0];
    void* y = a.outputs[0];
    int64_t count = elements;
    void* args[] = {&x, &y, &count};
    kernel.launch(launch, a.stream, args);
  }};
}

Lowered lower_qmatmul(const LowerContext& ctx) {
  const QuantEncoding e = quant_encoding_of(ctx);
  require_dtype(ctx, ctx.inputs[0], DType::kFloat32, "lhs");
  require_dtype(ctx, ctx.inputs[1], DType::kUInt8, "rhs");
  const QmatmulDims d = qmatmul_dims(ctx, e);
  const int64_t m = d.m, k = d.k, n = d.n;
  const GpuKernel kernel = load(ctx, e, gpu::qmatmul_kernel);
  const cuda::LaunchShape launch = gpu_launch_for_rows((m + kQmatmulRows - 1) / kQmatmulRows * n);
  return {[kernel, launch, m, k, n](const KernelArgs& a) {
    if (m == 0 || n == 0) return;
    const void* x = a.inputs[0];
    const void* w = a.inputs[1];
    void* y = a.outputs[0];
    int64_t rows = m, depth = k, cols = n;
    void* args[] = {&x, &w, &y, &rows, &depth, &cols};
    kernel.launch(launch, a.stream, args);
  }};
}

}  // namespace

void register_gpu_quantized_kernels(KernelTable& t) {
  t.add("dequantize", lower_dequantize);
  t.add("qmatmul", lower_qmatmul);
}

}  // namespace maxc
