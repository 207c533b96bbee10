// Sorting along an axis: top_k and argsort. Order is total and deterministic: NaN counts as
// larger than every number, and equal values keep their original order (the lower index
// first) in both directions, so results match a stable sort.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// The tensor is seen as [outer, n, inner] with the sorted axis in the middle. For every line
// along it, the k largest values, largest first, go to `values` ([outer, k, inner], the input
// dtype) and their positions on the axis to `indices` ([outer, k, inner], int64). The kernel
// sorts at most `slots` lines at once, each in its own part of `scratch`.
using TopKFn = void (*)(const void* x, void* values, int64_t* indices, int64_t outer, int64_t n, int64_t inner,
                        int64_t k, void* scratch, int64_t slots);

// The positions that sort the n elements of x, ascending or descending.
using ArgsortFn = void (*)(const void* x, int64_t* indices, int64_t n, bool ascending, void* scratch);

// nullptr when there is no kernel for `dtype` (floats, int32 and int64 have one).
TopKFn find_top_k_kernel(DType dtype);
ArgsortFn find_argsort_kernel(DType dtype);

// The scratch that `slots` lines of n elements need (argsort: slots = 1).
uint64_t sort_scratch_bytes(DType dtype, int64_t n, int64_t slots);

}  // namespace maxc::cpu
