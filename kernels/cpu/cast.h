// Element conversions between storage dtypes and the four types kernels compute in (float,
// double, int64_t, uint64_t). One definition of what a cast means, used by the elementwise
// engine's loads and stores and therefore by the `cast` op:
//   - bool reads as 0/1 (any nonzero byte is true) and is written as x != 0 (NaN is true);
//   - integers narrow by wrapping modulo 2^bits (int32 300 -> int8 44), like numpy;
//   - float -> integer truncates toward zero, saturates at the integer's range before any
//     narrowing (so 1e10 -> int8 is int64's max wrapped, never undefined) and sends NaN to 0;
//     negative floats to unsigned go through int64 (-1.0 -> uint8 255, as numpy on x86);
//   - float16/bfloat16 convert through float32 with round-to-nearest-even; from float64 and
//     from 64-bit integers that means two roundings (float64 -> float32 -> float16), which
//     differs from a direct rounding only on exact ties of the intermediate.
// The helpers are branch-free selects so loops over them vectorize.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "base/dtype.h"

// Forced so that the conversions vectorize inside the SIMD-cloned load/store loops.
#define MAXC_CAST_INLINE [[gnu::always_inline]] inline

namespace maxc::cpu {

// Storage tags for the dtypes whose bytes are not a C++ arithmetic type of the same meaning.
struct Bool8 {
  uint8_t v;
};
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// ---- float16 / bfloat16, branch-free (same results as kernels/cpu/half.h) --------------------

MAXC_CAST_INLINE float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  const uint32_t normal = sign | ((exp + 112u) << 23) | (man << 13);
  const uint32_t special = sign | 0x7f800000u | (man << 13);
  const float sub = static_cast<float>(static_cast<int32_t>(man)) * 0x1p-24f;
  const float sub_signed = std::bit_cast<float>(std::bit_cast<uint32_t>(sub) | sign);
  const float out = std::bit_cast<float>(exp == 0x1fu ? special : normal);
  return exp == 0 ? sub_signed : out;
}

MAXC_CAST_INLINE uint16_t float_to_half_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  // Adding 0.5 aligns the subnormal half mantissa so float rounding rounds it for us.
  const float a_f = std::bit_cast<float>(a < 0x38800000u ? a : 0u);
  const uint32_t sub = std::bit_cast<uint32_t>(a_f + 0.5f) - 0x3f000000u;
  const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  uint32_t h = a < 0x38800000u ? sub : normal;
  h = a >= 0x477ff000u ? 0x7c00u : h;  // rounds past 65504: inf
  h = a > 0x7f800000u ? 0x7e00u : h;   // NaN stays a (quiet) NaN
  return static_cast<uint16_t>(sign | h);
}

MAXC_CAST_INLINE float bf16_bits_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

MAXC_CAST_INLINE uint16_t float_to_bf16_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

// ---- float -> integer, saturating --------------------------------------------------------

MAXC_CAST_INLINE int64_t saturate_to_int64(double x) {
  constexpr double kTwo63 = 9223372036854775808.0;
  const int64_t in_range = (x > -kTwo63 && x < kTwo63) ? static_cast<int64_t>(x) : 0;
  int64_t r = x >= kTwo63 ? INT64_MAX : in_range;
  r = x <= -kTwo63 ? INT64_MIN : r;
  return x != x ? 0 : r;
}

MAXC_CAST_INLINE uint64_t saturate_to_uint64(double x) {
  constexpr double kTwo64 = 18446744073709551616.0;
  const uint64_t in_range = (x >= 0.0 && x < kTwo64) ? static_cast<uint64_t>(x) : 0;
  const uint64_t negative = static_cast<uint64_t>(saturate_to_int64(x));
  uint64_t r = x < 0.0 ? negative : in_range;
  r = x >= kTwo64 ? UINT64_MAX : r;
  return x != x ? 0 : r;
}

// ---- storage -> compute and compute -> storage ----------------------------------------------

template <typename T>
inline constexpr bool kIsCompute = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                   std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>;

// An arithmetic value converted to T (float to integer saturating, everything else as C++
// converts, which wraps integers modulo 2^bits).
template <typename T, typename V>
MAXC_CAST_INLINE T convert_number(V v) {
  if constexpr (std::is_floating_point_v<V> && std::is_same_v<T, int64_t>) {
    return saturate_to_int64(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<V> && std::is_same_v<T, uint64_t>) {
    return saturate_to_uint64(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<V> && std::is_integral_v<T>) {
    return static_cast<T>(saturate_to_int64(static_cast<double>(v)));
  } else {
    return static_cast<T>(v);
  }
}

// The value of one stored element as a T.
template <typename T, typename S>
MAXC_CAST_INLINE T load_as(S s) {
  static_assert(kIsCompute<T>);
  if constexpr (std::is_same_v<S, Bool8>) {
    return s.v != 0 ? T(1) : T(0);
  } else if constexpr (std::is_same_v<S, Half>) {
    return convert_number<T>(half_bits_to_float(s.bits));
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return convert_number<T>(bf16_bits_to_float(s.bits));
  } else {
    return convert_number<T>(s);
  }
}

// A T written as a stored element of type S.
template <typename S, typename T>
MAXC_CAST_INLINE S store_as(T v) {
  static_assert(kIsCompute<T>);
  if constexpr (std::is_same_v<S, Bool8>) {
    return Bool8{static_cast<uint8_t>(v != T(0) ? 1 : 0)};
  } else if constexpr (std::is_same_v<S, Half>) {
    return Half{float_to_half_bits(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<S, BFloat16>) {
    return BFloat16{float_to_bf16_bits(static_cast<float>(v))};
  } else {
    return convert_number<S>(v);
  }
}

// Calls fn(S{}) with the storage type of `dtype`; returns false (and calls nothing) for the
// dtypes no kernel computes on (float8, float4).
template <typename Fn>
[[gnu::always_inline]] inline bool visit_storage(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kBool: fn(Bool8{}); return true;
    case DType::kInt8: fn(int8_t{}); return true;
    case DType::kInt16: fn(int16_t{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    case DType::kInt64: fn(int64_t{}); return true;
    case DType::kUInt8: fn(uint8_t{}); return true;
    case DType::kUInt16: fn(uint16_t{}); return true;
    case DType::kUInt32: fn(uint32_t{}); return true;
    case DType::kUInt64: fn(uint64_t{}); return true;
    case DType::kFloat16: fn(Half{}); return true;
    case DType::kBFloat16: fn(BFloat16{}); return true;
    case DType::kFloat32: fn(float{}); return true;
    case DType::kFloat64: fn(double{}); return true;
    default: return false;
  }
}

inline bool is_storage_supported(DType dtype) {
  return visit_storage(dtype, [](auto) {});
}

}  // namespace maxc::cpu
