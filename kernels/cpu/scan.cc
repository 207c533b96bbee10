// Cumulative sum (see scan.h).
#include "kernels/cpu/scan.h"

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

using reduce_detail::for_column_blocks;
using reduce_detail::kColumnBlock;

// One contiguous line; `step` is +1 or -1 and x, y point at the line's first visited element.
template <typename T>
MAXC_KERNEL_INLINE void scan_line(const T* x, T* y, int64_t n, int64_t step, bool exclusive) {
  acc_t<T> acc{0};
  for (int64_t a = 0; a < n; ++a) {
    const auto v = static_cast<acc_t<T>>(load(x[a * step]));
    if (exclusive) {
      y[a * step] = store<T>(acc);
      acc += v;
    } else {
      acc += v;
      y[a * step] = store<T>(acc);
    }
  }
}

template <typename T>
MAXC_SIMD_CLONES void scan_rows(const T* x, T* y, int64_t rows, int64_t n, bool exclusive, bool reverse) {
  const int64_t first = reverse ? n - 1 : 0, step = reverse ? -1 : 1;
  for (int64_t r = 0; r < rows; ++r) scan_line(x + r * n + first, y + r * n + first, n, step, exclusive);
}

// x and y point at [o, 0, c0]; `width` columns, at most kColumnBlock, scanned side by side.
template <typename T>
MAXC_SIMD_CLONES void scan_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t width, bool exclusive,
                                   bool reverse) {
  acc_t<T> acc[kColumnBlock] = {};
  for (int64_t s = 0; s < n; ++s) {
    const int64_t a = reverse ? n - 1 - s : s;
    const T* xr = x + a * inner;
    T* yr = y + a * inner;
    if (exclusive) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) {
        const auto v = static_cast<acc_t<T>>(load(xr[j]));
        yr[j] = store<T>(acc[j]);
        acc[j] += v;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) {
        acc[j] += static_cast<acc_t<T>>(load(xr[j]));
        yr[j] = store<T>(acc[j]);
      }
    }
  }
}

template <typename T>
void cumsum(const void* xv, void* yv, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  if (n == 0) return;
  if (inner == 1) {
    parallel_for(outer, n, [&](int64_t begin, int64_t end) {
      scan_rows(x + begin * n, y + begin * n, end - begin, n, exclusive, reverse);
    });
    return;
  }
  for_column_blocks(outer, inner, n, [&](int64_t o, int64_t c0, int64_t width) {
    const int64_t offset = o * n * inner + c0;
    scan_columns(x + offset, y + offset, n, inner, width, exclusive, reverse);
  });
}

}  // namespace

ScanFn find_cumsum_kernel(DType dtype) {
  ScanFn fn = nullptr;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) { fn = &cumsum<typename decltype(tag)::type>; });
  return fn;
}

}  // namespace maxc::cpu
