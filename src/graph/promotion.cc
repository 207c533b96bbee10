#include "graph/promotion.h"

#include <algorithm>

namespace maxc {
namespace {

int category(DType d) { return dtype_is_bool(d) ? 0 : dtype_is_integral(d) ? 1 : 2; }

DType signed_int_of_bits(int32_t bits) {
  switch (bits) {
    case 4: return DType::kInt4;
    case 8: return DType::kInt8;
    case 16: return DType::kInt16;
    case 32: return DType::kInt32;
    default: return DType::kInt64;
  }
}

std::optional<DType> promote_integers(DType a, DType b) {
  int32_t bits_a = dtype_size_in_bits(a), bits_b = dtype_size_in_bits(b);
  if (dtype_is_signed_integral(a) == dtype_is_signed_integral(b)) return bits_a >= bits_b ? a : b;
  DType u = dtype_is_signed_integral(a) ? b : a;
  DType s = dtype_is_signed_integral(a) ? a : b;
  // A signed type holds an unsigned one only if it is strictly wider.
  int32_t need = std::max(dtype_size_in_bits(s), 2 * dtype_size_in_bits(u));
  if (need > 64) return std::nullopt;
  return signed_int_of_bits(need);
}

std::optional<DType> promote_floats(DType a, DType b) {
  int32_t bits_a = dtype_size_in_bits(a), bits_b = dtype_size_in_bits(b);
  if (bits_a != bits_b) return bits_a > bits_b ? a : b;
  // Same width, different formats (float16/bfloat16, or two float8 encodings).
  return bits_a == 16 ? DType::kFloat32 : bits_a == 8 ? DType::kFloat16 : DType::kFloat64;
}

}  // namespace

std::optional<DType> promote_types(DType a, DType b) {
  if (!dtype_is_valid(a) || !dtype_is_valid(b)) return std::nullopt;
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (category(a) == 1) return promote_integers(a, b);
  return promote_floats(a, b);
}

DType promote_inputs(const InferContext& ctx, const std::vector<size_t>& indices) {
  DType out = ctx.input(indices.at(0)).dtype;
  size_t from = indices[0];  // the input whose dtype `out` currently is, for the message
  for (size_t i : indices) {
    DType in = ctx.input(i).dtype;
    std::optional<DType> p = promote_types(out, in);
    if (!p)
      ctx.fail(ctx.input_label(from), " (", dtype_name(out), ") and ", ctx.input_label(i), " (", dtype_name(in),
               ") have no common dtype; cast one of them explicitly");
    if (*p != out) from = i;
    out = *p;
  }
  return out;
}

}  // namespace maxc
