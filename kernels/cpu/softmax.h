// softmax and logsoftmax along one axis, numerically stable (the axis maximum is subtracted
// before exp). The tensor is seen as [outer, n, inner] with the axis in the middle; the
// result has the same shape and dtype. Half floats compute in float32, float64 in float64.
// A line holding NaN gives NaN throughout, like numpy's formula.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// y may be x.
using SoftmaxFn = void (*)(const void* x, void* y, int64_t outer, int64_t n, int64_t inner);

// nullptr when there is no kernel for `dtype` (float32, float64, float16, bfloat16 have one).
SoftmaxFn find_softmax_kernel(DType dtype, bool log);

}  // namespace maxc::cpu
