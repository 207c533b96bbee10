// How the lowerings of both devices read a block-quantized node (dequantize, qmatmul): its
// encoding and the extents its leading dims fold into. The graph checked the shapes; what
// disagrees here is our bug (INTERNAL).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "base/quant_encoding.h"
#include "engine/lowering.h"

namespace maxc {

inline QuantEncoding quant_encoding_of(const LowerContext& ctx) {
  const std::string& name = ctx.attr<std::string>("encoding");
  const std::optional<QuantEncoding> e = quant_encoding_from_name(name);
  if (!e) fail(Code::kInternal, ctx.op_label(), ": encoding '", name, "' passed the graph's checks");
  return *e;
}

// Elements per row of a quantized input whose last dim is `row_bytes`.
inline int64_t quant_row_elements(QuantEncoding e, int64_t row_bytes) {
  const QuantEncodingInfo* info = quant_encoding_info(e);
  return row_bytes / info->block_bytes * info->elements_per_block;
}

// qmatmul(lhs [..., k], rhs [n, row_bytes]) as [m, k] @ dequantize(rhs)ᵀ.
struct QmatmulDims {
  int64_t m = 0, k = 0, n = 0;
};

inline QmatmulDims qmatmul_dims(const LowerContext& ctx, QuantEncoding e) {
  const Shape &lhs = ctx.inputs[0], &rhs = ctx.inputs[1];
  if (lhs.rank() < 1 || rhs.rank() != 2 || quant_row_elements(e, rhs.dims[1]) != lhs.dims.back())
    fail(Code::kInternal, ctx.op_label(), ": lhs ", lhs.to_string(), " and rhs ", rhs.to_string(),
         " disagree on K");
  QmatmulDims d;
  d.k = lhs.dims.back(), d.n = rhs.dims[0];
  d.m = d.k == 0 ? ctx.outputs[0].num_elements() / std::max<int64_t>(d.n, 1) : lhs.num_elements() / d.k;
  return d;
}

}  // namespace maxc
