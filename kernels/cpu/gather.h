// gather and gather_nd: copy slices of the input picked by index tensors. Slices are moved
// as bytes (a typed word for one-element slices), so one kernel serves every dtype.
#pragma once

#include <cstdint>
#include <span>

#include "base/dtype.h"

namespace maxc::cpu {

// input  [outer, axis_dim, inner]   (inner = slice_bytes bytes)
// indices [num_indices]            (any integer dtype; negatives count from the end)
// output [outer, num_indices, inner]
// An index outside [-axis_dim, axis_dim) gives a zero slice. Returns how many there were.
int64_t gather(const void* input, const void* indices, DType index_type, void* output, int64_t outer, int64_t axis_dim,
               int64_t num_indices, int64_t slice_bytes);

// input   [batch, indexed_dims..., slice]   (slice = slice_bytes bytes)
// indices [batch, per_batch, k]             (k = indexed_dims.size())
// output  [batch, per_batch, slice]
// A tuple with any entry out of range gives a zero slice. Returns how many there were.
int64_t gather_nd(const void* input, const void* indices, DType index_type, void* output, int64_t batch,
                  std::span<const int64_t> indexed_dims, int64_t per_batch, int64_t slice_bytes);

}  // namespace maxc::cpu
