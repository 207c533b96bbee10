// The 8- and 4-bit float formats (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
// float8_e5m2fnuz, float4_e2m1fn) and their exact conversions to and from float and double;
// and float8_e8m0fnu, an exponent alone, at the end.
//
// Each format is sign, E exponent bits with a bias, M mantissa bits, with subnormals. They
// differ in what the top codes mean:
//   kIeee (e5m2)          exponent all ones: infinity (mantissa 0) or NaN, as IEEE 754;
//   kFn   (e4m3fn)        no infinity; only S.1111.111 is NaN, so 448 is the largest finite;
//   kFnuz (e4m3fnuz,      no infinity and no negative zero: 0x80, the "-0" code, is the one
//          e5m2fnuz)      NaN and every other code is finite (bias one more than the fn form);
//   kNone (e2m1fn)        no infinity, no NaN: every code is finite.
//
// Encoding is ONNX Cast's (opset 19+): round to nearest, ties to even, then
//   - saturate (the default): a value whose rounding exceeds the largest finite magnitude,
//     and infinity, become that magnitude with the value's sign;
//   - no saturate: they become infinity for e5m2 and NaN for the fn/fnuz formats;
//   - NaN stays NaN (sign kept where the format has a signed NaN; 0x80 for fnuz);
//   - fnuz formats write every zero (and every value that rounds to zero) as +0;
//   - float4 has neither infinity nor NaN: overflow always saturates and NaN becomes +0.
// The helpers are branch-free selects on the bits, so loops over them vectorize.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/dtype.h"

#define MAXC_MINIFLOAT_INLINE [[gnu::always_inline]] inline

namespace maxc::cpu {

enum class MiniSpecials : uint8_t { kIeee, kFn, kFnuz, kNone };

struct MiniFormat {
  int32_t exp_bits;
  int32_t man_bits;
  int32_t bias;
  MiniSpecials specials;

  constexpr int32_t bits() const { return 1 + exp_bits + man_bits; }
  constexpr uint32_t mag_mask() const { return (1u << (exp_bits + man_bits)) - 1u; }
  constexpr uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  // The code of the largest finite magnitude.
  constexpr uint32_t max_code() const {
    switch (specials) {
      case MiniSpecials::kIeee: return mag_mask() - (1u << man_bits);  // below the inf/NaN exponent
      case MiniSpecials::kFn: return mag_mask() - 1u;                  // below the NaN pattern
      default: return mag_mask();
    }
  }
};

inline constexpr MiniFormat kE4M3Fn{4, 3, 7, MiniSpecials::kFn};
inline constexpr MiniFormat kE4M3Fnuz{4, 3, 8, MiniSpecials::kFnuz};
inline constexpr MiniFormat kE5M2{5, 2, 15, MiniSpecials::kIeee};
inline constexpr MiniFormat kE5M2Fnuz{5, 2, 16, MiniSpecials::kFnuz};
inline constexpr MiniFormat kE2M1Fn{2, 1, 1, MiniSpecials::kNone};

// ---- decoding -------------------------------------------------------------------------------

// The value of `code` (its low F.bits() bits), exact: every code is a float.
template <MiniFormat F>
constexpr float minifloat_to_float(uint32_t code) {
  constexpr int32_t M = F.man_bits;
  const uint32_t mag = code & F.mag_mask();
  const uint32_t sign = (code & F.sign_bit()) != 0 ? 0x80000000u : 0u;
  const uint32_t exp = mag >> M, man = mag & ((1u << M) - 1u);
  // Subnormals are man * 2^(1 - bias - M); that power of two is a normal float for all formats.
  const float sub_scale = std::bit_cast<float>(static_cast<uint32_t>(127 + 1 - F.bias - M) << 23);
  const float sub = static_cast<float>(man) * sub_scale;
  const uint32_t normal = ((exp + 127u - static_cast<uint32_t>(F.bias)) << 23) | (man << (23 - M));
  uint32_t bits = exp == 0 ? std::bit_cast<uint32_t>(sub) : normal;
  constexpr uint32_t kQuietNaN = 0x7fc00000u;
  if constexpr (F.specials == MiniSpecials::kIeee) {
    const uint32_t top = (1u << F.exp_bits) - 1u;
    bits = exp == top ? (man == 0 ? 0x7f800000u : kQuietNaN) : bits;
  } else if constexpr (F.specials == MiniSpecials::kFn) {
    bits = mag == F.mag_mask() ? kQuietNaN : bits;
  } else if constexpr (F.specials == MiniSpecials::kFnuz) {
    // The "-0" code is the NaN; it carries no sign.
    if (code == F.sign_bit()) return std::bit_cast<float>(kQuietNaN);
  }
  return std::bit_cast<float>(bits | sign);
}

// Every code's value, for decoding by lookup.
template <MiniFormat F>
inline constexpr std::array<float, (1u << F.bits())> kMiniTable = [] {
  std::array<float, (1u << F.bits())> t{};
  for (uint32_t c = 0; c < t.size(); ++c) t[c] = minifloat_to_float<F>(c);
  return t;
}();

// ---- encoding -------------------------------------------------------------------------------

// Float and double through one template: the IEEE layout of the source type.
template <typename T>
struct IeeeBits;
template <>
struct IeeeBits<float> {
  using U = uint32_t;
  static constexpr int kMan = 23, kBias = 127;
};
template <>
struct IeeeBits<double> {
  using U = uint64_t;
  static constexpr int kMan = 52, kBias = 1023;
};

// The code of x in format F (see the top of this file for rounding, saturation and NaN).
template <MiniFormat F, typename T>
MAXC_MINIFLOAT_INLINE uint8_t minifloat_from(T x, bool saturate) {
  using U = typename IeeeBits<T>::U;
  constexpr int kMan = IeeeBits<T>::kMan, kBias = IeeeBits<T>::kBias, M = F.man_bits;
  constexpr U kAbsMask = ~U{0} >> 1;
  constexpr U kInfBits = std::bit_cast<U>(std::numeric_limits<T>::infinity());
  constexpr U kMinNormal = static_cast<U>(kBias + 1 - F.bias) << kMan;
  const U u = std::bit_cast<U>(x);
  const U a = u & kAbsMask;
  uint32_t sign = static_cast<uint32_t>(u >> (8 * sizeof(U) - 1));

  // Below the smallest normal: adding 2^(kMan + 1 - bias - M) puts the target's subnormal
  // step at the source's last mantissa bit, so the FPU rounds (to nearest even) for us; the
  // result, 0 .. 2^M, is the code (2^M is the smallest normal).
  constexpr T kMagic = std::bit_cast<T>(static_cast<U>(kBias + kMan + 1 - F.bias - M) << kMan);
  const T small = std::bit_cast<T>(a < kMinNormal ? a : U{0});
  const U sub = std::bit_cast<U>(small + kMagic) - std::bit_cast<U>(kMagic);
  // Normal: rebias the exponent and round the mantissa to M bits, ties to even; a carry
  // out of the mantissa moves to the next exponent, past the largest code on overflow.
  constexpr int kShift = kMan - M;
  constexpr U kRebias = static_cast<U>(kBias - F.bias) << kMan;
  const U normal = (a + ((U{1} << (kShift - 1)) - 1) + ((a >> kShift) & 1) - kRebias) >> kShift;
  const U code = a < kMinNormal ? sub : normal;

  const bool is_nan = a > kInfBits;
  const bool over = code > F.max_code();  // infinity too
  uint32_t mag = static_cast<uint32_t>(code);
  if constexpr (F.specials == MiniSpecials::kNone) {
    mag = over ? F.max_code() : mag;
    mag = is_nan ? 0u : mag;
    sign = is_nan ? 0u : sign;
  } else if constexpr (F.specials == MiniSpecials::kFnuz) {
    mag = over ? (saturate ? F.max_code() : 0u) : mag;
    sign = (over && !saturate) || is_nan ? 1u : (mag == 0 ? 0u : sign);  // NaN is "-0"
    mag = is_nan ? 0u : mag;
  } else {
    constexpr uint32_t kNaN = F.specials == MiniSpecials::kIeee ? F.mag_mask() - 1u : F.mag_mask();
    constexpr uint32_t kOverflow = F.specials == MiniSpecials::kIeee ? F.max_code() + 1u : F.mag_mask();
    mag = over ? (saturate ? F.max_code() : kOverflow) : mag;
    mag = is_nan ? kNaN : mag;
  }
  return static_cast<uint8_t>((sign << (F.exp_bits + M)) | mag);
}

// ---- float8_e8m0fnu ----------------------------------------------------------------------------

// An exponent alone, the MX formats' scale: code e is 2^(e - 127) and 0xFF is NaN; no sign,
// no zero, no infinity. MiniFormat has no shape for it (no sign bit, no mantissa), so it has
// its own two conversions and no visit_minifloat case.

// The value of `code`: 2^-127 (code 0) is float's subnormal 0x00400000, every other finite
// code a float's exponent field as it is.
constexpr float e8m0_to_float(uint8_t code) {
  const uint32_t bits = code == 0 ? 0x00400000u : code == 0xFF ? 0x7fc00000u : static_cast<uint32_t>(code) << 23;
  return std::bit_cast<float>(bits);
}

inline constexpr std::array<float, 256> kE8M0Table = [] {
  std::array<float, 256> t{};
  for (uint32_t c = 0; c < t.size(); ++c) t[c] = e8m0_to_float(static_cast<uint8_t>(c));
  return t;
}();

// The code of x as ONNX Cast writes it with round_mode "up", its default (onnx.numpy_helper.
// to_float8e8m0): x's exponent field, its sign dropped, plus one when a mantissa bit is set,
// so +-0 is 2^-127 and a float subnormal 2^-126. Infinity and NaN are NaN. Rounding up from
// 2^127 stays there when saturating and is NaN otherwise.
MAXC_MINIFLOAT_INLINE uint8_t e8m0_from(float x, bool saturate) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t exp = (u >> 23) & 0xFFu;
  const bool fraction = (u & 0x7FFFFFu) != 0;
  const bool up = fraction && exp != 0xFFu && !(saturate && exp == 0xFEu);
  return static_cast<uint8_t>(exp + (up ? 1u : 0u));
}

inline bool is_e8m0(DType dtype) { return dtype == DType::kFloat8E8M0Fnu; }

// Calls fn(format) with the MiniFormat of `dtype` as a constant; false for other dtypes.
template <typename Fn>
bool visit_minifloat(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat8E4M3Fn: fn(std::integral_constant<MiniFormat, kE4M3Fn>{}); return true;
    case DType::kFloat8E4M3Fnuz: fn(std::integral_constant<MiniFormat, kE4M3Fnuz>{}); return true;
    case DType::kFloat8E5M2: fn(std::integral_constant<MiniFormat, kE5M2>{}); return true;
    case DType::kFloat8E5M2Fnuz: fn(std::integral_constant<MiniFormat, kE5M2Fnuz>{}); return true;
    case DType::kFloat4E2M1Fn: fn(std::integral_constant<MiniFormat, kE2M1Fn>{}); return true;
    default: return false;
  }
}

inline bool is_minifloat(DType dtype) {
  return visit_minifloat(dtype, [](auto) {});
}

}  // namespace maxc::cpu
