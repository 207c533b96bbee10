// Small shape arithmetic the lowerings share: element widths, extents of dim ranges, axes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/lowering.h"

namespace maxc {

// Element width in bytes for kernels that move elements as opaque words; sub-byte dtypes
// (float4) have no such kernel.
inline int32_t element_bytes(const LowerContext& ctx, DType dtype) {
  const int32_t bits = dtype_size_in_bits(dtype);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    ctx.unsupported("dtype ", dtype_name(dtype) ? dtype_name(dtype) : "invalid", " (", bits, "-bit elements)");
  return bits / 8;
}

// The product of dims[begin, end) (1 when empty).
inline int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) n *= dims[i];
  return n;
}

// An axis attribute made non-negative. The schema has checked it, so a bad one is our bug
// (INTERNAL). Rank 0 accepts axis 0 and -1.
inline int64_t axis_in(const LowerContext& ctx, int64_t axis, int64_t rank, std::string_view what = "axis") {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    fail(Code::kInternal, ctx.op_label(), ": ", what, " ", axis, " is out of range for rank ", rank);
  return a;
}

}  // namespace maxc
