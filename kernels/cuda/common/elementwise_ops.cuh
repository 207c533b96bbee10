// The scalar bodies of the elementwise ops, one functor per op of the CPU elementwise
// engine (kernels/cpu/elementwise.h, ElemOp) with the same name less its k, and the same
// meaning per compute type (float, double, i64, u64): the standalone kernels
// (elementwise.cu) and the generated fused kernels (fused_elementwise.cc) both call these,
// and tests/gpu checks them against the CPU's on the host.
//
// Comparisons and logical ops give 0/1 in the compute type. Integer +, -, *, negate wrap
// modulo 2^64 (done in u64: signed overflow is undefined).
#ifndef MAXC_GPU_ELEMENTWISE_OPS_CUH
#define MAXC_GPU_ELEMENTWISE_OPS_CUH

#include "cast.cuh"
#include "math.cuh"

namespace maxc {
namespace gpu {
namespace op {

template <class T>
MAXC_HD T from_bool(bool b) {
  return b ? T(1) : T(0);
}
template <class T>
MAXC_HD T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<u64>(a) + static_cast<u64>(b));
}
template <class T>
MAXC_HD T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<u64>(a) - static_cast<u64>(b));
}
template <class T>
MAXC_HD T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<u64>(a) * static_cast<u64>(b));
}

// ---- unary ---------------------------------------------------------------------------------

#define MAXC_UNARY_OP(Name, body)          \
  struct Name {                            \
    template <class T>                     \
    MAXC_HD T operator()(T x) const body   \
  };

#define MAXC_FLOAT_OR(expr_float, expr_int) \
  {                                         \
    if constexpr (IsFloat<T>::value) {      \
      return expr_float;                    \
    } else {                                \
      return expr_int;                      \
    }                                       \
  }

MAXC_UNARY_OP(Copy, { return x; })
MAXC_UNARY_OP(Abs, {
  if constexpr (IsFloat<T>::value) return math::fabs(x);
  else if constexpr (IsSignedInt<T>::value) return x < 0 ? wrap_sub(T(0), x) : x;
  else return x;
})
MAXC_UNARY_OP(Negate, MAXC_FLOAT_OR(-x, wrap_sub(T(0), x)))
MAXC_UNARY_OP(Relu, { return x < T(0) ? T(0) : x; })  // NaN stays NaN
MAXC_UNARY_OP(Floor, MAXC_FLOAT_OR(math::floor(x), x))
MAXC_UNARY_OP(Trunc, MAXC_FLOAT_OR(math::trunc(x), x))
MAXC_UNARY_OP(Round, MAXC_FLOAT_OR(math::rint(x), x))  // half to even
// The transcendental ops are defined on floats only (the graph refuses integers for them).
MAXC_UNARY_OP(Exp, { return math::exp(x); })
MAXC_UNARY_OP(Log, { return math::log(x); })
MAXC_UNARY_OP(Log1p, { return math::log1p(x); })
MAXC_UNARY_OP(Tanh, { return math::tanh(x); })
MAXC_UNARY_OP(Erf, { return math::erf(x); })
MAXC_UNARY_OP(Atanh, { return math::atanh(x); })
MAXC_UNARY_OP(Sin, { return math::sin(x); })
MAXC_UNARY_OP(Cos, { return math::cos(x); })
MAXC_UNARY_OP(Sqrt, { return math::sqrt(x); })
// 1/sqrt rather than the device's approximate rsqrt, to stay within an ulp of the CPU.
MAXC_UNARY_OP(Rsqrt, { return T(1) / math::sqrt(x); })
// MAX clamps acos's input to [-1, 1] first; NaN passes through.
MAXC_UNARY_OP(Acos, { return math::acos(x < T(-1) ? T(-1) : (x > T(1) ? T(1) : x)); })
// The CPU's formulas (its float64 ones bit for bit). At x = -inf silu and the tanh and quick
// gelus are -inf / inf = NaN as on the CPU; gelu (erf) gives the limit -0, as the CPU's
// float32 kernel does (its float64 one gives NaN).
MAXC_UNARY_OP(Sigmoid, { return T(1) / (T(1) + math::exp(-x)); })
MAXC_UNARY_OP(Silu, { return x / (T(1) + math::exp(-x)); })
MAXC_UNARY_OP(GeluErf, {
  const T phi = math::erfc(-x * T(0.70710678118654752440));
  return phi == T(0) ? math::copysign(T(0), x) : T(0.5) * x * phi;
})
MAXC_UNARY_OP(GeluTanh, {
  return x / (T(1) + math::exp(T(-2) * T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
})
MAXC_UNARY_OP(GeluQuick, { return x / (T(1) + math::exp(T(-1.702) * x)); })
MAXC_UNARY_OP(LogicalNot, { return from_bool<T>(x == T(0)); })
MAXC_UNARY_OP(IsInf, MAXC_FLOAT_OR(from_bool<T>(math::fabs(x) == math::infinity<T>()), T(0)))
MAXC_UNARY_OP(IsNan, { return from_bool<T>(x != x); })
MAXC_UNARY_OP(Square, MAXC_FLOAT_OR(x * x, wrap_mul(x, x)))
MAXC_UNARY_OP(Cube, MAXC_FLOAT_OR(x * x * x, wrap_mul(wrap_mul(x, x), x)))
// Integers: the integer part of 1/x (1 for 1, -1 for -1, else 0; 1/0 is 0).
MAXC_UNARY_OP(Reciprocal, MAXC_FLOAT_OR(T(1) / x, x == T(1) ? T(1) : (x == T(0) - T(1) ? x : T(0))))
MAXC_UNARY_OP(One, { return T(1); })
// Integers only (the graph gives bool to logical_not): two's complement on the wide value,
// whose low bits are the narrow value's.
MAXC_UNARY_OP(BitwiseNot, { return ~x; })

#undef MAXC_FLOAT_OR
#undef MAXC_UNARY_OP

// To [lo, hi], both already in the compute type; NaN stays NaN.
template <class C>
struct Clamp {
  C lo, hi;
  template <class T>
  MAXC_HD T operator()(T x) const {
    return x < T(lo) ? T(lo) : (x > T(hi) ? T(hi) : x);
  }
};

// ---- binary --------------------------------------------------------------------------------

// Power by squaring, wrapping; a negative exponent gives the integer part of 1/a^-b.
template <class T>
MAXC_HD T int_pow(T a, T b) {
  if constexpr (IsSignedInt<T>::value) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? -1 : 1;
      return 0;
    }
  }
  u64 base = static_cast<u64>(a), result = 1;
  for (u64 e = static_cast<u64>(b); e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}

// numpy's mod: the result has the divisor's sign (a zero result too).
template <class T>
MAXC_HD T float_mod(T a, T b) {
  T r = math::fmod(a, b);
  if (r != T(0)) {
    if ((r < T(0)) != (b < T(0))) r += b;
  } else {
    r = math::copysign(T(0), b);
  }
  return r;
}

template <class T>
MAXC_HD T int_mod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (IsSignedInt<T>::value) {
    if (b == -1) return 0;  // INT64_MIN % -1 overflows
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    return a % b;
  }
}

#define MAXC_BINARY_OP(Name, body)             \
  struct Name {                                \
    template <class T>                         \
    MAXC_HD T operator()(T a, T b) const body  \
  };

MAXC_BINARY_OP(Add, {
  if constexpr (IsFloat<T>::value) return a + b;
  else return wrap_add(a, b);
})
MAXC_BINARY_OP(Sub, {
  if constexpr (IsFloat<T>::value) return a - b;
  else return wrap_sub(a, b);
})
MAXC_BINARY_OP(Mul, {
  if constexpr (IsFloat<T>::value) return a * b;
  else return wrap_mul(a, b);
})
// Integers truncate toward zero; x / 0 is 0, and INT64_MIN / -1 wraps.
MAXC_BINARY_OP(Div, {
  if constexpr (IsFloat<T>::value) return a / b;
  else if constexpr (IsSignedInt<T>::value) return b == 0 ? T(0) : (b == T(-1) ? wrap_sub(T(0), a) : a / b);
  else return b == 0 ? T(0) : a / b;
})
MAXC_BINARY_OP(Mod, {
  if constexpr (IsFloat<T>::value) return float_mod(a, b);
  else return int_mod(a, b);
})
MAXC_BINARY_OP(Pow, {
  if constexpr (IsFloat<T>::value) return math::pow(a, b);
  else return int_pow(a, b);
})
// NaN in either operand wins, like numpy.maximum.
MAXC_BINARY_OP(Max, {
  const T r = a > b ? a : b;
  return a != a ? a : r;
})
MAXC_BINARY_OP(Min, {
  const T r = a < b ? a : b;
  return a != a ? a : r;
})
MAXC_BINARY_OP(Equal, { return from_bool<T>(a == b); })
MAXC_BINARY_OP(NotEqual, { return from_bool<T>(a != b); })
MAXC_BINARY_OP(Greater, { return from_bool<T>(a > b); })
MAXC_BINARY_OP(GreaterEqual, { return from_bool<T>(a >= b); })
MAXC_BINARY_OP(Less, { return from_bool<T>(a < b); })
MAXC_BINARY_OP(LessEqual, { return from_bool<T>(a <= b); })
MAXC_BINARY_OP(LogicalAnd, { return from_bool<T>((a != T(0)) && (b != T(0))); })
MAXC_BINARY_OP(LogicalOr, { return from_bool<T>((a != T(0)) || (b != T(0))); })
MAXC_BINARY_OP(LogicalXor, { return from_bool<T>((a != T(0)) != (b != T(0))); })
// Integers bit by bit on the wide value; a float compute type only ever holds bools (0/1)
// here, for which the logical op is the bitwise one.
MAXC_BINARY_OP(BitwiseAnd, {
  if constexpr (IsFloat<T>::value) return from_bool<T>((a != T(0)) && (b != T(0)));
  else return a & b;
})
MAXC_BINARY_OP(BitwiseOr, {
  if constexpr (IsFloat<T>::value) return from_bool<T>((a != T(0)) || (b != T(0)));
  else return a | b;
})
MAXC_BINARY_OP(BitwiseXor, {
  if constexpr (IsFloat<T>::value) return from_bool<T>((a != T(0)) != (b != T(0)));
  else return a ^ b;
})

#undef MAXC_BINARY_OP

// ---- ternary -------------------------------------------------------------------------------

struct Where {
  template <class T>
  MAXC_HD T operator()(T c, T a, T b) const {
    return c != T(0) ? a : b;
  }
};

}  // namespace op
}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_ELEMENTWISE_OPS_CUH
