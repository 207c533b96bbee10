#include "kernels/cpu/band_part.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/parallel.h"

namespace maxc::cpu {

// Each row is three runs: [0, lo) and [hi, n) on one side of the band, [lo, hi) in it; a
// run is copied or zeroed (all-zero bytes are zero in every dtype, and false for bool).
void band_part(const void* src, void* dst, int32_t elem_bytes, int64_t batch, int64_t m, int64_t n,
               int64_t num_lower, int64_t num_upper, bool exclude) {
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const int64_t w = elem_bytes;
  const bool in_place = src == dst;
  auto run = [&](int64_t row, int64_t from, int64_t to, bool keep) {
    if (from >= to) return;
    const int64_t off = (row * n + from) * w, bytes = (to - from) * w;
    if (!keep) std::memset(out + off, 0, static_cast<size_t>(bytes));
    else if (!in_place) std::memcpy(out + off, in + off, static_cast<size_t>(bytes));
  };
  parallel_for(batch * m, n, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % m;
      const int64_t lo = num_lower < 0 ? 0 : std::clamp<int64_t>(i - num_lower, 0, n);
      const int64_t hi = std::max(lo, num_upper < 0 || num_upper >= n ? n : std::min(i + num_upper + 1, n));
      run(row, 0, lo, exclude);
      run(row, lo, hi, !exclude);
      run(row, hi, n, exclude);
    }
  });
}

}  // namespace maxc::cpu
