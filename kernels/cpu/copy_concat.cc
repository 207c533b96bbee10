#include "kernels/cpu/copy_concat.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Calls copy(part, whole_offset, part_offset, bytes) for every (row, part) pair, in parallel
// over the pairs so that one long row per part (concat on axis 0) still spreads.
template <typename CopyFn>
void for_each_piece(std::span<const int64_t> row_bytes, int64_t outer, CopyFn&& copy) {
  const int64_t nparts = static_cast<int64_t>(row_bytes.size());
  std::vector<int64_t> starts(row_bytes.size() + 1, 0);
  std::partial_sum(row_bytes.begin(), row_bytes.end(), starts.begin() + 1);
  const int64_t whole = starts.back();
  if (whole == 0 || outer == 0) return;
  const int64_t avg_bytes = std::max<int64_t>(1, whole / nparts);
  parallel_for(outer * nparts, avg_bytes / 4, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item / nparts, i = item % nparts;
      if (row_bytes[i] > 0) copy(i, r * whole + starts[i], r * row_bytes[i], row_bytes[i]);
    }
  });
}

}  // namespace

void concat_rows(std::span<const void* const> parts, std::span<const int64_t> row_bytes, int64_t outer, void* dst) {
  auto* out = static_cast<uint8_t*>(dst);
  for_each_piece(row_bytes, outer, [&](int64_t i, int64_t whole_off, int64_t part_off, int64_t n) {
    copy_bytes(out + whole_off, static_cast<const uint8_t*>(parts[i]) + part_off, n);
  });
}

void split_rows(const void* src, int64_t outer, std::span<void* const> parts, std::span<const int64_t> row_bytes) {
  const auto* in = static_cast<const uint8_t*>(src);
  for_each_piece(row_bytes, outer, [&](int64_t i, int64_t whole_off, int64_t part_off, int64_t n) {
    copy_bytes(static_cast<uint8_t*>(parts[i]) + part_off, in + whole_off, n);
  });
}

}  // namespace maxc::cpu
