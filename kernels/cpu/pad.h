// pad in constant mode: the output is the input surrounded, along each axis, by `before[i]`
// and `after[i]` elements of one value (the only mode MAX's pad has).
#pragma once

#include <cstdint>
#include <span>

namespace maxc::cpu {

// out_dims[i] = in_dims[i] + before[i] + after[i]. `pattern` holds the fill value's bytes in
// its low `elem_bytes` bytes (1, 2, 4 or 8).
void pad_constant(const void* src, void* dst, int32_t elem_bytes, std::span<const int64_t> in_dims,
                  std::span<const int64_t> before, std::span<const int64_t> out_dims, uint64_t pattern);

}  // namespace maxc::cpu
