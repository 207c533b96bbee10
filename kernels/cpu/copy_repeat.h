// repeat_interleave with counts known only at run time (a tensor input): every slice along
// the axis is repeated its own count of times, torch.repeat_interleave's rule.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// input [outer, d, slice] (slice = slice_bytes bytes); counts holds 1 entry (for every slice)
// or d, of integer dtype count_type; output [outer, out_len, slice]. Negative counts count as 0.
// The graph promised sum(counts) == out_len; if the data breaks the promise, the output is cut
// at out_len or zero-filled up to it, and the return value is the sum (else out_len).
int64_t repeat_interleave(const void* input, const void* counts, DType count_type, int64_t num_counts, void* output,
                          int64_t outer, int64_t d, int64_t out_len, int64_t slice_bytes);

// sum(max(count, 0)) over the d slices (saturating at INT64_MAX): the output length the
// counts ask for.
int64_t repeat_total(const void* counts, DType count_type, int64_t num_counts, int64_t d);

}  // namespace maxc::cpu
