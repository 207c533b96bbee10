#include "base/checked_math.h"

namespace maxc {

std::optional<int64_t> checked_product(std::span<const int64_t> dims, int64_t limit) {
  int64_t product = 1;  // of the nonzero dims
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    std::optional<int64_t> next = checked_mul(product, d);
    if (!next || *next > limit) return std::nullopt;
    product = *next;
  }
  return empty ? 0 : product;
}

std::optional<uint64_t> checked_byte_size(DType dtype, uint64_t count) {
  const int32_t bits = dtype_size_in_bits(dtype);
  if (bits <= 0) return std::nullopt;
  std::optional<uint64_t> total_bits = checked_mul(count, static_cast<uint64_t>(bits));
  if (!total_bits || *total_bits > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return (*total_bits + 7) / 8;
}

}  // namespace maxc
