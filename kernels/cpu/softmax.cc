// softmax and logsoftmax (see softmax.h). Three passes over each line: the maximum, the sum
// of exp(x - max), and the output. float32 and the half floats (converted in blocks) take
// their exp from the AVX2 loops of softmax_exp.cc; float64 uses std::exp.
#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/softmax_exp.h"

namespace maxc::cpu {
namespace {

using reduce_detail::for_column_blocks;
using reduce_detail::kColumnBlock;
using reduce_detail::MaxOp;
using reduce_detail::reduce_row;

constexpr int64_t kBlock = 256;  // half floats are converted this many at a time
static_assert(kColumnBlock <= kBlock, "softmax_columns converts a column block in one piece");

// Calls fn(block, offset, len) over x[0, n) as float32 blocks: float32 in place, half floats
// converted into a stack buffer.
template <typename T, typename Fn>
MAXC_KERNEL_INLINE void for_float_blocks(const T* x, int64_t n, Fn&& fn) {
  if constexpr (std::is_same_v<T, float>) {
    fn(x, int64_t{0}, n);
  } else {
    float buf[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      for (int64_t i = 0; i < len; ++i) buf[i] = load(x[b + i]);
      fn(static_cast<const float*>(buf), b, len);
    }
  }
}

// One line of n contiguous elements, computed in float32.
template <typename T, bool kLog>
MAXC_KERNEL_INLINE void softmax_row_f32(const T* x, T* y, int64_t n) {
  const float m = reduce_row<MaxOp<T>>(x, n);
  if constexpr (kLog) {
    float sum = 0;
    for_float_blocks(x, n, [&](const float* b, int64_t, int64_t len) MAXC_LAMBDA_INLINE { sum += exp_shifted_sum(b, m, nullptr, len); });
    const float log_sum = std::log(sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = store<T>((load(x[i]) - m) - log_sum);
  } else if constexpr (std::is_same_v<T, float>) {
    const float inv = 1.0f / exp_shifted_sum(x, m, y, n);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  } else {
    float sum = 0;
    for_float_blocks(x, n, [&](const float* b, int64_t, int64_t len) MAXC_LAMBDA_INLINE { sum += exp_shifted_sum(b, m, nullptr, len); });
    const float inv = 1.0f / sum;
    float e[kBlock];
    for_float_blocks(x, n, [&](const float* b, int64_t offset, int64_t len) MAXC_LAMBDA_INLINE {
      exp_shifted_sum(b, m, e, len);
      for (int64_t i = 0; i < len; ++i) y[offset + i] = store<T>(e[i] * inv);
    });
  }
}

MAXC_KERNEL_INLINE void softmax_row_f64(const double* x, double* y, int64_t n, bool log) {
  const double m = reduce_row<MaxOp<double>>(x, n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - m);
  if (log) {
    const double log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    const double inv = 1.0 / sum;
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m) * inv;
  }
}

template <typename T, bool kLog>
MAXC_SIMD_CLONES void softmax_rows(const T* x, T* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    if constexpr (std::is_same_v<T, double>) {
      softmax_row_f64(x + r * n, y + r * n, n, kLog);
    } else {
      softmax_row_f32<T, kLog>(x + r * n, y + r * n, n);
    }
  }
}

// x and y point at [o, 0, c0]; `width` columns, at most kColumnBlock, side by side.
template <typename T, bool kLog>
MAXC_SIMD_CLONES void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t width) {
  using C = compute_t<T>;
  // float32 keeps exp(x - max) in y between the passes; half floats would lose precision
  // there and compute it again.
  constexpr bool kKeepExp = !kLog && std::is_same_v<T, float>;
  C m[kColumnBlock], s[kColumnBlock], e[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) {
    m[j] = MaxOp<T>::init();
    s[j] = C{0};
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* xr = x + a * inner;
    for (int64_t j = 0; j < width; ++j) m[j] = MaxOp<T>::combine(m[j], load(xr[j]));
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* xr = x + a * inner;
    if constexpr (std::is_same_v<C, double>) {
      for (int64_t j = 0; j < width; ++j) s[j] += std::exp(xr[j] - m[j]);
    } else {
      for_float_blocks(xr, width, [&](const float* b, int64_t, int64_t len) MAXC_LAMBDA_INLINE {
        exp_shifted_accumulate(b, m, s, kKeepExp ? reinterpret_cast<float*>(y + a * inner) : nullptr, len);
      });
    }
  }
  for (int64_t j = 0; j < width; ++j) s[j] = kLog ? std::log(s[j]) : C{1} / s[j];
  for (int64_t a = 0; a < n; ++a) {
    const T* xr = x + a * inner;
    T* yr = y + a * inner;
    if constexpr (kLog) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) yr[j] = store<T>((load(xr[j]) - m[j]) - s[j]);
    } else if constexpr (kKeepExp) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) yr[j] *= s[j];
    } else if constexpr (std::is_same_v<C, double>) {
      for (int64_t j = 0; j < width; ++j) yr[j] = std::exp(xr[j] - m[j]) * s[j];
    } else {
      for_float_blocks(xr, width, [&](const float* b, int64_t, int64_t len) MAXC_LAMBDA_INLINE {
        for (int64_t j = 0; j < len; ++j) e[j] = 0;
        exp_shifted_accumulate(b, m, e, nullptr, len);
        for (int64_t j = 0; j < len; ++j) yr[j] = store<T>(e[j] * s[j]);
      });
    }
  }
}

template <typename T, bool kLog>
void softmax(const void* xv, void* yv, int64_t outer, int64_t n, int64_t inner) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  if (n == 0) return;
  constexpr int64_t kCost = 16;  // exp and three passes per element
  if (inner == 1) {
    parallel_for(outer, n * kCost, [&](int64_t begin, int64_t end) {
      softmax_rows<T, kLog>(x + begin * n, y + begin * n, end - begin, n);
    });
    return;
  }
  for_column_blocks(outer, inner, n * kCost, [&](int64_t o, int64_t c0, int64_t width) {
    const int64_t offset = o * n * inner + c0;
    softmax_columns<T, kLog>(x + offset, y + offset, n, inner, width);
  });
}

}  // namespace

SoftmaxFn find_softmax_kernel(DType dtype, bool log) {
  SoftmaxFn fn = nullptr;
  visit_dtype<DTypeSet::kFloat>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fn = log ? &softmax<T, true> : &softmax<T, false>;
  });
  return fn;
}

}  // namespace maxc::cpu
