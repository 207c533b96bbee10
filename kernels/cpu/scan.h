// Cumulative sum along one axis. The tensor is seen as [outer, n, inner] with the scanned
// axis in the middle; the result has the same shape. `exclusive` leaves out each element's
// own value (the first result is 0), `reverse` sums from the back. Integers wrap like numpy's;
// half floats accumulate in float32 and round each result once.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// y may be x (each element is read before its result is written).
using ScanFn = void (*)(const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
                        bool reverse);

// nullptr when there is no kernel for `dtype` (floats, int32 and int64 have one).
ScanFn find_cumsum_kernel(DType dtype);

}  // namespace maxc::cpu
