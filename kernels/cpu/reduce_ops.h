// The reduction policies and the two loop shapes they run in, shared by the value reductions
// (reduce.cc), the arg reductions (reduce_arg.cc) and the kernels that need a row's maximum
// (softmax). Internal to kernels/cpu.
//
// A policy has an accumulator type A, an identity, combine(acc, element), merge(acc, acc) and
// finish(acc, n) -> storage value. Loops keep kLanes independent accumulators so the compiler
// can vectorize them without reassociating one chain (no -ffast-math needed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/reduce_extreme.h"
#include "kernels/cpu/reduce_element.h"

namespace maxc::cpu::reduce_detail {

constexpr int kLanes = 32;             // accumulators of a row reduction (4 AVX2 float vectors)
constexpr int64_t kColumnBlock = 256;  // columns one strided reduction keeps in registers/L1

template <typename T>
struct SumOp {
  using A = acc_t<T>;
  static A init() { return A{0}; }
  static A combine(A a, compute_t<T> v) { return a + static_cast<A>(v); }
  static A merge(A a, A b) { return a + b; }
  static T finish(A a, int64_t) { return store<T>(a); }
};

// Integers average in double, like numpy, and truncate toward zero when stored back.
template <typename T>
struct MeanOp {
  using A = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;
  static A init() { return A{0}; }
  static A combine(A a, compute_t<T> v) { return a + static_cast<A>(v); }
  static A merge(A a, A b) { return a + b; }
  static T finish(A a, int64_t n) {
    if constexpr (std::is_integral_v<T>) {
      return n == 0 ? T{0} : static_cast<T>(a / static_cast<double>(n));
    } else {
      return store<T>(a / static_cast<A>(n));  // 0/0: NaN, like numpy
    }
  }
};

template <typename T>
struct MaxOp {
  using A = compute_t<T>;
  static A init() { return lowest_value<A>(); }
  // Written as a select so it vectorizes; a NaN element wins and then stays.
  static A combine(A a, A v) { return (v > a || is_nan(v)) ? v : a; }
  static A merge(A a, A b) { return combine(a, b); }
  static T finish(A a, int64_t) { return store<T>(a); }
};

template <typename T>
struct MinOp {
  using A = compute_t<T>;
  static A init() { return highest_value<A>(); }
  static A combine(A a, A v) { return (v < a || is_nan(v)) ? v : a; }
  static A merge(A a, A b) { return combine(a, b); }
  static T finish(A a, int64_t) { return store<T>(a); }
};

// The max (kMax) or min of a row, NaN-propagating. The extreme and the NaN flag are kept
// apart so the select chain stays simple enough for GCC to vectorize; float32 has
// hand-written AVX2 (reduce_extreme.cc).
template <bool kMax, typename T>
MAXC_KERNEL_INLINE compute_t<T> extreme_of_row(const T* x, int64_t n) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float>) {
    return kMax ? max_of_row(x, n) : min_of_row(x, n);
  } else {
    C acc[kLanes];
    bool nan[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      acc[j] = kMax ? lowest_value<C>() : highest_value<C>();
      nan[j] = false;
    }
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const C v = load(x[i + j]);
        acc[j] = kMax ? (acc[j] > v ? acc[j] : v) : (acc[j] < v ? acc[j] : v);
        nan[j] |= is_nan(v);
      }
    C r = kMax ? lowest_value<C>() : highest_value<C>();
    bool any_nan = false;
    for (int j = 0; j < kLanes; ++j) {
      r = kMax ? (r > acc[j] ? r : acc[j]) : (r < acc[j] ? r : acc[j]);
      any_nan |= nan[j];
    }
    for (; i < n; ++i) {
      const C v = load(x[i]);
      r = kMax ? (r > v ? r : v) : (r < v ? r : v);
      any_nan |= is_nan(v);
    }
    if constexpr (std::numeric_limits<C>::has_quiet_NaN) {
      if (any_nan) return std::numeric_limits<C>::quiet_NaN();
    }
    return r;
  }
}

// The sum over i < n of term(i), in kLanes independent accumulators of type A. The lane
// loop is unrolled so the accumulators live in vector registers.
template <typename A, typename Term>
MAXC_KERNEL_INLINE A lane_sum(int64_t n, Term&& term) {
  A acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = A{0};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
#pragma GCC unroll 32
    for (int j = 0; j < kLanes; ++j) acc[j] += term(i + j);
  A r{0};
  for (int j = 0; j < kLanes; ++j) r += acc[j];
  for (; i < n; ++i) r += term(i);
  return r;
}

// The accumulator of one contiguous row of n elements under policy Op.
template <typename Op, typename T>
MAXC_KERNEL_INLINE typename Op::A reduce_row(const T* x, int64_t n) {
  using A = typename Op::A;
  if constexpr (std::is_same_v<Op, MaxOp<T>>) {
    return extreme_of_row<true>(x, n);
  } else if constexpr (std::is_same_v<Op, MinOp<T>>) {
    return extreme_of_row<false>(x, n);
  } else {
    return lane_sum<A>(n, [&](int64_t i) MAXC_LAMBDA_INLINE { return static_cast<A>(load(x[i])); });
  }
}

// Calls fn(o, c0, width) for every block of at most kColumnBlock columns of every outer
// index, split over the thread team; `cost_per_column` is the scalar work of one column.
template <typename Fn>
void for_column_blocks(int64_t outer, int64_t inner, int64_t cost_per_column, Fn&& fn) {
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  parallel_for(outer * blocks, cost_per_column * std::min(inner, kColumnBlock), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, c0 = (item % blocks) * kColumnBlock;
      fn(o, c0, std::min(kColumnBlock, inner - c0));
    }
  });
}

}  // namespace maxc::cpu::reduce_detail
