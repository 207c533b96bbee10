#include "graph/broadcast.h"

#include <algorithm>

namespace maxc {

std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b) {
  if (a == b || b == Dim(1)) return a;
  if (a == Dim(1)) return b;
  return std::nullopt;
}

std::vector<Dim> broadcast_shapes(const InferContext& ctx, const std::vector<ShapeOperand>& operands) {
  size_t rank = 0;
  for (const ShapeOperand& op : operands) rank = std::max(rank, op.dims.size());
  std::vector<Dim> out(rank, Dim(1));
  // owner[i]: the operand that gave out[i] its value, so a conflict names both sides.
  std::vector<size_t> owner(rank, 0);
  for (size_t k = 0; k < operands.size(); ++k) {
    const std::vector<Dim>& dims = operands[k].dims;
    for (size_t j = 0; j < dims.size(); ++j) {
      size_t i = rank - dims.size() + j;
      std::optional<Dim> d = broadcast_dim(out[i], dims[j]);
      if (!d) {
        const ShapeOperand& other = operands[owner[i]];
        ctx.fail("cannot broadcast ", other.label, " ", dims_to_string(other.dims), " with ", operands[k].label, " ",
                 dims_to_string(dims), ": axis ", static_cast<int64_t>(i) - static_cast<int64_t>(rank), " is ", out[i],
                 " vs ", dims[j]);
      }
      if (!(dims[j] == Dim(1))) owner[i] = k;
      out[i] = *d;
    }
  }
  return out;
}

std::vector<Dim> broadcast_inputs(const InferContext& ctx, const std::vector<size_t>& indices) {
  std::vector<ShapeOperand> operands;
  for (size_t i : indices) operands.push_back({ctx.input_label(i), ctx.input(i).dims});
  return broadcast_shapes(ctx, operands);
}

}  // namespace maxc
