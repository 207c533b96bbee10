// Elements of the sub-byte integer dtypes (uint2, int2, uint4, int4). A byte holds 8 / bits of
// them, the earliest in its lowest bits, as float4_e2m1fn, DLPack and ONNX pack them; the
// unused high bits of a last partial byte are 0. Writing keeps a value's low bits (wraps
// modulo 2^bits, as every integer narrowing of ours does); reading sign-extends the signed
// types.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc {

// `v` wrapped into a `bits`-wide integer and read back: 9 -> int4 is -7, -1 -> uint2 is 3.
constexpr int64_t packed_int_wrap(int64_t v, int32_t bits, bool is_signed) {
  const uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (!is_signed) return static_cast<int64_t>(low);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>(low ^ sign) - static_cast<int64_t>(sign);
}

// The bit offset of element i inside its byte.
constexpr int32_t packed_int_shift(int32_t bits, int64_t i) { return static_cast<int32_t>(i % (8 / bits)) * bits; }

// Element i of packed `data` of a packed-int dtype `d` (dtype_is_packed_int).
inline int64_t packed_int_get(DType d, const uint8_t* data, int64_t i) {
  const int32_t bits = dtype_size_in_bits(d);
  const int64_t raw = data[i / (8 / bits)] >> packed_int_shift(bits, i);
  return packed_int_wrap(raw, bits, dtype_is_signed_integral(d));
}

// Sets element i, leaving its neighbours in the byte as they are.
inline void packed_int_set(DType d, uint8_t* data, int64_t i, int64_t v) {
  const int32_t bits = dtype_size_in_bits(d), shift = packed_int_shift(bits, i);
  const uint32_t mask = ((1u << bits) - 1u) << shift;
  uint8_t& byte = data[i / (8 / bits)];
  byte = static_cast<uint8_t>((byte & ~mask) | ((static_cast<uint32_t>(v) << shift) & mask));
}

}  // namespace maxc
