// The 2-D core of every transposing copy: dst[a * dst_ld + b] = src[b * src_ld + a] for
// a < na, b < nb. Reads run along a in the source and writes along b in the destination,
// so it goes in cache-line strips with small blocks transposed in registers: 8x8 for 4-byte
// and 4x4 for 8-byte elements where the CPU has AVX2, 8x8 in SSE2 for 2-byte ones.
#pragma once

#include <cstdint>

namespace maxc::cpu {

// Serial: callers split the `a` range across threads (offset src by a0 and dst by
// a0 * dst_ld). elem_bytes is 1, 2, 4 or 8.
void transpose_plane(const void* src, int64_t src_ld, void* dst, int64_t dst_ld, int64_t na, int64_t nb,
                     int32_t elem_bytes);

// The tile edge callers split `a` by, so each thread's share is whole tiles.
constexpr int64_t kTransposeTile = 32;

}  // namespace maxc::cpu
