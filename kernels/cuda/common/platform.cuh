// What every kernel source needs from its compiler, spelled once for the three that read
// these headers: NVRTC (CUDA), hipRTC (HIP) and a host C++ compiler. The host build is how
// the unit tests (tests/gpu) check the arithmetic of common/*.cuh against the CPU kernels on
// a machine without a GPU, and how host code builds kernel arguments with the very structs
// the kernels read. No system header is included for NVRTC/hipRTC: they have none.
//
// Rules for the headers in common/: every function is MAXC_HD (host and device), nothing
// uses a CUDA-only intrinsic outside a MAXC_CUDA/MAXC_HIP guard, and a header includes its
// siblings by bare name ("types.cuh"), which the host compiler resolves next to the file and
// the runtime compilers find because each header is also registered under its bare name.
// That double registration is why these headers use include guards: NVRTC's #pragma once
// knows a header by the name it was included under, and would read it twice.
#ifndef MAXC_GPU_PLATFORM_CUH
#define MAXC_GPU_PLATFORM_CUH

// MAXC_EMULATED: tests/gpu_emu/cuda_emulator.h, which runs the kernels on the host with the
// device keywords and intrinsics it defines, so the headers take their CUDA branch there.
#if defined(__HIPCC_RTC__) || defined(__HIP__) || defined(__HIPCC__)
#define MAXC_HIP 1
#elif defined(MAXC_EMULATED)
#define MAXC_CUDA 1
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define MAXC_CUDA 1
#else
#define MAXC_HOST_ONLY 1
#endif

#if defined(MAXC_HOST_ONLY)
#include <cmath>
#include <cstring>
#define MAXC_HD inline
#else
#define MAXC_HD __host__ __device__ __forceinline__
#endif

namespace maxc {
namespace gpu {

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

static_assert(sizeof(i64) == 8 && sizeof(u64) == 8, "64-bit integers");
static_assert(sizeof(i32) == 4 && sizeof(u32) == 4 && sizeof(u16) == 2, "fixed-width integers");

// Bit reinterpretation. The device builtins exist under both CUDA and HIP; the host copies
// bytes, the one defined way in C++ before std::bit_cast.
MAXC_HD u32 f32_bits(float f) {
#if defined(MAXC_HOST_ONLY)
  u32 u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#else
  return __float_as_uint(f);
#endif
}

MAXC_HD float f32_from_bits(u32 u) {
#if defined(MAXC_HOST_ONLY)
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#else
  return __uint_as_float(u);
#endif
}

MAXC_HD u64 f64_bits(double d) {
#if defined(MAXC_HOST_ONLY)
  u64 u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#else
  return static_cast<u64>(__double_as_longlong(d));
#endif
}

MAXC_HD double f64_from_bits(u64 u) {
#if defined(MAXC_HOST_ONLY)
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#else
  return __longlong_as_double(static_cast<i64>(u));
#endif
}

// The few type traits the kernels need; <type_traits> is not there under NVRTC.
template <class A, class B>
struct IsSame {
  static constexpr bool value = false;
};
template <class A>
struct IsSame<A, A> {
  static constexpr bool value = true;
};

template <class T>
struct IsFloat {
  static constexpr bool value = false;
};
template <>
struct IsFloat<float> {
  static constexpr bool value = true;
};
template <>
struct IsFloat<double> {
  static constexpr bool value = true;
};

template <class T>
struct IsSignedInt {
  static constexpr bool value = IsSame<T, i8>::value || IsSame<T, i16>::value || IsSame<T, i32>::value ||
                                IsSame<T, i64>::value;
};
template <class T>
struct IsUnsignedInt {
  static constexpr bool value = IsSame<T, u8>::value || IsSame<T, u16>::value || IsSame<T, u32>::value ||
                                IsSame<T, u64>::value;
};

template <bool C, class A, class B>
struct Select {
  typedef A type;
};
template <class A, class B>
struct Select<false, A, B> {
  typedef B type;
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_PLATFORM_CUH
