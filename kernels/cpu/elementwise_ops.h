// The scalar bodies of the elementwise ops, per compute type, and the loops that apply them
// to a block. Everything here is always_inline so that it is compiled inside the
// SIMD-cloned step evaluator (elementwise_steps.cc) and vectorized for each clone.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vector_math.h"

#define MAXC_ELEM_INLINE [[gnu::always_inline]] inline

namespace maxc::cpu::elem {

template <typename T>
inline constexpr bool kFloat = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool kF32 = std::is_same_v<T, float>;

// Per-step constants, already in the compute type (clamp bounds).
template <typename T>
struct Params {
  T lo, hi;
};

template <typename T>
MAXC_ELEM_INLINE T from_bool(bool b) {
  return b ? T(1) : T(0);
}

// Integer +, -, *, negate wrap modulo 2^64 (narrowing later wraps further): done in uint64
// because signed overflow is undefined in C++.
template <typename T>
MAXC_ELEM_INLINE T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
MAXC_ELEM_INLINE T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T>
MAXC_ELEM_INLINE T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ---- unary ---------------------------------------------------------------------------------

template <ElemOp Op, typename T>
MAXC_ELEM_INLINE T apply1(T x, Params<T> p) {
  using enum ElemOp;
  if constexpr (Op == kCopy) {
    return x;
  } else if constexpr (Op == kAbs) {
    if constexpr (kF32<T>) return vm::abs_f(x);
    else if constexpr (kFloat<T>) return std::fabs(x);
    else if constexpr (std::is_signed_v<T>) return x < 0 ? wrap_sub(T(0), x) : x;
    else return x;
  } else if constexpr (Op == kNegate) {
    if constexpr (kFloat<T>) return -x;
    else return wrap_sub(T(0), x);
  } else if constexpr (Op == kRelu) {
    return x < T(0) ? T(0) : x;  // NaN stays NaN, like numpy.maximum(x, 0)
  } else if constexpr (Op == kFloor) {
    if constexpr (kFloat<T>) return std::floor(x);
    else return x;
  } else if constexpr (Op == kTrunc) {
    if constexpr (kFloat<T>) return std::trunc(x);
    else return x;
  } else if constexpr (Op == kRound) {
    if constexpr (kFloat<T>) return std::nearbyint(x);  // the default rounding mode: to even
    else return x;
  } else if constexpr (Op == kExp) {
    if constexpr (kF32<T>) return vm::exp_f(x);
    else return std::exp(x);
  } else if constexpr (Op == kLog) {
    if constexpr (kF32<T>) return vm::log_f(x);
    else return std::log(x);
  } else if constexpr (Op == kLog1p) {
    if constexpr (kF32<T>) return vm::log1p_f(x);
    else return std::log1p(x);
  } else if constexpr (Op == kTanh) {
    if constexpr (kF32<T>) return vm::tanh_f(x);
    else return std::tanh(x);
  } else if constexpr (Op == kErf) {
    if constexpr (kF32<T>) return vm::erf_f(x);
    else return std::erf(x);
  } else if constexpr (Op == kAtanh) {
    if constexpr (kF32<T>) return vm::atanh_f(x);
    else return std::atanh(x);
  } else if constexpr (Op == kSigmoid) {
    if constexpr (kF32<T>) return vm::sigmoid_f(x);
    else return T(1) / (T(1) + std::exp(-x));
  } else if constexpr (Op == kSilu) {
    if constexpr (kF32<T>) return x * vm::sigmoid_f(x);
    else return x / (T(1) + std::exp(-x));
  } else if constexpr (Op == kGeluErf) {
    if constexpr (kF32<T>) return vm::gelu_erf_f(x);
    else return T(0.5) * x * std::erfc(-x * T(0.70710678118654752440));
  } else if constexpr (Op == kGeluTanh) {
    if constexpr (kF32<T>) return vm::gelu_tanh_f(x);
    else return x / (T(1) + std::exp(T(-2) * T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
  } else if constexpr (Op == kGeluQuick) {
    if constexpr (kF32<T>) return vm::gelu_quick_f(x);
    else return x / (T(1) + std::exp(T(-1.702) * x));
  } else if constexpr (Op == kLogicalNot) {
    return from_bool<T>(x == T(0));
  } else if constexpr (Op == kIsInf) {
    if constexpr (kF32<T>) return from_bool<T>(vm::abs_f(x) == vm::kInf);
    else if constexpr (kFloat<T>) return from_bool<T>(std::fabs(x) == std::numeric_limits<T>::infinity());
    else return T(0);
  } else if constexpr (Op == kIsNan) {
    return from_bool<T>(x != x);
  } else if constexpr (Op == kClamp) {
    return x < p.lo ? p.lo : (x > p.hi ? p.hi : x);
  } else if constexpr (Op == kSquare) {
    if constexpr (kFloat<T>) return x * x;
    else return wrap_mul(x, x);
  } else if constexpr (Op == kCube) {
    if constexpr (kFloat<T>) return x * x * x;
    else return wrap_mul(wrap_mul(x, x), x);
  } else if constexpr (Op == kReciprocal) {
    if constexpr (kFloat<T>) return T(1) / x;
    else return x == T(1) ? T(1) : (x == T(0) - T(1) ? x : T(0));
  } else if constexpr (Op == kOne) {
    return T(1);
  } else if constexpr (Op == kBitwiseNot) {
    return ~x;  // integers only: eval never instantiates it for floats
  } else {
    static_assert(Op == kCopy, "not a unary op with a scalar body");
  }
}

// ---- binary --------------------------------------------------------------------------------

// Integer power by squaring, wrapping; a negative exponent gives the integer part of 1/a^-b
// (numpy refuses it; torch truncates): 1 for a = 1, ±1 for a = -1, 0 otherwise.
template <typename T>
inline T int_pow(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? -1 : 1;
      return 0;
    }
  }
  uint64_t base = static_cast<uint64_t>(a), result = 1;
  for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}

// numpy's mod: fmod, then moved by one divisor when the signs differ, so the result has the
// divisor's sign (a zero result too: -0.0 for a negative divisor).
template <typename T>
inline T float_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != T(0)) {
    if ((r < T(0)) != (b < T(0))) r += b;
  } else {
    r = std::copysign(T(0), b);
  }
  return r;
}

template <typename T>
inline T int_mod(T a, T b) {
  if (b == 0) return 0;  // numpy: 0 (with a warning)
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    return a % b;
  }
}

template <ElemOp Op, typename T>
MAXC_ELEM_INLINE T apply2(T a, T b) {
  using enum ElemOp;
  if constexpr (Op == kAdd) {
    if constexpr (kFloat<T>) return a + b;
    else return wrap_add(a, b);
  } else if constexpr (Op == kSub) {
    if constexpr (kFloat<T>) return a - b;
    else return wrap_sub(a, b);
  } else if constexpr (Op == kMul) {
    if constexpr (kFloat<T>) return a * b;
    else return wrap_mul(a, b);
  } else if constexpr (Op == kDiv) {
    if constexpr (kFloat<T>) return a / b;
    else return b == 0 ? T(0) : (std::is_signed_v<T> && b == T(0) - T(1) ? wrap_sub(T(0), a) : a / b);
  } else if constexpr (Op == kMax) {
    const T r = a > b ? a : b;
    return a != a ? a : r;  // NaN in either operand wins
  } else if constexpr (Op == kMin) {
    const T r = a < b ? a : b;
    return a != a ? a : r;
  } else if constexpr (Op == kEqual) {
    return from_bool<T>(a == b);
  } else if constexpr (Op == kNotEqual) {
    return from_bool<T>(a != b);
  } else if constexpr (Op == kGreater) {
    return from_bool<T>(a > b);
  } else if constexpr (Op == kGreaterEqual) {
    return from_bool<T>(a >= b);
  } else if constexpr (Op == kLess) {
    return from_bool<T>(a < b);
  } else if constexpr (Op == kLessEqual) {
    return from_bool<T>(a <= b);
  } else if constexpr (Op == kLogicalAnd) {
    return from_bool<T>((a != T(0)) & (b != T(0)));
  } else if constexpr (Op == kLogicalOr) {
    return from_bool<T>((a != T(0)) | (b != T(0)));
  } else if constexpr (Op == kLogicalXor) {
    return from_bool<T>((a != T(0)) != (b != T(0)));
  } else if constexpr (Op == kBitwiseAnd) {
    if constexpr (kFloat<T>) return from_bool<T>((a != T(0)) & (b != T(0)));  // bools, as 0/1
    else return a & b;
  } else if constexpr (Op == kBitwiseOr) {
    if constexpr (kFloat<T>) return from_bool<T>((a != T(0)) | (b != T(0)));
    else return a | b;
  } else if constexpr (Op == kBitwiseXor) {
    if constexpr (kFloat<T>) return from_bool<T>((a != T(0)) != (b != T(0)));
    else return a ^ b;
  } else if constexpr (Op == kMod) {
    if constexpr (kFloat<T>) return float_mod(a, b);
    else return int_mod(a, b);
  } else if constexpr (Op == kPow) {
    if constexpr (kFloat<T>) return std::pow(a, b);
    else return int_pow(a, b);
  } else {
    static_assert(Op == kAdd, "not a binary op");
  }
}

// ---- block loops ---------------------------------------------------------------------------
// Outputs may be the very buffer of an operand (same index read, then written), never a
// shifted view of one, so the loops carry no dependence and `omp simd` is sound.

template <ElemOp Op, typename T>
MAXC_ELEM_INLINE void map1(const T* a, T* o, int64_t n, Params<T> p) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = apply1<Op, T>(a[i], p);
}

template <ElemOp Op, typename T>
MAXC_ELEM_INLINE void map2(const T* a, const T* b, T* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = apply2<Op, T>(a[i], b[i]);
}

// Ops whose body calls libm (fmod, pow): a plain loop, no simd promise the compiler would
// have to break.
template <ElemOp Op, typename T>
MAXC_ELEM_INLINE void map2_scalar(const T* a, const T* b, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply2<Op, T>(a[i], b[i]);
}

template <typename T>
MAXC_ELEM_INLINE void where(const T* c, const T* a, const T* b, T* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = c[i] != T(0) ? a[i] : b[i];
}

}  // namespace maxc::cpu::elem
