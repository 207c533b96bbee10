#include "kernels/cpu/elementwise_io.h"

#include <cstring>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu::elem {
namespace {

template <typename T>
[[gnu::always_inline]] inline void load(DType src, const void* base, int64_t offset, int64_t stride, int64_t n,
                                        T* dst) {
  visit_storage(src, [&](auto tag) __attribute__((always_inline)) {
    using S = decltype(tag);
    const S* p = static_cast<const S*>(base) + offset;
    if constexpr (std::is_same_v<S, T>) {
      if (stride == 1) {
        std::memcpy(dst, p, static_cast<size_t>(n) * sizeof(T));
        return;
      }
    }
    if (stride == 1) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dst[i] = load_as<T>(p[i]);
    } else if (stride == 0) {
      const T v = load_as<T>(p[0]);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dst[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = load_as<T>(p[i * stride]);
    }
  });
}

template <typename T>
[[gnu::always_inline]] inline void store(DType dst, void* base, int64_t offset, const T* src, int64_t n) {
  visit_storage(dst, [&](auto tag) __attribute__((always_inline)) {
    using S = decltype(tag);
    S* p = static_cast<S*>(base) + offset;
    if constexpr (std::is_same_v<S, T>) {
      // The same bytes when a copy program runs in place.
      if (static_cast<const void*>(p) != static_cast<const void*>(src)) std::memcpy(p, src, static_cast<size_t>(n) * sizeof(T));
    } else {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) p[i] = store_as<S>(src[i]);
    }
  });
}

template <typename T>
[[gnu::always_inline]] inline void narrow(DType dtype, T* v, int64_t n) {
  visit_storage(dtype, [&](auto tag) __attribute__((always_inline)) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, T>) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) v[i] = load_as<T>(store_as<S>(v[i]));
    }
  });
}

}  // namespace

#define MAXC_ELEM_IO(T)                                                                                     \
  MAXC_SIMD_CLONES void load_run(DType src, const void* base, int64_t offset, int64_t stride, int64_t n,    \
                                 T* dst) {                                                                  \
    load(src, base, offset, stride, n, dst);                                                                \
  }                                                                                                         \
  MAXC_SIMD_CLONES void store_run(DType dst, void* base, int64_t offset, const T* src, int64_t n) {         \
    store(dst, base, offset, src, n);                                                                       \
  }                                                                                                         \
  MAXC_SIMD_CLONES void narrow_run(DType dtype, T* v, int64_t n) { narrow(dtype, v, n); }

MAXC_ELEM_IO(float)
MAXC_ELEM_IO(double)
MAXC_ELEM_IO(int64_t)
MAXC_ELEM_IO(uint64_t)

#undef MAXC_ELEM_IO

}  // namespace maxc::cpu::elem
