// The float8 formats (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz) as the
// kernels store them, float4_e2m1fn's format, and their conversions to and from float and
// double. The meaning is the CPU's (kernels/cpu/minifloat.h, where the formats are
// described), bit for bit: ONNX Cast's round to nearest even, the `saturate` choice for
// values past the largest finite, NaN kept (the "-0" code for fnuz), +0 for every fnuz zero,
// and float4's saturation without a choice and NaN as +0. tests/gpu compares these with the
// CPU's for every code and a sweep of float patterns.
//
// float8_e8m0fnu, an exponent alone, is at the end, with its own two conversions.
//
// float4_e2m1fn has a format here but no stored type: it packs two elements per byte, which
// only the kernels of cast_packed.cu write (common/packed.cuh).
//
// Like the half conversions of cast.cuh this is integer arithmetic plus one float addition
// for the subnormal rounding, so the kernels must keep subnormals (no flush-to-zero).
#ifndef MAXC_GPU_MINIFLOAT_CUH
#define MAXC_GPU_MINIFLOAT_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

// What a format's top codes mean (kernels/cpu/minifloat.h, MiniSpecials); kMiniNone: every
// code is finite (float4_e2m1fn).
enum MiniSpecials { kMiniIeee, kMiniFn, kMiniFnuz, kMiniNone };

// A format's layout as compile-time constants (C++17 has no struct template arguments).
template <int ExpBits, int ManBits, int Bias, int Specials>
struct MiniFormat {
  static constexpr int exp_bits = ExpBits, man_bits = ManBits, bias = Bias, specials = Specials;
  static constexpr u32 mag_mask = (1u << (ExpBits + ManBits)) - 1u;
  static constexpr u32 sign_bit = 1u << (ExpBits + ManBits);
  // The code of the largest finite magnitude: below the inf/NaN exponent for e5m2, below the
  // one NaN code for fn, and the top code for fnuz (its NaN is "-0") and float4.
  static constexpr u32 max_code = Specials == kMiniIeee ? mag_mask - (1u << ManBits)
                                  : Specials == kMiniFn ? mag_mask - 1u
                                                        : mag_mask;
};

// The stored forms, one byte each, distinct so that templates tell them apart from u8.
struct float8_e4m3fn {
  u8 bits;
};
struct float8_e4m3fnuz {
  u8 bits;
};
struct float8_e5m2 {
  u8 bits;
};
struct float8_e5m2fnuz {
  u8 bits;
};

// The format of a stored type; `value` is false for every type that is not a float8.
template <class S>
struct Float8Format {
  static constexpr bool value = false;
};
template <>
struct Float8Format<float8_e4m3fn> {
  static constexpr bool value = true;
  typedef MiniFormat<4, 3, 7, kMiniFn> type;
};
template <>
struct Float8Format<float8_e4m3fnuz> {
  static constexpr bool value = true;
  typedef MiniFormat<4, 3, 8, kMiniFnuz> type;
};
template <>
struct Float8Format<float8_e5m2> {
  static constexpr bool value = true;
  typedef MiniFormat<5, 2, 15, kMiniIeee> type;
};
template <>
struct Float8Format<float8_e5m2fnuz> {
  static constexpr bool value = true;
  typedef MiniFormat<5, 2, 16, kMiniFnuz> type;
};

// float4_e2m1fn: 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives (and -0).
typedef MiniFormat<2, 1, 1, kMiniNone> Float4E2M1Fn;

// ---- decoding -------------------------------------------------------------------------------

// The value of `code`, exact: every float8 and float4 value is a float. NaNs are the CPU's
// quiet NaN, with the code's sign where the format has a signed NaN.
template <class F>
MAXC_HD float minifloat_bits_to_float(u32 code) {
  const u32 quiet_nan = 0x7fc00000u;
  const u32 mag = code & F::mag_mask;
  const u32 sign = (code & F::sign_bit) != 0 ? 0x80000000u : 0u;
  const u32 exp = mag >> F::man_bits, man = mag & ((1u << F::man_bits) - 1u);
  if (F::specials == kMiniFnuz && code == F::sign_bit) return f32_from_bits(quiet_nan);
  if (F::specials == kMiniFn && mag == F::mag_mask) return f32_from_bits(sign | quiet_nan);
  if (F::specials == kMiniIeee && exp == (1u << F::exp_bits) - 1u)
    return f32_from_bits(sign | (man == 0 ? 0x7f800000u : quiet_nan));
  if (exp == 0) {  // zero or subnormal: man * 2^(1 - bias - M), a normal float scale for all
    const float scale = f32_from_bits(static_cast<u32>(127 + 1 - F::bias - F::man_bits) << 23);
    return f32_from_bits(f32_bits(static_cast<float>(static_cast<i32>(man)) * scale) | sign);
  }
  return f32_from_bits(sign | ((exp + 127u - static_cast<u32>(F::bias)) << 23) | (man << (23 - F::man_bits)));
}

// ---- encoding -------------------------------------------------------------------------------

// The IEEE layout of the two source types, so float and double encode through one template.
template <class T>
struct IeeeLayout;
template <>
struct IeeeLayout<float> {
  typedef u32 U;
  static constexpr int man_bits = 23, bias = 127;
};
template <>
struct IeeeLayout<double> {
  typedef u64 U;
  static constexpr int man_bits = 52, bias = 1023;
};

MAXC_HD u32 ieee_bits(float f) { return f32_bits(f); }
MAXC_HD u64 ieee_bits(double d) { return f64_bits(d); }
MAXC_HD float ieee_value(u32 u) { return f32_from_bits(u); }
MAXC_HD double ieee_value(u64 u) { return f64_from_bits(u); }

// The rounded code of |x| (sign and specials aside): past max_code when x is out of range,
// infinite or NaN.
template <class F, class T>
MAXC_HD typename IeeeLayout<T>::U minifloat_magnitude(typename IeeeLayout<T>::U a) {
  typedef typename IeeeLayout<T>::U U;
  const int src_man = IeeeLayout<T>::man_bits, src_bias = IeeeLayout<T>::bias;
  const U min_normal = static_cast<U>(src_bias + 1 - F::bias) << src_man;
  if (a < min_normal) {
    // Adding 2^(src_man + 1 - bias - M) puts float8's subnormal step at the source's last
    // mantissa bit, so the addition rounds to nearest even; what it adds, 0 .. 2^M, is the
    // code (2^M being the smallest normal).
    const T magic = ieee_value(static_cast<U>(src_bias + src_man + 1 - F::bias - F::man_bits) << src_man);
    return ieee_bits(ieee_value(a) + magic) - ieee_bits(magic);
  }
  // Rebias the exponent and round the mantissa to M bits, ties to even; a carry out of the
  // mantissa moves to the next exponent, past max_code on overflow.
  const int shift = src_man - F::man_bits;
  const U rebias = static_cast<U>(src_bias - F::bias) << src_man;
  return (a + ((static_cast<U>(1) << (shift - 1)) - 1) + ((a >> shift) & 1) - rebias) >> shift;
}

// The code of x (float or double) in format F. saturate: a value whose rounding exceeds the
// largest finite magnitude, and infinity, become that magnitude; otherwise infinity (e5m2)
// or NaN (fn, fnuz). float4, which has neither, always saturates and writes NaN as +0.
template <class F, class T>
MAXC_HD u8 minifloat_from(T x, bool saturate) {
  typedef typename IeeeLayout<T>::U U;
  const U u = ieee_bits(x);
  const U abs_mask = ~static_cast<U>(0) >> 1;
  const U a = u & abs_mask;
  const U inf = abs_mask & ~((static_cast<U>(1) << IeeeLayout<T>::man_bits) - 1);  // exponent all ones
  const U code = minifloat_magnitude<F, T>(a);
  const bool is_nan = a > inf;
  const bool over = code > F::max_code;  // infinity and NaN too
  u32 sign = static_cast<u32>(u >> (8 * sizeof(U) - 1));
  u32 mag = static_cast<u32>(code);
  if (F::specials == kMiniNone) {
    mag = is_nan ? 0u : (over ? F::max_code : mag);
    sign = is_nan ? 0u : sign;
  } else if (F::specials == kMiniFnuz) {
    // One NaN, the "-0" code, for NaN and for unsaturated overflow; zero is always +0.
    const bool nan_out = is_nan || (over && !saturate);
    mag = nan_out ? 0u : (over ? F::max_code : mag);
    sign = nan_out ? 1u : (mag == 0 ? 0u : sign);
  } else {
    const u32 nan_code = F::specials == kMiniIeee ? F::mag_mask - 1u : F::mag_mask;  // e5m2: a quiet NaN
    const u32 overflow = F::specials == kMiniIeee ? F::max_code + 1u : F::mag_mask;  // infinity, or NaN
    mag = over ? (saturate ? F::max_code : overflow) : mag;
    mag = is_nan ? nan_code : mag;
  }
  return static_cast<u8>((sign << (F::exp_bits + F::man_bits)) | mag);
}

// ---- float8_e8m0fnu --------------------------------------------------------------------------

// Code e is 2^(e - 127), 0xFF is NaN; no sign, zero or infinity (kernels/cpu/minifloat.h).
struct float8_e8m0fnu {
  u8 bits;
};

// 2^-127 is float's subnormal 0x00400000; every other finite code is a float's exponent field.
MAXC_HD float e8m0_bits_to_float(u32 code) {
  if (code == 0xFFu) return f32_from_bits(0x7fc00000u);
  return f32_from_bits(code == 0 ? 0x00400000u : code << 23);
}

// ONNX Cast's round_mode "up", as the CPU's e8m0_from: x's exponent field, its sign dropped,
// plus one for any mantissa bit; 2^127 rounding up stays there when saturating (NaN
// otherwise); infinity and NaN are NaN.
MAXC_HD u8 e8m0_from(float x, bool saturate) {
  const u32 u = f32_bits(x);
  const u32 exp = (u >> 23) & 0xFFu;
  const bool up = (u & 0x7FFFFFu) != 0 && exp != 0xFFu && !(saturate && exp == 0xFEu);
  return static_cast<u8>(exp + (up ? 1u : 0u));
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_MINIFLOAT_CUH
