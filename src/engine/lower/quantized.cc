// Lowering of the block-quantized ops: dequantize and qmatmul (kernels/cpu/qmatmul.h). The
// graph checked the shapes; what is left is folding the leading dims into rows.
#include <algorithm>
#include <optional>
#include <string>

#include "base/quant_encoding.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/qmatmul.h"
#include "kernels/cpu/quant_reference.h"

namespace maxc {
namespace {

QuantEncoding encoding_of(const LowerContext& ctx) {
  const std::string& name = ctx.attr<std::string>("encoding");
  const std::optional<QuantEncoding> e = quant_encoding_from_name(name);
  if (!e) fail(Code::kInternal, ctx.op_label(), ": encoding '", name, "' passed the graph's checks");
  return *e;
}

// Elements per row of a quantized input whose last dim is `row_bytes`.
int64_t row_elements(QuantEncoding e, int64_t row_bytes) {
  const QuantEncodingInfo* info = quant_encoding_info(e);
  return row_bytes / info->block_bytes * info->elements_per_block;
}

Lowered lower_dequantize(const LowerContext& ctx) {
  const QuantEncoding e = encoding_of(ctx);
  const Shape& in = ctx.inputs[0];
  const int64_t k = row_elements(e, in.dims.back());
  const int64_t rows = k == 0 ? 0 : ctx.outputs[0].num_elements() / k;
  Lowered lowered;
  lowered.run = [e, rows, k](const KernelArgs& a) {
    if (rows > 0)
      cpu::dequantize_rows(e, static_cast<const uint8_t*>(a.inputs[0]), rows, k, static_cast<float*>(a.outputs[0]));
  };
  return lowered;
}

Lowered lower_qmatmul(const LowerContext& ctx) {
  const QuantEncoding e = encoding_of(ctx);
  const Shape& rhs = ctx.inputs[1];
  const int64_t k = ctx.inputs[0].dims.back(), n = rhs.dims[0];
  if (row_elements(e, rhs.dims[1]) != k)
    fail(Code::kInternal, ctx.op_label(), ": lhs ", ctx.inputs[0].to_string(), " and rhs ", rhs.to_string(),
         " disagree on K");
  const int64_t m = k == 0 ? ctx.outputs[0].num_elements() / std::max<int64_t>(n, 1) : ctx.inputs[0].num_elements() / k;
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
