// The CPU's meaning of a stored element and of an elementwise op (kernels/cpu/cast.h,
// kernels/cpu/elementwise_ops.h), reached from the GPU's storage types: the references of
// the cast and elementwise kernel tests. The two sides name the same bytes differently
// (maxc::gpu::half is cpu::Half, maxc::gpu::i64 is long long where int64_t is long).
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "gpu_emu/cuda_emulator.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cuda/common/cast.cuh"

namespace maxc::gpu_emu::testing {

template <class S>
struct CpuStorageOf {
  using type = S;
};
template <>
struct CpuStorageOf<gpu::bool8> {
  using type = cpu::Bool8;
};
template <>
struct CpuStorageOf<gpu::half> {
  using type = cpu::Half;
};
template <>
struct CpuStorageOf<gpu::bfloat16> {
  using type = cpu::BFloat16;
};
template <>
struct CpuStorageOf<gpu::i64> {
  using type = int64_t;
};
template <>
struct CpuStorageOf<gpu::u64> {
  using type = uint64_t;
};
template <class S>
using CpuStorage = typename CpuStorageOf<S>::type;

// The CPU compute type of GPU storage type S (the GPU's ComputeOf, respelled).
template <class S>
using CpuCompute = CpuStorage<typename gpu::ComputeOf<S>::type>;

template <class To, class From>
To same_bytes(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// Element `s` as the CPU loads it into compute type C.
template <class C, class S>
C cpu_load(const S& s) {
  return cpu::load_as<C>(same_bytes<CpuStorage<S>>(s));
}

// Compute value `v` as the CPU stores it into (GPU) storage type S.
template <class S, class C>
S cpu_store(C v) {
  return same_bytes<S>(cpu::store_as<CpuStorage<S>>(v));
}

// The CPU's unary op on one value. A few ops have no scalar body there (the CPU runs them
// over blocks, elementwise_steps.cc); for those, the libm formula the blocks compute.
template <cpu::ElemOp E, class C>
C cpu_unary(C x, cpu::elem::Params<C> params) {
  using enum cpu::ElemOp;
  if constexpr (E == kSin) return std::sin(x);
  else if constexpr (E == kCos) return std::cos(x);
  else if constexpr (E == kSqrt) return std::sqrt(x);
  else if constexpr (E == kRsqrt) return C(1) / std::sqrt(x);
  else if constexpr (E == kAcos) return std::acos(x < C(-1) ? C(-1) : (x > C(1) ? C(1) : x));  // MAX clamps first
  else return cpu::elem::apply1<E, C>(x, params);
}

}  // namespace maxc::gpu_emu::testing
