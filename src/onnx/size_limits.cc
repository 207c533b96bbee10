#include "onnx/size_limits.h"

#include "driver/tensor.h"
#include "onnx/node_context.h"

namespace maxc::onnx {

int64_t bounded_elements(const NodeContext& c, const std::vector<int64_t>& dims, std::string_view what,
                         int64_t limit) {
  for (int64_t d : dims)
    if (d < 0) c.invalid(what, " has the negative size ", d);
  std::optional<int64_t> n = checked_product(dims);
  if (!n || *n > limit)
    c.exhausted(what, " of ", dims_to_string(dims), " would hold ", n ? std::to_string(*n) : "more than 2^57",
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
