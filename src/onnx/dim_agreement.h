// Dims that ONNX Runtime compares when the model runs but that the Dim algebra cannot prove
// equal at import: ((h - 1) // 2) // 2 + 1 against (h // 8) * 2 + 2 where a YOLO neck
// upsamples one branch and concatenates it with another, or a symbolic height a model only
// works for one value of. Our ops refuse dims they cannot prove equal, so the importer
// asserts them (a rebind, checked by the plan of every binding: INVALID_ARGUMENT at execute
// naming this node and both dims) and the model imports as it ships.
#pragma once

#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {

// Whether the algebra cannot decide a == b (unequal expressions, not both static): the case
// that is asserted at run time rather than refused at import.
bool undecided(const Dim& a, const Dim& b);

// `v` with its dims asserted to be `want` on every axis where they are undecided; `v`
// itself when there are none. `what` names v in the run-time message ("input 1").
ValueId assert_dims(NodeContext& c, ValueId v, const std::vector<Dim>& want, const std::string& what);

// `v` asserted to broadcast against `other` (numpy rules, aligned at the last axis): where a
// dim and the other's are undecided and neither is a static 1, v's dim is asserted to be the
// other's (a dim that is 1 only at run time is refused there, not broadcast).
ValueId assert_broadcastable(NodeContext& c, ValueId v, const std::vector<Dim>& other, const std::string& what);

// The inputs of a concat along `axis` with every other axis asserted equal to input 0's.
std::vector<ValueId> assert_concatenable(NodeContext& c, std::vector<ValueId> inputs, int64_t axis);

}  // namespace maxc::onnx
