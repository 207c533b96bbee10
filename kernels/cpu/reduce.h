// Reductions along one axis (sum, mean, max, min, argmax, argmin). A dense row-major tensor
// is seen as [outer, n, inner] with the reduced axis in the middle, and the result as
// [outer, 1, inner]: y[o, i] = reduce over a of x[o, a, i]. inner == 1 (the last axis) is
// the vectorized row fast path; other axes vectorize across `inner`.
//
// NaN behaves as in numpy: max and min propagate it, argmax and argmin return the index of
// the first NaN; otherwise argmax and argmin return the first index of the extreme value.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

enum class ReduceOp { kSum, kMean, kMax, kMin };
enum class ArgReduceOp { kArgMax, kArgMin };

// x is outer*n*inner elements of the dtype; y is outer*inner elements of the same dtype
// (ReduceOp) or of int64 (ArgReduceOp). Max, min, argmax and argmin need n > 0 (they have no
// identity); the mean of an empty axis is NaN for floats and 0 for integers.
using ReduceFn = void (*)(const void* x, void* y, int64_t outer, int64_t n, int64_t inner);

// nullptr when there is no kernel for `dtype` (floats, int32 and int64 have one).
ReduceFn find_reduce_kernel(ReduceOp op, DType dtype);
ReduceFn find_arg_reduce_kernel(ArgReduceOp op, DType dtype);

}  // namespace maxc::cpu
