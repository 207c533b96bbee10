// Runtime dispatch between AVX2+FMA and portable code (DESIGN §5). Kernels write their inner
// loops once, in plain C++ the compiler vectorizes; MAXC_SIMD_CLONES makes GCC emit an
// x86-64-v3 (AVX2, FMA, F16C) clone next to the baseline one and pick at load time through
// an ifunc, so one binary runs everywhere and fast where it can. Hand-written intrinsics,
// where a kernel needs them, go behind `#if MAXC_HAVE_AVX2` in a function marked
// MAXC_TARGET_AVX2, called only when cpu_has_avx2().
#pragma once

// Not under ThreadSanitizer (GCC defines __SANITIZE_THREAD__): the clones' ifunc resolvers
// are instrumented too and run while the library is relocated, before the TSan runtime is
// set up, which crashes every program at load. The baseline code is the same source.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define MAXC_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define MAXC_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define MAXC_HAVE_AVX2 1
#else
#define MAXC_SIMD_CLONES
#define MAXC_TARGET_AVX2
#define MAXC_HAVE_AVX2 0
#endif

// Helpers called from the MAXC_SIMD_CLONES kernels are forced inline: a call that stays a
// call runs the helper's baseline (SSE2) code instead of the clone's AVX2 code.
#if defined(__GNUC__)
#define MAXC_KERNEL_INLINE inline __attribute__((always_inline))
#define MAXC_LAMBDA_INLINE __attribute__((always_inline))
#else
#define MAXC_KERNEL_INLINE inline
#define MAXC_LAMBDA_INLINE
#endif

namespace maxc::cpu {

inline bool cpu_has_avx2() {
#if MAXC_HAVE_AVX2
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

// AVX-512 as oneDNN's avx512_core kernels need it (F, BW, VL, DQ): where those run, oneDNN's
// float32 matmul has twice our AVX2 kernels' width (engine/lower/linalg.cc picks by this).
inline bool cpu_has_avx512() {
#if MAXC_HAVE_AVX2
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

}  // namespace maxc::cpu
