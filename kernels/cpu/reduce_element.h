// How the reduction, scan, sort, softmax and normalization kernels see each dtype: the
// storage type, the type it is computed in (half floats in float32, DESIGN §5), the type a
// sum accumulates in, and the one switch from a DType to a template instantiation, so each
// kernel family writes its loops once as templates and picks the instance at lowering time.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/dtype.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/simd.h"


namespace maxc::cpu {

// Half floats kept as their bits, as distinct types so templates can tell them apart.
struct Float16Bits {
  uint16_t bits;
};
struct BFloat16Bits {
  uint16_t bits;
};

template <typename T>
struct ElementTraits {
  using Compute = T;  // comparisons and elementwise math
  using Acc = T;      // sums
};
template <>
struct ElementTraits<Float16Bits> {
  using Compute = float;
  using Acc = float;
};
template <>
struct ElementTraits<BFloat16Bits> {
  using Compute = float;
  using Acc = float;
};
// Integer sums wrap like numpy's: unsigned 64-bit accumulation (no signed overflow), and the
// cast back to the storage type is modulo 2^bits.
template <>
struct ElementTraits<int32_t> {
  using Compute = int32_t;
  using Acc = uint64_t;
};
template <>
struct ElementTraits<int64_t> {
  using Compute = int64_t;
  using Acc = uint64_t;
};

template <typename T>
using compute_t = typename ElementTraits<T>::Compute;
template <typename T>
using acc_t = typename ElementTraits<T>::Acc;

template <typename T>
MAXC_KERNEL_INLINE compute_t<T> load(T v) {
  return v;
}
MAXC_KERNEL_INLINE float load(Float16Bits v) { return f16_to_float(v.bits); }
MAXC_KERNEL_INLINE float load(BFloat16Bits v) { return bf16_to_float(v.bits); }

template <typename T, typename V>
MAXC_KERNEL_INLINE T store(V v) {
  if constexpr (std::is_same_v<T, Float16Bits>) {
    return {float_to_f16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16Bits>) {
    return {float_to_bf16(static_cast<float>(v))};
  } else {
    return static_cast<T>(v);
  }
}

// v rounded through the storage type (what the unfused graph would hold between two ops).
template <typename T>
MAXC_KERNEL_INLINE compute_t<T> round_to_storage(compute_t<T> v) {
  return load(store<T>(v));
}

template <typename C>
MAXC_KERNEL_INLINE bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return v != v;
  } else {
    return false;
  }
}

// The identities of max and min in the compute type.
template <typename C>
constexpr C lowest_value() {
  if constexpr (std::numeric_limits<C>::has_infinity) return -std::numeric_limits<C>::infinity();
  return std::numeric_limits<C>::lowest();
}
template <typename C>
constexpr C highest_value() {
  if constexpr (std::numeric_limits<C>::has_infinity) return std::numeric_limits<C>::infinity();
  return std::numeric_limits<C>::max();
}

template <typename T>
struct TypeTag {
  using type = T;
};

// Which dtypes a kernel family has instances for.
enum class DTypeSet {
  kFloat,    // float32, float64, float16, bfloat16
  kNumeric,  // kFloat plus int32 and int64
};

// Calls f(TypeTag<T>{}) for the storage type of `dtype` and returns true; false, without
// calling f, when `dtype` is not in `kSet` (only the set's types are instantiated).
template <DTypeSet kSet, typename F>
bool visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(TypeTag<float>{}); return true;
    case DType::kFloat64: f(TypeTag<double>{}); return true;
    case DType::kFloat16: f(TypeTag<Float16Bits>{}); return true;
    case DType::kBFloat16: f(TypeTag<BFloat16Bits>{}); return true;
    default: break;
  }
  if constexpr (kSet == DTypeSet::kNumeric) {
    switch (dtype) {
      case DType::kInt32: f(TypeTag<int32_t>{}); return true;
      case DType::kInt64: f(TypeTag<int64_t>{}); return true;
      default: break;
    }
  }
  return false;
}

}  // namespace maxc::cpu
