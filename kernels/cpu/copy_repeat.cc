#include "kernels/cpu/copy_repeat.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Calls fn(j, running sum through slice j) for each slice; returns the sum. Negative counts
// count as 0 and the sum saturates rather than overflow.
template <typename Fn>
int64_t for_each_count(const void* counts, DType count_type, int64_t num_counts, int64_t d, Fn&& fn) {
  int64_t total = 0;
  with_index_type(count_type, [&](auto t) {
    const auto* c = static_cast<const decltype(t)*>(counts);
    for (int64_t j = 0; j < d; ++j) {
      const auto r = c[num_counts == 1 ? 0 : j];
      const uint64_t add = r > 0 ? static_cast<uint64_t>(r) : 0;
      total = add > static_cast<uint64_t>(INT64_MAX - total) ? INT64_MAX : total + static_cast<int64_t>(add);
      fn(j, total);
    }
  });
  return total;
}

}  // namespace

int64_t repeat_total(const void* counts, DType count_type, int64_t num_counts, int64_t d) {
  return for_each_count(counts, count_type, num_counts, d, [](int64_t, int64_t) {});
}

int64_t repeat_interleave(const void* input, const void* counts, DType count_type, int64_t num_counts, void* output,
                          int64_t outer, int64_t d, int64_t out_len, int64_t slice_bytes) {
  // starts[j]: the first output position of slice j, clamped to out_len.
  std::vector<int64_t> starts(static_cast<size_t>(d) + 1, 0);
  const int64_t total = for_each_count(counts, count_type, num_counts, d, [&](int64_t j, int64_t sum) {
    starts[j + 1] = std::min(sum, out_len);
  });
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(output);
  const int64_t avg = d > 0 ? std::max<int64_t>(1, out_len / d) : 1;
  parallel_for(outer * d, avg * (slice_bytes / 4 + 1), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / d, j = item % d;
      const uint8_t* src = in + item * slice_bytes;
      uint8_t* dst = out + (o * out_len + starts[j]) * slice_bytes;
      for (int64_t k = starts[j]; k < starts[j + 1]; ++k, dst += slice_bytes)
        copy_bytes(dst, src, slice_bytes);
    }
  });
  if (starts[d] < out_len) {
    for (int64_t o = 0; o < outer; ++o)
      std::memset(out + (o * out_len + starts[d]) * slice_bytes, 0,
                  static_cast<size_t>((out_len - starts[d]) * slice_bytes));
  }
  return total;
}

}  // namespace maxc::cpu
