// Eight floats as a GCC vector, for register-tiled kernels written once in plain C++: in the
// x86-64-v3 clone (simd.h) they are AVX registers and `acc += x * b` is an FMA. Loads and
// stores go through memcpy, which GCC turns into unaligned vector moves, so rows may start
// at any float. Include only from .cc files of kernels/cpu.
#pragma once

// The helpers pass 32-byte vectors by value; they are always inlined, so the ABI note GCC
// gives for such functions in the baseline build does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace maxc::cpu {

typedef float V8 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline V8 load8(const float* p) {
  V8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store8(float* p, V8 v) { __builtin_memcpy(p, &v, sizeof v); }

// Sixteen floats: AVX-512 registers, in functions compiled for it.
typedef float V16 __attribute__((vector_size(64)));

// Loads and stores of either width, for kernels written once for both.
template <typename V>
[[gnu::always_inline]] inline V load_vec(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <typename V>
[[gnu::always_inline]] inline void store_vec(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}

}  // namespace maxc::cpu
