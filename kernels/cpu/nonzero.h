// Which elements of an array are nonzero, by their bits: an integer or bool that is not 0, a
// float that is neither +0 nor -0 (NaN counts, as in numpy). Row-major, any rank.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "base/dtype.h"

namespace maxc::cpu {

// An element of `bytes` bytes (1, 2, 4 or 8) is nonzero when its bits & mask are: the sign
// bit is left out of a float's mask, so both zeros are zero.
struct ZeroTest {
  int32_t bytes = 4;
  uint64_t mask = ~uint64_t{0};
};

// The test for a dtype's elements; nullopt where an element is not whole bytes (float4, int4)
// and for float8_e8m0fnu, which has no zero.
std::optional<ZeroTest> zero_test_of(DType dtype);

int64_t count_nonzero(const void* x, int64_t n, ZeroTest test);

// Writes the index (rank int64s) of each of the first `capacity` nonzero elements of x, whose
// shape is `dims`, into out; returns how many nonzero elements x has in all.
int64_t nonzero_indices(const void* x, std::span<const int64_t> dims, ZeroTest test, int64_t* out, int64_t capacity);

}  // namespace maxc::cpu
