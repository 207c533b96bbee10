#include "onnx/size_limits.h"

#include <limits>

#include "driver/tensor.h"
#include "onnx/node_context.h"

namespace maxc::onnx {

std::optional<int64_t> checked_product(const std::vector<int64_t>& factors) {
  for (int64_t f : factors)
    if (f < 0) return std::nullopt;
  for (int64_t f : factors)
    if (f == 0) return 0;  // empty, whatever the other factors say
  int64_t p = 1;
  for (int64_t f : factors) {
    if (p > std::numeric_limits<int64_t>::max() / f) return std::nullopt;
    p *= f;
  }
  return p;
}

std::optional<uint64_t> checked_byte_size(DType dtype, int64_t n) {
  const int64_t bits = dtype_size_in_bits(dtype);
  std::optional<int64_t> total_bits = checked_product({n, bits});
  if (!total_bits || *total_bits > std::numeric_limits<int64_t>::max() - 7) return std::nullopt;
  return static_cast<uint64_t>((*total_bits + 7) / 8);
}

int64_t bounded_elements(const NodeContext& c, const std::vector<int64_t>& dims, std::string_view what,
                         int64_t limit) {
  for (int64_t d : dims)
    if (d < 0) c.invalid(what, " has the negative size ", d);
  std::optional<int64_t> n = checked_product(dims);
  if (!n || *n > limit)
    c.exhausted(what, " of ", dims_to_string(dims), " would hold ", n ? std::to_string(*n) : "more than 2^63",
                " elements; at most ", limit, " are built at import");
  return *n;
}

void check_values_in(const NodeContext& c, std::string_view what, const std::vector<int64_t>& values, int64_t lo,
                     int64_t hi) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < lo || values[i] > hi)
      c.invalid(what, " entry ", i, " is ", values[i], "; it must lie in [", lo, ", ", hi, "]");
}

}  // namespace maxc::onnx
