// layer_norm and add_layer_norm (see norm.h).
#include <algorithm>
#include <cmath>

#include "kernels/cpu/norm.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

using reduce_detail::kLanes;
using reduce_detail::lane_sum;

// Sums of (x - shift) and (x - shift)^2 over a row, in kLanes independent accumulators.
template <typename T>
MAXC_KERNEL_INLINE void centred_sums(const T* x, int64_t d, compute_t<T> shift, compute_t<T>& s1, compute_t<T>& s2) {
  using C = compute_t<T>;
  C a1[kLanes], a2[kLanes];
  for (int j = 0; j < kLanes; ++j) a1[j] = a2[j] = C{0};
  int64_t i = 0;
  for (; i + kLanes <= d; i += kLanes)
#pragma GCC unroll 32
    for (int j = 0; j < kLanes; ++j) {
      const C c = load(x[i + j]) - shift;
      a1[j] += c;
      a2[j] += c * c;
    }
  s1 = s2 = C{0};
  for (int j = 0; j < kLanes; ++j) {
    s1 += a1[j];
    s2 += a2[j];
  }
  for (; i < d; ++i) {
    const C c = load(x[i]) - shift;
    s1 += c;
    s2 += c * c;
  }
}

// Two passes: a first mean, then the sums centred on it, which also correct the mean (the
// "corrected two-pass" variance), so rows with a large mean keep their precision.
template <typename T>
MAXC_KERNEL_INLINE void layer_norm_row(const T* x, const T* gamma, const T* beta, T* y, int64_t d, compute_t<T> epsilon) {
  using C = compute_t<T>;
  const C inv_d = C{1} / static_cast<C>(d);
  const C rough_mean = lane_sum<C>(d, [&](int64_t i) MAXC_LAMBDA_INLINE { return load(x[i]); }) * inv_d;
  C s1, s2;
  centred_sums(x, d, rough_mean, s1, s2);
  const C shift = s1 * inv_d;
  const C mean = rough_mean + shift;
  const C var = std::max(s2 * inv_d - shift * shift, C{0});
  const C rstd = C{1} / std::sqrt(var + epsilon);
#pragma omp simd
  for (int64_t i = 0; i < d; ++i) y[i] = store<T>((load(x[i]) - mean) * rstd * load(gamma[i]) + load(beta[i]));
}

template <typename T>
MAXC_SIMD_CLONES void layer_norm_rows(const T* x, const T* gamma, const T* beta, T* y, int64_t rows, int64_t d,
                                      compute_t<T> epsilon) {
  for (int64_t r = 0; r < rows; ++r) layer_norm_row(x + r * d, gamma, beta, y + r * d, d, epsilon);
}

// The sum row goes to `sum` when given, else into y, which layer_norm_row then rewrites.
template <typename T>
MAXC_SIMD_CLONES void add_layer_norm_rows(const T* x, const T* residual, int64_t residual_stride, const T* gamma,
                                          const T* beta, T* y, T* sum, int64_t rows, int64_t d,
                                          compute_t<T> epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* rr = residual + r * residual_stride;
    T* sr = (sum ? sum : y) + r * d;
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) sr[i] = store<T>(load(xr[i]) + load(rr[i]));
    layer_norm_row(sr, gamma, beta, y + r * d, d, epsilon);
  }
}

constexpr int64_t kCostPerElement = 8;

template <typename T>
void layer_norm(const void* x, const void* gamma, const void* beta, void* y, int64_t rows, int64_t d,
                double epsilon) {
  if (d == 0) return;
  const auto eps = static_cast<compute_t<T>>(epsilon);
  parallel_for(rows, d * kCostPerElement, [&](int64_t begin, int64_t end) {
    layer_norm_rows(static_cast<const T*>(x) + begin * d, static_cast<const T*>(gamma),
                    static_cast<const T*>(beta), static_cast<T*>(y) + begin * d, end - begin, d, eps);
  });
}

template <typename T>
void add_layer_norm(const void* x, const void* residual, int64_t residual_stride, const void* gamma,
                    const void* beta, void* y, void* sum, int64_t rows, int64_t d, double epsilon) {
  if (d == 0) return;
  const auto eps = static_cast<compute_t<T>>(epsilon);
  parallel_for(rows, d * (kCostPerElement + 2), [&](int64_t begin, int64_t end) {
    add_layer_norm_rows(static_cast<const T*>(x) + begin * d, static_cast<const T*>(residual) + begin * residual_stride,
                        residual_stride, static_cast<const T*>(gamma), static_cast<const T*>(beta),
                        static_cast<T*>(y) + begin * d, sum ? static_cast<T*>(sum) + begin * d : nullptr,
                        end - begin, d, eps);
  });
}

}  // namespace

LayerNormFn find_layer_norm_kernel(DType dtype) {
  LayerNormFn fn = nullptr;
  visit_dtype<DTypeSet::kFloat>(dtype, [&](auto tag) { fn = &layer_norm<typename decltype(tag)::type>; });
  return fn;
}

AddLayerNormFn find_add_layer_norm_kernel(DType dtype) {
  AddLayerNormFn fn = nullptr;
  visit_dtype<DTypeSet::kFloat>(dtype, [&](auto tag) { fn = &add_layer_norm<typename decltype(tag)::type>; });
  return fn;
}

}  // namespace maxc::cpu
