// Storage types and the conversions between them and the four types kernels compute in
// (float, double, i64, u64). The meaning of every conversion is the CPU kernels'
// (kernels/cpu/cast.h), so a model gives the same bits on either device:
//   - bool reads as 0/1 (any nonzero byte is true) and is written as x != 0 (NaN is true);
//   - integers narrow by wrapping modulo 2^bits;
//   - float -> integer truncates toward zero, saturates at int64's (or uint64's) range before
//     any narrowing and sends NaN to 0; a negative float goes to unsigned through int64;
//   - float16/bfloat16 convert through float32 with round-to-nearest-even;
//   - float8 (common/minifloat.cuh) reads as float; it is written from float, or straight
//     from double, and saturates past its range unless a cast says otherwise (store_cast);
//     float8_e8m0fnu is written from float only (a double rounds to float first, as ONNX says).
// The half conversions are integer arithmetic rather than PTX cvt or _Float16: one
// definition that NVRTC, hipRTC and the host all compile to the same bits (tests/gpu checks
// them against the CPU's for every half value). Kernels must not be compiled with
// flush-to-zero (-ftz, --use_fast_math): the subnormal path relies on float addition.
#ifndef MAXC_GPU_CAST_CUH
#define MAXC_GPU_CAST_CUH

#include "minifloat.cuh"
#include "platform.cuh"

namespace maxc {
namespace gpu {

// Distinct types for the stored forms whose bytes are no C++ arithmetic type of the same
// meaning, so templates can tell them apart from u8 and u16.
struct bool8 {
  u8 v;
};
struct half {
  u16 bits;
};
struct bfloat16 {
  u16 bits;
};

MAXC_HD float half_bits_to_float(u16 h) {
  const u32 sign = static_cast<u32>(h & 0x8000u) << 16;
  const u32 exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float sub = static_cast<float>(static_cast<i32>(man)) * 0x1p-24f;
    return f32_from_bits(f32_bits(sub) | sign);
  }
  if (exp == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

MAXC_HD u16 float_to_half_bits(float f) {
  const u32 u = f32_bits(f);
  const u32 sign = (u >> 16) & 0x8000u;
  const u32 a = u & 0x7fffffffu;
  u32 h;
  if (a > 0x7f800000u) {
    h = 0x7e00u;  // NaN stays a quiet NaN
  } else if (a >= 0x477ff000u) {
    h = 0x7c00u;  // rounds past 65504: infinity
  } else if (a < 0x38800000u) {
    // Below the smallest normal half: adding 0.5 lines the half's subnormal mantissa up with
    // float's, so the float addition does the rounding to nearest even.
    h = f32_bits(f32_from_bits(a) + 0.5f) - 0x3f000000u;
  } else {
    h = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  }
  return static_cast<u16>(sign | h);
}

MAXC_HD float bf16_bits_to_float(u16 h) { return f32_from_bits(static_cast<u32>(h) << 16); }

MAXC_HD u16 float_to_bf16_bits(float f) {
  const u32 u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<u16>((u >> 16) | 0x40u);  // quiet NaN
  return static_cast<u16>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

MAXC_HD i64 saturate_to_i64(double x) {
  const double two63 = 9223372036854775808.0;
  if (x != x) return 0;
  if (x >= two63) return 0x7fffffffffffffffll;
  if (x <= -two63) return static_cast<i64>(0x8000000000000000ull);
  return static_cast<i64>(x);
}

MAXC_HD u64 saturate_to_u64(double x) {
  const double two64 = 18446744073709551616.0;
  if (x != x) return 0;
  if (x < 0.0) return static_cast<u64>(saturate_to_i64(x));
  if (x >= two64) return ~0ull;
  return static_cast<u64>(x);
}

// An arithmetic value as T: float to integer saturating, everything else as C++ converts,
// which wraps integers modulo 2^bits.
template <class T, class V>
MAXC_HD T convert_number(V v) {
  if constexpr (IsFloat<V>::value && IsSame<T, i64>::value) {
    return saturate_to_i64(static_cast<double>(v));
  } else if constexpr (IsFloat<V>::value && IsSame<T, u64>::value) {
    return saturate_to_u64(static_cast<double>(v));
  } else if constexpr (IsFloat<V>::value && !IsFloat<T>::value) {
    return static_cast<T>(saturate_to_i64(static_cast<double>(v)));
  } else {
    return static_cast<T>(v);
  }
}

// The value of one stored element as compute type T.
template <class T, class S>
MAXC_HD T load_as(S s) {
  if constexpr (IsSame<S, bool8>::value) {
    return s.v != 0 ? T(1) : T(0);
  } else if constexpr (IsSame<S, half>::value) {
    return convert_number<T>(half_bits_to_float(s.bits));
  } else if constexpr (IsSame<S, bfloat16>::value) {
    return convert_number<T>(bf16_bits_to_float(s.bits));
  } else if constexpr (Float8Format<S>::value) {
    return convert_number<T>(minifloat_bits_to_float<typename Float8Format<S>::type>(s.bits));
  } else if constexpr (IsSame<S, float8_e8m0fnu>::value) {
    return convert_number<T>(e8m0_bits_to_float(s.bits));
  } else {
    return convert_number<T>(s);
  }
}

template <class T>
MAXC_HD float8_e8m0fnu store_e8m0(T v, bool saturate) {
  float8_e8m0fnu s;
  s.bits = e8m0_from(static_cast<float>(v), saturate);
  return s;
}

// A compute value as a code of minifloat format F (float8, float4): a double rounds once,
// straight to F, as on the CPU; integers go through float, as the CPU's cast loads them.
template <class F, class T>
MAXC_HD u8 minifloat_code(T v, bool saturate) {
  if constexpr (IsSame<T, double>::value) {
    return minifloat_from<F>(v, saturate);
  } else {
    return minifloat_from<F>(static_cast<float>(v), saturate);
  }
}

template <class S, class T>
MAXC_HD S store_float8(T v, bool saturate) {
  S s;
  s.bits = minifloat_code<typename Float8Format<S>::type>(v, saturate);
  return s;
}

// A compute value T written as a stored element of type S. float8 saturates, ONNX Cast's
// default.
template <class S, class T>
MAXC_HD S store_as(T v) {
  if constexpr (IsSame<S, bool8>::value) {
    S s;
    s.v = static_cast<u8>(v != T(0) ? 1 : 0);
    return s;
  } else if constexpr (IsSame<S, half>::value) {
    S s;
    s.bits = float_to_half_bits(static_cast<float>(v));
    return s;
  } else if constexpr (IsSame<S, bfloat16>::value) {
    S s;
    s.bits = float_to_bf16_bits(static_cast<float>(v));
    return s;
  } else if constexpr (Float8Format<S>::value) {
    return store_float8<S>(v, true);
  } else if constexpr (IsSame<S, float8_e8m0fnu>::value) {
    return store_e8m0(v, true);
  } else {
    return convert_number<S>(v);
  }
}

// store_as as a cast writes: `saturate` (the cast's attribute) decides what a float8 output
// makes of values past its range; every other type stores as always.
template <class S, class T>
MAXC_HD S store_cast(T v, bool saturate) {
  if constexpr (Float8Format<S>::value) {
    return store_float8<S>(v, saturate);
  } else if constexpr (IsSame<S, float8_e8m0fnu>::value) {
    return store_e8m0(v, saturate);
  } else {
    return store_as<S>(v);
  }
}

// A compute value rounded (or wrapped) to what storage type S can hold, kept as T: what a
// fused chain does where the unfused graph would have stored an intermediate.
template <class S, class T>
MAXC_HD T narrow_to(T v) {
  return load_as<T>(store_as<S>(v));
}

// The type a storage type computes in: float for float32, the half floats and float8, double
// for float64, i64 for signed integers and unsigned ones up to 32 bits, u64 for u64, and i64
// for bool (0/1).
template <class S>
struct ComputeOf {
  typedef i64 type;
};
template <>
struct ComputeOf<float> {
  typedef float type;
};
template <>
struct ComputeOf<half> {
  typedef float type;
};
template <>
struct ComputeOf<bfloat16> {
  typedef float type;
};
template <>
struct ComputeOf<float8_e4m3fn> {
  typedef float type;
};
template <>
struct ComputeOf<float8_e4m3fnuz> {
  typedef float type;
};
template <>
struct ComputeOf<float8_e5m2> {
  typedef float type;
};
template <>
struct ComputeOf<float8_e5m2fnuz> {
  typedef float type;
};
template <>
struct ComputeOf<float8_e8m0fnu> {
  typedef float type;
};
template <>
struct ComputeOf<double> {
  typedef double type;
};
template <>
struct ComputeOf<u64> {
  typedef u64 type;
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_CAST_CUH
