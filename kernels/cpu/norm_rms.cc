// rms_norm (see norm.h).
#include <cmath>

#include "kernels/cpu/norm.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

using reduce_detail::lane_sum;

template <typename T>
MAXC_SIMD_CLONES void rms_norm_rows(const T* x, const T* weight, T* y, int64_t rows, int64_t d,
                                    compute_t<T> epsilon, compute_t<T> offset, bool multiply_before_cast) {
  using C = compute_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    const C mean_square = lane_sum<C>(d, [&](int64_t i) MAXC_LAMBDA_INLINE {
                            const C v = load(xr[i]);
                            return v * v;
                          }) /
                          static_cast<C>(d);
    const C scale = C{1} / std::sqrt(mean_square + epsilon);
    if (multiply_before_cast) {
#pragma omp simd
      for (int64_t i = 0; i < d; ++i) yr[i] = store<T>(load(xr[i]) * scale * (load(weight[i]) + offset));
    } else {
#pragma omp simd
      for (int64_t i = 0; i < d; ++i)
        yr[i] = store<T>(round_to_storage<T>(load(xr[i]) * scale) * round_to_storage<T>(load(weight[i]) + offset));
    }
  }
}

template <typename T>
void rms_norm(const void* x, const void* weight, void* y, int64_t rows, int64_t d, double epsilon,
              double weight_offset, bool multiply_before_cast) {
  using C = compute_t<T>;
  if (d == 0) return;
  parallel_for(rows, d * 6, [&](int64_t begin, int64_t end) {
    rms_norm_rows(static_cast<const T*>(x) + begin * d, static_cast<const T*>(weight), static_cast<T*>(y) + begin * d,
                  end - begin, d, static_cast<C>(epsilon), static_cast<C>(weight_offset), multiply_before_cast);
  });
}

}  // namespace

RmsNormFn find_rms_norm_kernel(DType dtype) {
  RmsNormFn fn = nullptr;
  visit_dtype<DTypeSet::kFloat>(dtype, [&](auto tag) { fn = &rms_norm<typename decltype(tag)::type>; });
  return fn;
}

}  // namespace maxc::cpu
