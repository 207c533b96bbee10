// Kernel sources build with -fno-math-errno -fno-trapping-math (CMakeLists.txt): without
// them, the selects over values computed on both sides and the sqrt calls below would not
// vectorize (they would still be correct).
#include "kernels/cpu/elementwise_steps.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/simd.h"


namespace maxc::cpu::elem {
namespace {

using enum ElemOp;

template <typename T>
MAXC_ELEM_INLINE void sqrt_block(const T* a, T* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]);
}

template <typename T>
MAXC_ELEM_INLINE void rsqrt_block(const T* a, T* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = T(1) / std::sqrt(a[i]);
}

template <typename T>
MAXC_ELEM_INLINE T clamp_unit(T x) {
  return x < T(-1) ? T(-1) : (x > T(1) ? T(1) : x);
}

MAXC_ELEM_INLINE void acos_block(const float* a, float* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float x = clamp_unit(a[i]);
    o[i] = vm::acos_given_half_sqrt_f(x, std::sqrt((1.0f - vm::abs_f(x)) * 0.5f));
  }
}

// sin/cos in float: the polynomial path when every argument of the block is in its range,
// libm otherwise (huge or non-finite arguments are rare, and libm reduces them exactly).
template <bool kSin>
MAXC_ELEM_INLINE void sincos_block(const float* a, float* o, int64_t n) {
  int out_of_range = 0;
#pragma omp simd reduction(| : out_of_range)
  for (int64_t i = 0; i < n; ++i) out_of_range |= !(vm::abs_f(a[i]) <= vm::kTrigMaxArg);
  if (out_of_range) {
    for (int64_t i = 0; i < n; ++i) o[i] = kSin ? std::sin(a[i]) : std::cos(a[i]);
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const vm::SinCos sc = vm::sincos_reduced_f(a[i]);
    o[i] = kSin ? sc.sin : sc.cos;
  }
}

template <typename T>
MAXC_ELEM_INLINE void eval_float_only(ElemOp op, const T* const* args, T* out, int64_t n, Params<T> p) {
  const T* a = args[0];
  switch (op) {
    case kSqrt: sqrt_block(a, out, n); return;
    case kRsqrt: rsqrt_block(a, out, n); return;
    case kAcos:
      if constexpr (kF32<T>) {
        acos_block(a, out, n);
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = std::acos(clamp_unit(a[i]));
      }
      return;
    case kSin:
    case kCos:
      if constexpr (kF32<T>) {
        op == kSin ? sincos_block<true>(a, out, n) : sincos_block<false>(a, out, n);
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = op == kSin ? std::sin(a[i]) : std::cos(a[i]);
      }
      return;
    case kExp: map1<kExp>(a, out, n, p); return;
    case kLog: map1<kLog>(a, out, n, p); return;
    case kLog1p: map1<kLog1p>(a, out, n, p); return;
    case kTanh: map1<kTanh>(a, out, n, p); return;
    case kErf: map1<kErf>(a, out, n, p); return;
    case kAtanh: map1<kAtanh>(a, out, n, p); return;
    case kSigmoid: map1<kSigmoid>(a, out, n, p); return;
    case kSilu: map1<kSilu>(a, out, n, p); return;
    case kGeluErf: map1<kGeluErf>(a, out, n, p); return;
    case kGeluTanh: map1<kGeluTanh>(a, out, n, p); return;
    case kGeluQuick: map1<kGeluQuick>(a, out, n, p); return;
    case kIsInf: map1<kIsInf>(a, out, n, p); return;
    case kDiv: map2<kDiv>(a, args[1], out, n); return;
    default: return;
  }
}

template <typename T>
MAXC_ELEM_INLINE void eval(ElemOp op, const T* const* args, T* out, int64_t n, Params<T> p) {
  const T* a = args[0];
  switch (op) {
    case kCopy: map1<kCopy>(a, out, n, p); return;
    case kAbs: map1<kAbs>(a, out, n, p); return;
    case kNegate: map1<kNegate>(a, out, n, p); return;
    case kRelu: map1<kRelu>(a, out, n, p); return;
    case kFloor: map1<kFloor>(a, out, n, p); return;
    case kTrunc: map1<kTrunc>(a, out, n, p); return;
    case kRound: map1<kRound>(a, out, n, p); return;
    case kLogicalNot: map1<kLogicalNot>(a, out, n, p); return;
    case kIsNan: map1<kIsNan>(a, out, n, p); return;
    case kClamp: map1<kClamp>(a, out, n, p); return;
    case kSquare: map1<kSquare>(a, out, n, p); return;
    case kCube: map1<kCube>(a, out, n, p); return;
    case kReciprocal: map1<kReciprocal>(a, out, n, p); return;
    case kOne: map1<kOne>(a, out, n, p); return;
    case kAdd: map2<kAdd>(a, args[1], out, n); return;
    case kSub: map2<kSub>(a, args[1], out, n); return;
    case kMul: map2<kMul>(a, args[1], out, n); return;
    case kMax: map2<kMax>(a, args[1], out, n); return;
    case kMin: map2<kMin>(a, args[1], out, n); return;
    case kEqual: map2<kEqual>(a, args[1], out, n); return;
    case kNotEqual: map2<kNotEqual>(a, args[1], out, n); return;
    case kGreater: map2<kGreater>(a, args[1], out, n); return;
    case kGreaterEqual: map2<kGreaterEqual>(a, args[1], out, n); return;
    case kLess: map2<kLess>(a, args[1], out, n); return;
    case kLessEqual: map2<kLessEqual>(a, args[1], out, n); return;
    case kLogicalAnd: map2<kLogicalAnd>(a, args[1], out, n); return;
    case kLogicalOr: map2<kLogicalOr>(a, args[1], out, n); return;
    case kLogicalXor: map2<kLogicalXor>(a, args[1], out, n); return;
    case kMod: map2_scalar<kMod>(a, args[1], out, n); return;
    case kPow: map2_scalar<kPow>(a, args[1], out, n); return;
    case kBitwiseAnd: map2<kBitwiseAnd>(a, args[1], out, n); return;
    case kBitwiseOr: map2<kBitwiseOr>(a, args[1], out, n); return;
    case kBitwiseXor: map2<kBitwiseXor>(a, args[1], out, n); return;
    case kWhere: where(a, args[1], args[2], out, n); return;
    case kBitwiseNot:
      if constexpr (!kFloat<T>) map1<kBitwiseNot>(a, out, n, p);
      return;
    default:
      if constexpr (kFloat<T>) eval_float_only(op, args, out, n, p);
      return;
  }
}

}  // namespace

MAXC_SIMD_CLONES void eval_step(ElemOp op, const float* const* args, float* out, int64_t n, Params<float> p) {
  eval(op, args, out, n, p);
}
MAXC_SIMD_CLONES void eval_step(ElemOp op, const double* const* args, double* out, int64_t n, Params<double> p) {
  eval(op, args, out, n, p);
}
MAXC_SIMD_CLONES void eval_step(ElemOp op, const int64_t* const* args, int64_t* out, int64_t n,
                                Params<int64_t> p) {
  eval(op, args, out, n, p);
}
MAXC_SIMD_CLONES void eval_step(ElemOp op, const uint64_t* const* args, uint64_t* out, int64_t n,
                                Params<uint64_t> p) {
  eval(op, args, out, n, p);
}

bool elem_op_supports(ElemOp op, ElemCompute c) {
  const bool is_float = c == ElemCompute::kFloat32 || c == ElemCompute::kFloat64;
  switch (op) {
    case kSqrt: case kRsqrt: case kAcos: case kSin: case kCos: case kExp: case kLog: case kLog1p:
    case kTanh: case kErf: case kAtanh: case kSigmoid: case kSilu: case kGeluErf: case kGeluTanh:
    case kGeluQuick: case kIsInf: case kDiv:
      return is_float;
    case kBitwiseNot:
      return !is_float;
    default:
      return true;
  }
}

}  // namespace maxc::cpu::elem
