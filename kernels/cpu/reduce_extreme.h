// The maximum and minimum of a contiguous float32 row, NaN-propagating like numpy: the
// first pass of softmax and argmax and the row path of max/min. Written with AVX2
// intrinsics (four vector accumulators and a separate NaN flag), because GCC does not turn
// a NaN-propagating select chain into vector max/min code; portable code elsewhere.
#pragma once

#include <cstdint>

namespace maxc::cpu {

// -inf (max) or +inf (min) for n == 0; NaN when the row holds one.
float max_of_row(const float* x, int64_t n);
float min_of_row(const float* x, int64_t n);

}  // namespace maxc::cpu
