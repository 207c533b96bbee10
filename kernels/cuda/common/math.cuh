// Math functions overloaded on float and double, so templated kernels call one name. The
// device library (NVRTC and hipRTC have it built in) and the host's libm provide the same
// C functions; only the spelling of the float variants differs from std::.
#ifndef MAXC_GPU_MATH_CUH
#define MAXC_GPU_MATH_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {
namespace math {

#if defined(MAXC_HOST_ONLY)
#define MAXC_MATH_F(name) std::name
#define MAXC_MATH_D(name) std::name
#else
#define MAXC_MATH_F(name) ::name##f
#define MAXC_MATH_D(name) ::name
#endif

#define MAXC_MATH_UNARY(name)                                   \
  MAXC_HD float name(float x) { return MAXC_MATH_F(name)(x); }  \
  MAXC_HD double name(double x) { return MAXC_MATH_D(name)(x); }

MAXC_MATH_UNARY(exp)
MAXC_MATH_UNARY(log)
MAXC_MATH_UNARY(log1p)
MAXC_MATH_UNARY(sqrt)
MAXC_MATH_UNARY(sin)
MAXC_MATH_UNARY(cos)
MAXC_MATH_UNARY(tanh)
MAXC_MATH_UNARY(acos)
MAXC_MATH_UNARY(atanh)
MAXC_MATH_UNARY(erf)
MAXC_MATH_UNARY(erfc)
MAXC_MATH_UNARY(floor)
MAXC_MATH_UNARY(trunc)
MAXC_MATH_UNARY(fabs)
// rint rounds half to even in the default rounding mode, like the CPU kernels' nearbyint.
MAXC_MATH_UNARY(rint)

#undef MAXC_MATH_UNARY

MAXC_HD float fmod(float a, float b) { return MAXC_MATH_F(fmod)(a, b); }
MAXC_HD double fmod(double a, double b) { return MAXC_MATH_D(fmod)(a, b); }
MAXC_HD float pow(float a, float b) { return MAXC_MATH_F(pow)(a, b); }
MAXC_HD double pow(double a, double b) { return MAXC_MATH_D(pow)(a, b); }
MAXC_HD float copysign(float a, float b) { return MAXC_MATH_F(copysign)(a, b); }
MAXC_HD double copysign(double a, double b) { return MAXC_MATH_D(copysign)(a, b); }

#undef MAXC_MATH_F
#undef MAXC_MATH_D

template <class T>
MAXC_HD T infinity();
template <>
MAXC_HD float infinity<float>() {
  return f32_from_bits(0x7f800000u);
}
template <>
MAXC_HD double infinity<double>() {
  return f64_from_bits(0x7ff0000000000000ull);
}

template <class T>
MAXC_HD bool is_nan(T x) {
  return x != x;
}

// The smallest and largest value of a compute type: the identities of max and min.
template <class T>
MAXC_HD T lowest();
template <class T>
MAXC_HD T highest();
template <>
MAXC_HD float lowest<float>() {
  return -infinity<float>();
}
template <>
MAXC_HD float highest<float>() {
  return infinity<float>();
}
template <>
MAXC_HD double lowest<double>() {
  return -infinity<double>();
}
template <>
MAXC_HD double highest<double>() {
  return infinity<double>();
}
template <>
MAXC_HD i64 lowest<i64>() {
  return static_cast<i64>(0x8000000000000000ull);
}
template <>
MAXC_HD i64 highest<i64>() {
  return 0x7fffffffffffffffll;
}
template <>
MAXC_HD u64 lowest<u64>() {
  return 0;
}
template <>
MAXC_HD u64 highest<u64>() {
  return ~0ull;
}

}  // namespace math
}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_MATH_CUH
