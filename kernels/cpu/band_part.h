// band_part over the last two axes of [batch, m, n]: element (i, j) is in the band when
// (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or j - i <= num_upper), a negative
// bound meaning "the whole triangle". Band elements are kept and the rest zeroed, or the
// other way round with `exclude`. In place (src == dst) only the zeroing is done.
#pragma once

#include <cstdint>

namespace maxc::cpu {

void band_part(const void* src, void* dst, int32_t elem_bytes, int64_t batch, int64_t m, int64_t n,
               int64_t num_lower, int64_t num_upper, bool exclude);

}  // namespace maxc::cpu
