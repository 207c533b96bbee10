// range: out[i] = start + i * step, for i < n. Computed as start + i * step (not by repeated
// addition) so a long float range does not drift; half types compute in float32.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// start, stop and step point at one element each of `dtype` (stop only bounds the caller's n).
// false when `dtype` is not a numeric dtype this kernel knows.
bool range_supports(DType dtype);
bool range_fill(DType dtype, const void* start, const void* step, void* out, int64_t n);

}  // namespace maxc::cpu
