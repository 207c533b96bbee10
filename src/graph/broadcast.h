// NumPy broadcasting of shapes, shared by every op that combines shapes elementwise.
//
// Shapes align at their last axis; a missing leading axis counts as 1. At each axis equal
// dims stay, and a static 1 stretches to the other dim. Anything else is an error, including
// two different symbols ("batch" vs "seq") and a symbol against a static dim other than 1:
// the graph cannot prove they agree, so it asks the caller to say so (rebind, broadcast_to).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/dim.h"
#include "graph/op_schema.h"

namespace maxc {

// The broadcast of two dims, or nullopt when they conflict.
std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b);

struct ShapeOperand {
  std::string label;  // how a message names it: "input 0 'lhs'", "batch dims of input 1 'rhs'"
  std::vector<Dim> dims;
};

// The broadcast of every operand's shape; on a conflict, ctx.fail names both operands, their
// shapes, the axis (counted from the end) and the two dims.
std::vector<Dim> broadcast_shapes(const InferContext& ctx, const std::vector<ShapeOperand>& operands);

// broadcast_shapes over the op's inputs at `indices`.
std::vector<Dim> broadcast_inputs(const InferContext& ctx, const std::vector<size_t>& indices);

}  // namespace maxc
