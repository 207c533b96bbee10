// scatter (ONNX ScatterElements) and scatter_nd: the output is the input with some elements
// or slices overwritten by `updates` at positions that index tensors give. When two updates
// hit one place, the later one (in row-major order of the updates) wins, as on one thread.
// With a reduction (ONNX's `reduction` attribute) each update is instead combined with what
// is there, in that same order, so repeated indices accumulate.
// The copy of the input is skipped when output == input (the planner ran it in place).
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"

namespace maxc::cpu {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// Reductions compute in the element type (half floats in float32, rounded back after each
// update); they exist for the floats, int32 and int64. Max and min propagate NaN (numpy's
// maximum/minimum); integer add and mul wrap.
bool scatter_reduction_supports(DType dtype);

// input/output `in_dims`; updates and indices `upd_dims` (same rank, upd_dims[d] <= in_dims[d]
// off the axis). output[p with p[axis] = indices[p]] = updates[p] for every position p of
// updates. elem_bytes is 1, 2, 4 or 8. Out-of-range indices are skipped; returns how many.
// A reduction other than kNone reads the elements as `dtype` (one scatter_reduction_supports).
int64_t scatter(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                int32_t elem_bytes, std::span<const int64_t> in_dims, std::span<const int64_t> upd_dims, int64_t axis,
                ScatterReduction reduction = ScatterReduction::kNone, DType dtype = DType::kInvalid);

// input/output [indexed_dims..., slice] (slice = slice_bytes bytes), indices [count, k],
// updates [count, slice]: output[indices[n]] = updates[n]. Out-of-range tuples are skipped;
// returns how many.
int64_t scatter_nd(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                   std::span<const int64_t> indexed_dims, int64_t count, int64_t slice_bytes,
                   ScatterReduction reduction = ScatterReduction::kNone, DType dtype = DType::kInvalid);

}  // namespace maxc::cpu
