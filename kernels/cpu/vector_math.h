// float32 transcendentals written so that a loop calling them vectorizes (DESIGN §5): no
// branches, no libm calls, only arithmetic, bit casts and selects, which GCC if-converts and
// widens to 8 lanes in the AVX2 clone. libm's expf/logf/... are scalar calls and would keep
// every loop that uses them at one element per call.
//
// Accuracy against double-precision libm, as tests/kernels/elementwise_test.cc checks it:
// exp, log, log1p, tanh, acos within 2 ulps; sin, cos 2.5 (|x| <= kTrigMaxArg); sigmoid,
// atanh 3; erf 4; gelu 12 in its far negative tail (a few elsewhere); gelu 'tanh' a few ulps
// from the exact function of its float32-rounded argument, a rounding its negative tail
// amplifies (48 ulps against the exact function of x).
// Coefficients are least-squares fits of our own (iteratively reweighted towards minimax),
// or Taylor coefficients where noted. Inputs outside a function's reduced range take the
// same path as everything else; special values (NaN, ±inf, ±0) are selected at the end.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

// Forced: GCC's heuristics leave the larger bodies (erf, gelu) out of line, and a call in a
// loop keeps it scalar and compiled for the baseline target only.
#define MAXC_VM_INLINE [[gnu::always_inline]] inline

namespace maxc::cpu::vm {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

MAXC_VM_INLINE float abs_f(float x) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu); }
MAXC_VM_INLINE float copysign_f(float mag, float sign) {
  return std::bit_cast<float>((std::bit_cast<uint32_t>(mag) & 0x7fffffffu) |
                              (std::bit_cast<uint32_t>(sign) & 0x80000000u));
}
MAXC_VM_INLINE bool is_nan_f(float x) { return x != x; }

// Rounds to the nearest integer (ties to even) for |x| < 2^22 by the add-and-subtract trick,
// which needs no rounding instruction (SSE2 has none).
MAXC_VM_INLINE float round_small_f(float x) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  return (x + kShift) - kShift;
}


// e^(hi + lo) where |lo| is below hi's ulp (the low part of an exact product); exp_f(x) is
// exp_hilo_f(x, 0). n = round(x / ln2) by the shift trick, which also leaves n as an integer
// in the low mantissa bits (no conversion instruction); r = x - n ln2 in two parts (ln2_hi
// has 9 significant bits so n * ln2_hi is exact); e^r by a degree-6 fit on |r| <= ln2/2
// (2e-9); then 2^n applied in two halves so results down to the subnormal range come out
// right. NaN flows through the arithmetic.
MAXC_VM_INLINE float exp_hilo_f(float hi, float lo) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  // No clamp up front: past the limits the reduction is garbage (never undefined), and the
  // selects at the end replace it with the overflow or underflow.
  const float t = hi * kLog2e + kShift;
  const float n = t - kShift;
  float r = hi - n * kLn2Hi;
  r = r - n * kLn2Lo;
  r = r + lo;
  float p = 0.0013841403415426612f;
  p = p * r + 0.008374842815101147f;
  p = p * r + 0.04166814312338829f;
  p = p * r + 0.16666419804096222f;
  p = p * r + 0.49999991059303284f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ni = static_cast<int32_t>(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kShift));
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  float y = p * s1 * s2;
  y = hi > 88.7228394f ? kInf : y;
  return hi < -105.0f ? 0.0f : y;
}

MAXC_VM_INLINE float exp_f(float x) { return exp_hilo_f(x, 0.0f); }

// log(x) = e ln2 + log(1+f), 1+f in [sqrt(1/2), sqrt(2)). With s = f/(2+f) (|s| <= 0.1716),
// log(1+f) = 2s + s R(s^2), R the odd series' tail (truncation 2e-10), rearranged as
// f - (f^2/2 - s (f^2/2 + R)) so that the exact leading term f carries most of the value.
MAXC_VM_INLINE float log_f(float x) {
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const bool tiny = x < 1.17549435e-38f;  // subnormal (or zero, negative): scale up first
  const float xs = tiny ? x * 8388608.0f : x;
  const uint32_t bits = std::bit_cast<uint32_t>(xs);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 127) - (tiny ? 23.0f : 0.0f);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1.0f : e;
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float r = 2.0f / 11.0f;
  r = r * z + 2.0f / 9.0f;
  r = r * z + 2.0f / 7.0f;
  r = r * z + 2.0f / 5.0f;
  r = r * z + 2.0f / 3.0f;
  r = r * z;
  const float hfsq = 0.5f * f * f;
  const float log_m = f - (hfsq - s * (hfsq + r));
  float y = e * kLn2Hi + (log_m + e * kLn2Lo);
  y = x == kInf ? kInf : y;
  y = x == 0.0f ? -kInf : y;
  y = x < 0.0f ? kNaN : y;
  return is_nan_f(x) ? x : y;
}

// log(1+x) = log(u) + (x - (u-1)) / u with u = 1 + x rounded: the second term puts back what
// rounding u lost (and is all of the result when x is below u's ulp).
MAXC_VM_INLINE float log1p_f(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  float y = log_f(u) + (x - d) / u;
  y = u == 0.0f ? -kInf : y;
  y = x == kInf ? kInf : y;
  return is_nan_f(x) ? x : y;
}

MAXC_VM_INLINE float sigmoid_f(float x) { return 1.0f / (1.0f + exp_f(-x)); }

// |x| < 0.625: x P(x^2), a fit with relative error 4e-9; beyond: 1 - 2 / (e^(2|x|) + 1),
// where the cancellation costs at most one bit. (A rational fit over the whole range is
// twice as fast but 6 ulps off near ±1.)
MAXC_VM_INLINE float tanh_f(float x) {
  const float a = abs_f(x);
  const float x2 = x * x;
  float p = -0.005664673168212175f;
  p = p * x2 + 0.02059558592736721f;
  p = p * x2 - 0.053722649812698364f;
  p = p * x2 + 0.13331149518489838f;
  p = p * x2 - 0.3333326280117035f;
  const float small = x + x * x2 * p;
  const float big = copysign_f(1.0f - 2.0f / (exp_f(2.0f * a) + 1.0f), x);
  return a < 0.625f ? small : big;
}

// erf(a) and erfc(a) for a >= 0 (or NaN), given a^2 = a2_hi + a2_lo exactly.
//   erf:  a P(a^2) below 1 (fit, 1.2e-9), 1 - erfc above;
//   erfc: 1 - erf below 0.5, e^(-a^2) Q(t) above, t = 1 / (1 + a/2) (fit of erfc(a) e^(a^2)
//         over a in [0.5, 10.1], 1e-9). Past 10.1 erfc is below float's subnormals.
struct ErfPair {
  float erf, erfc;
};

MAXC_VM_INLINE ErfPair erf_pair_f(float a, float a2_hi, float a2_lo) {
  const float a2 = a2_hi + a2_lo;
  float p = 7.857913442421705e-05f;
  p = p * a2 - 0.0008011423051357269f;
  p = p * a2 + 0.005188467912375927f;
  p = p * a2 - 0.026853885501623154f;
  p = p * a2 + 0.11283586919307709f;
  p = p * a2 - 0.3761262595653534f;
  p = p * a2 + 1.1283791065216064f;
  const float erf_small = a * p;

  const float t = 1.0f / (1.0f + 0.5f * a);
  float q = -0.008320578373968601f;
  q = q * t - 0.03676571696996689f;
  q = q * t + 0.27664831280708313f;
  q = q * t - 0.5258925557136536f;
  q = q * t + 0.3446597158908844f;
  q = q * t - 0.07843200117349625f;
  q = q * t + 0.22585627436637878f;
  q = q * t + 0.23685775697231293f;
  q = q * t + 0.28336939215660095f;
  q = q * t + 0.28200116753578186f;
  q = q * t + 3.0058993161219405e-06f;
  float erfc_big = exp_hilo_f(-a2_hi, -a2_lo) * q;
  erfc_big = a > 10.1f ? 0.0f : erfc_big;

  // Each from the side where it is not a difference close to 1.
  ErfPair r{a < 1.0f ? erf_small : 1.0f - erfc_big, a < 0.5f ? 1.0f - erf_small : erfc_big};
  r.erf = is_nan_f(a) ? a : r.erf;
  r.erfc = is_nan_f(a) ? a : r.erfc;
  return r;
}

// x*x = hi + lo exactly, hi = x*x rounded: x split into two 12-bit halves whose products are
// exact (Dekker), summed back without loss, so the callers' e^(-x^2) does not inherit the
// rounding of x*x (which e^(-x^2) would amplify 2x^2 times).
struct Square {
  float hi, lo;
};

MAXC_VM_INLINE Square square_exact_f(float x) {
  const float xh = std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xfffff000u);
  const float xl = x - xh;
  const float big = xh * xh, small = 2.0f * xh * xl + xl * xl;
  const float hi = big + small;
  return {hi, small - (hi - big)};
}

MAXC_VM_INLINE float erf_f(float x) {
  const Square s = square_exact_f(x);
  const float a = abs_f(x);
  const float a2_hi = a > 11.0f ? 121.0f : s.hi;  // keeps the split finite for huge |x|
  return copysign_f(erf_pair_f(a, a2_hi, a > 11.0f ? 0.0f : s.lo).erf, x);
}

// gelu(x) = x Phi(x) = x/2 erfc(-x / sqrt2), with erfc of a = |x|/sqrt2 only:
// Phi = erfc(a)/2 for x < 0 and 1 - erfc(a)/2 above, so the negative tail keeps its relative
// accuracy instead of cancelling in 1 + erf. erfc(a) = e^(-a^2) Q(t), t = 1 / (1 + a/2), a
// fit of erfc(a) e^(a^2) over a in [0, 10.1] (2e-9). a^2 = x^2/2 is taken exactly from x.
MAXC_VM_INLINE float gelu_erf_f(float x) {
  const float ax = abs_f(x);
  const float clipped = ax > 15.0f ? 15.0f : ax;
  const float a = clipped * 0.70710678118654752f;
  const Square s = square_exact_f(clipped);
  const float t = 1.0f / (1.0f + 0.5f * a);
  float q = 0.024352239444851875f;
  q = q * t - 0.12003143876791f;
  q = q * t + 0.18615387380123138f;
  q = q * t + 0.023154111579060555f;
  q = q * t - 0.3453766107559204f;
  q = q * t + 0.2616308927536011f;
  q = q * t - 0.054096803069114685f;
  q = q * t + 0.22166910767555237f;
  q = q * t + 0.2371518760919571f;
  q = q * t + 0.2833942770957947f;
  q = q * t + 0.28199514746665955f;
  q = q * t + 3.3242367862840183e-06f;
  float erfc = exp_hilo_f(-0.5f * s.hi, -0.5f * s.lo) * q;
  erfc = a > 10.1f ? 0.0f : erfc;
  const float phi = x < 0.0f ? 0.5f * erfc : 1.0f - 0.5f * erfc;
  return x == -kInf ? -0.0f : x * phi;
}

// 0.5x(1 + tanh(z)) = x sigmoid(2z): the same value with no cancellation for x < 0.
MAXC_VM_INLINE float gelu_tanh_f(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  const float z = kSqrt2OverPi * (x + 0.044715f * x * x * x);
  return x * sigmoid_f(2.0f * z);
}

MAXC_VM_INLINE float gelu_quick_f(float x) { return x * sigmoid_f(1.702f * x); }

// sin and cos: n = round(x 2/pi), r = x - n pi/2 with pi/2 in four parts (the first three of
// 8 significant bits, so their products with n stay exact for |n| < 2^16), then Taylor
// polynomials on |r| <= pi/4 (truncation 2e-9) picked by n mod 4. Accurate for
// |x| <= kTrigMaxArg; callers send larger (and non-finite) arguments to libm.
inline constexpr float kTrigMaxArg = 8192.0f;

struct SinCos {
  float sin, cos;
};

MAXC_VM_INLINE SinCos sincos_reduced_f(float x) {
  constexpr float kTwoOverPi = 0.636619772367581343f;
  constexpr float kP1 = 1.5703125f, kP2 = 4.84466552734375e-4f, kP3 = -6.407499313354492e-07f,
                  kP4 = 9.92093629470503e-10f;
  const float n = round_small_f(x * kTwoOverPi);
  float r = x - n * kP1;
  r = r - n * kP2;
  r = r - n * kP3;
  r = r - n * kP4;
  const float r2 = r * r;
  float sp = 2.7557319e-06f;  // 1/9!
  sp = sp * r2 - 1.98412698e-04f;
  sp = sp * r2 + 8.33333333e-03f;
  sp = sp * r2 - 1.66666667e-01f;
  const float s = r + r * r2 * sp;
  float cp = -2.75573192e-07f;  // -1/10!
  cp = cp * r2 + 2.48015873e-05f;
  cp = cp * r2 - 1.38888889e-03f;
  cp = cp * r2 + 4.16666667e-02f;
  cp = cp * r2 - 0.5f;
  const float c = 1.0f + r2 * cp;
  const int32_t q = static_cast<int32_t>(n) & 3;
  const float sin_v = (q & 1) ? c : s;
  const float cos_v = (q & 1) ? s : c;
  return {(q & 2) ? -sin_v : sin_v, ((q + 1) & 2) ? -cos_v : cos_v};
}

// asin(x) / x - 1 = x^2 P(x^2) for |x| <= 0.5 (fit, 4.6e-9); acos builds on it.
MAXC_VM_INLINE float asin_small_f(float x) {
  const float x2 = x * x;
  float p = 0.04271938279271126f;
  p = p * x2 + 0.023805901408195496f;
  p = p * x2 + 0.04556160047650337f;
  p = p * x2 + 0.07494333386421204f;
  p = p * x2 + 0.16666793823242188f;
  return x + x * x2 * p;
}

// acos(x) with x already clamped to [-1, 1] and s = sqrt((1 - |x|) / 2) computed by the
// caller (with the IEEE sqrt, which vectorizes under -fno-math-errno).
//   |x| <= 0.5: pi/2 - asin(x);   x > 0.5: 2 asin(s);   x < -0.5: pi - 2 asin(s).
MAXC_VM_INLINE float acos_given_half_sqrt_f(float x, float s) {
  constexpr float kPiOver2 = 1.57079632679489662f, kPi = 3.14159265358979324f;
  const float mid = kPiOver2 - asin_small_f(x);
  const float edge = 2.0f * asin_small_f(s);
  const float y = x > 0.5f ? edge : (x < -0.5f ? kPi - edge : mid);
  return is_nan_f(x) ? x : y;
}

// atanh(x) = (log1p(x) - log1p(-x)) / 2: no rounded quotient near ±1 (where 1 + 2x/(1-x)
// would cancel), ±inf at ±1 and NaN past them.
MAXC_VM_INLINE float atanh_f(float x) { return 0.5f * (log1p_f(x) - log1p_f(-x)); }

}  // namespace maxc::cpu::vm
