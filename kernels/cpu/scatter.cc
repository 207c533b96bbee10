#include "kernels/cpu/scatter.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/reduce_element.h"

namespace maxc::cpu {
namespace {

void copy_input(const void* input, void* output, int64_t bytes) {
  if (input == output || bytes == 0) return;
  const int64_t n = bytes;
  const int64_t dims[] = {n};
  const int64_t strides[] = {1};
  strided_copy(plan_strided_copy(1, dims, strides), input, output);
}

// Updates are walked in row-major order by a cursor that gives each position's offset in the
// output with the axis coordinate left out; the index adds it. Positions that differ off the
// axis never collide, so threads split the axes before `axis` and each keeps the order
// along it.
template <typename W, typename T, typename Combine>
int64_t scatter_typed(const W* upd, const T* idx, W* out, std::span<const int64_t> in_dims,
                      std::span<const int64_t> upd_dims, int64_t axis, Combine combine) {
  const size_t rank = in_dims.size();
  const std::vector<int64_t> out_strides = dense_strides(in_dims);
  int64_t outer = 1, block = 1;
  for (size_t d = 0; d < rank; ++d) (static_cast<int64_t>(d) < axis ? outer : block) *= upd_dims[d];
  const int64_t axis_dim = in_dims[axis], axis_stride = out_strides[axis];
  const bool same_inner = std::equal(in_dims.begin() + axis + 1, in_dims.end(), upd_dims.begin() + axis + 1);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < rank; ++d) inner *= upd_dims[d];

  std::atomic<int64_t> bad{0};
  parallel_for(outer, block, [&](int64_t begin, int64_t end) {
    int64_t local_bad = 0;
    for (int64_t o = begin; o < end; ++o) {
      // The output offset of updates position (o, 0, 0...).
      int64_t base = 0;
      for (int64_t d = axis - 1, rest = o; d >= 0; --d) {
        base += (rest % upd_dims[d]) * out_strides[d];
        rest /= upd_dims[d];
      }
      for (int64_t p = o * block; p < (o + 1) * block; ++p) {
        const int64_t q = p % inner;  // position inside the axes after `axis`
        int64_t q_off = q;
        if (!same_inner) {
          q_off = 0;
          for (int64_t d = static_cast<int64_t>(rank) - 1, rest = q; d > axis; --d) {
            q_off += (rest % upd_dims[d]) * out_strides[d];
            rest /= upd_dims[d];
          }
        }
        const int64_t i = wrap_index(idx[p], axis_dim);
        if (i < 0) {
          ++local_bad;
          continue;
        }
        combine(out[base + i * axis_stride + q_off], upd[p]);
      }
    }
    if (local_bad) bad += local_bad;
  });
  return bad.load();
}

// `write(dst, src, bytes)` puts one update's share of a slice in place. The shares are whole
// elements: kChunk is a multiple of every element width.
template <typename T, typename Write>
int64_t scatter_nd_typed(const uint8_t* upd, const T* idx, uint8_t* out, std::span<const int64_t> dims, int64_t count,
                         int64_t slice, Write write) {
  const size_t k = dims.size();
  std::vector<int64_t> strides(k, 1);  // in slices
  for (size_t j = k; j-- > 1;) strides[j - 1] = strides[j] * dims[j];
  // Threads split each slice's bytes, and each walks all updates in order over its share,
  // so a repeated index still ends with the last update.
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = std::max<int64_t>(1, (slice + kChunk - 1) / kChunk);
  std::atomic<int64_t> bad{0};
  parallel_for(chunks, count * std::min(slice, kChunk) / 4 + 1, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kChunk, hi = std::min(slice, end * kChunk);
    int64_t local_bad = 0;
    for (int64_t n = 0; n < count; ++n) {
      const T* tuple = idx + n * static_cast<int64_t>(k);
      int64_t pos = 0;
      bool ok = true;
      for (size_t j = 0; j < k && ok; ++j) {
        const int64_t i = wrap_index(tuple[j], dims[j]);
        ok = i >= 0;
        pos += i * strides[j];
      }
      if (!ok) {
        ++local_bad;
        continue;
      }
      write(out + pos * slice + lo, upd + n * slice + lo, hi - lo);
    }
    if (begin == 0) bad += local_bad;  // every share meets the same bad tuples; count them once
  });
  return bad.load();
}

// ---- how an update meets the element it lands on ----

struct Assign {
  template <typename W>
  MAXC_KERNEL_INLINE void operator()(W& out, const W& upd) const {
    out = upd;
  }
};

// Integers through their unsigned type: wrapping, never signed overflow.
template <typename C>
MAXC_KERNEL_INLINE C wrapping_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename C>
MAXC_KERNEL_INLINE C wrapping_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <ScatterReduction R, typename C>
MAXC_KERNEL_INLINE C reduce(C a, C b) {
  if constexpr (R == ScatterReduction::kAdd) {
    return wrapping_add(a, b);
  } else if constexpr (R == ScatterReduction::kMul) {
    return wrapping_mul(a, b);
  } else {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if constexpr (R == ScatterReduction::kMax) return a < b ? b : a;
    else return b < a ? b : a;
  }
}

template <typename E, ScatterReduction R>
struct Reduce {
  MAXC_KERNEL_INLINE void operator()(E& out, const E& upd) const { out = store<E>(reduce<R>(load(out), load(upd))); }
};

struct CopyBytes {
  void operator()(uint8_t* dst, const uint8_t* src, int64_t bytes) const {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
};

template <typename E, typename Combine>
struct CombineBytes {
  Combine combine;
  void operator()(uint8_t* dst, const uint8_t* src, int64_t bytes) const {
    E* d = reinterpret_cast<E*>(dst);
    const E* s = reinterpret_cast<const E*>(src);
    for (int64_t i = 0, n = bytes / static_cast<int64_t>(sizeof(E)); i < n; ++i) combine(d[i], s[i]);
  }
};

// Calls fn(E{}, combine) with the element type a reduction over `dtype` works on.
template <typename Fn>
void with_reduction(ScatterReduction r, DType dtype, Fn&& fn) {
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) {
    using E = typename decltype(tag)::type;
    switch (r) {
      case ScatterReduction::kAdd: return fn(E{}, Reduce<E, ScatterReduction::kAdd>{});
      case ScatterReduction::kMul: return fn(E{}, Reduce<E, ScatterReduction::kMul>{});
      case ScatterReduction::kMax: return fn(E{}, Reduce<E, ScatterReduction::kMax>{});
      case ScatterReduction::kMin: return fn(E{}, Reduce<E, ScatterReduction::kMin>{});
      case ScatterReduction::kNone: return;
    }
  });
}

template <typename Fn>
void with_width(int32_t elem_bytes, Fn&& fn) {
  switch (elem_bytes) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    default: return fn(uint64_t{});
  }
}

}  // namespace

bool scatter_reduction_supports(DType dtype) {
  return visit_dtype<DTypeSet::kNumeric>(dtype, [](auto) {});
}

int64_t scatter(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                int32_t elem_bytes, std::span<const int64_t> in_dims, std::span<const int64_t> upd_dims, int64_t axis,
                ScatterReduction reduction, DType dtype) {
  int64_t elements = 1, num_updates = 1;
  for (int64_t d : in_dims) elements *= d;
  for (int64_t d : upd_dims) num_updates *= d;
  copy_input(input, output, elements * elem_bytes);
  if (num_updates == 0) return 0;
  int64_t bad = 0;
  auto run = [&](auto w, auto combine) {
    using W = decltype(w);
    with_index_type(index_type, [&](auto t) {
      using T = decltype(t);
      bad = scatter_typed(static_cast<const W*>(updates), static_cast<const T*>(indices), static_cast<W*>(output),
                          in_dims, upd_dims, axis, combine);
    });
  };
  if (reduction == ScatterReduction::kNone) with_width(elem_bytes, [&](auto w) { run(w, Assign{}); });
  else with_reduction(reduction, dtype, run);
  return bad;
}

int64_t scatter_nd(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                   std::span<const int64_t> indexed_dims, int64_t count, int64_t slice_bytes,
                   ScatterReduction reduction, DType dtype) {
  int64_t slices = 1;
  for (int64_t d : indexed_dims) slices *= d;
  copy_input(input, output, slices * slice_bytes);
  if (count == 0 || slice_bytes == 0) return 0;
  int64_t bad = 0;
  auto run = [&](auto write) {
    with_index_type(index_type, [&](auto t) {
      using T = decltype(t);
      bad = scatter_nd_typed(static_cast<const uint8_t*>(updates), static_cast<const T*>(indices),
                             static_cast<uint8_t*>(output), indexed_dims, count, slice_bytes, write);
    });
  };
  if (reduction == ScatterReduction::kNone) {
    run(CopyBytes{});
  } else {
    with_reduction(reduction, dtype, [&](auto e, auto combine) {
      run(CombineBytes<decltype(e), decltype(combine)>{combine});
    });
  }
  return bad;
}

}  // namespace maxc::cpu
