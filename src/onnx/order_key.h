// Ordering ops on any integer type. Our ordering kernels (the max/min reductions, argmax,
// argmin, top_k) take floats, int32 and int64 only; every other integer type, and bool, is
// ordered through a key of one of those that keeps its order exactly and maps back.
#pragma once

#include "onnx/node_context.h"

namespace maxc::onnx {

// x itself when the kernels take its dtype; else its order-preserving key: int32 for bool
// and the 8- and 16-bit integers, int64 for uint32, float32 for the 8- and 4-bit floats,
// and for uint64 its value less 2^63 as an int64 (what flipping the top bit gives).
ValueId order_key(NodeContext& c, ValueId x);

// The value of dtype `dtype` whose key is `key` (order_key's inverse).
ValueId from_order_key(NodeContext& c, ValueId key, DType dtype);

// A key whose order is `key`'s reversed, one to one: -1 - key for integers (bitwise not,
// which unlike negation cannot overflow at the type's minimum), -key for floats.
ValueId reversed_order(NodeContext& c, ValueId key);

}  // namespace maxc::onnx
