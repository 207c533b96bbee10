// Lowering of the block-quantized ops: dequantize and qmatmul (kernels/cpu/qmatmul.h). The
// graph checked the shapes; what is left is folding the leading dims into rows.
#include <algorithm>
#include <optional>
#include <string>

#include "base/quant_encoding.h"
#include "engine/lower/lower.h"
#include "engine/lower/quantized_dims.h"
#include "engine/lowering.h"
#include "kernels/cpu/qmatmul.h"
#include "kernels/cpu/quant_reference.h"

namespace maxc {
namespace {

Lowered lower_dequantize(const LowerContext& ctx) {
  const QuantEncoding e = quant_encoding_of(ctx);
  const Shape& in = ctx.inputs[0];
  const int64_t k = quant_row_elements(e, in.dims.back());
  const int64_t rows = k == 0 ? 0 : ctx.outputs[0].num_elements() / k;
  Lowered lowered;
  lowered.run = [e, rows, k](const KernelArgs& a) {
    if (rows > 0)
      cpu::dequantize_rows(e, static_cast<const uint8_t*>(a.inputs[0]), rows, k, static_cast<float*>(a.outputs[0]));
  };
  return lowered;
}

Lowered lower_qmatmul(const LowerContext& ctx) {
  const QuantEncoding e = quant_encoding_of(ctx);
  const QmatmulDims d = qmatmul_dims(ctx, e);
  const int64_t m = d.m, k = d.k, n = d.n;
  Lowered lowered;
  lowered.run = [e, m, k, n](const KernelArgs& a) {
    cpu::qmatmul(e, static_cast<const float*>(a.inputs[0]), m, k, static_cast<const uint8_t*>(a.inputs[1]), n,
                 static_cast<float*>(a.outputs[0]), a.scratch);
  };
  lowered.scratch_bytes = static_cast<uint64_t>(cpu::qmatmul_scratch_bytes(e, m, k));
  return lowered;
}

}  // namespace

void register_quantized_kernels(KernelTable& t) {
  t.add("dequantize", lower_dequantize);
  t.add("qmatmul", lower_qmatmul);
}

}  // namespace maxc
