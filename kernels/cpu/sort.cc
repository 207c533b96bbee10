// top_k and argsort (see sort.h): each line is copied into (value, index) pairs in scratch,
// which sort with good locality, then written out.
#include "kernels/cpu/sort.h"

#include <algorithm>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/reduce_element.h"

namespace maxc::cpu {
namespace {

template <typename C>
struct Keyed {
  C value;
  int64_t index;
};

// Strict total orders over Keyed: NaN above every number; ties by index.
struct Descending {
  template <typename C>
  bool operator()(const Keyed<C>& a, const Keyed<C>& b) const {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return an && (!bn || a.index < b.index);
    if (a.value != b.value) return a.value > b.value;
    return a.index < b.index;
  }
};

struct Ascending {
  template <typename C>
  bool operator()(const Keyed<C>& a, const Keyed<C>& b) const {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return bn && (!an || a.index < b.index);
    if (a.value != b.value) return a.value < b.value;
    return a.index < b.index;
  }
};

template <typename T>
void load_line(const T* x, int64_t n, int64_t stride, Keyed<compute_t<T>>* line) {
  for (int64_t a = 0; a < n; ++a) line[a] = {load(x[a * stride]), a};
}

template <typename T>
void top_k_line(const T* x, T* values, int64_t* indices, int64_t n, int64_t stride, int64_t k,
                Keyed<compute_t<T>>* line) {
  load_line(x, n, stride, line);
  if (k < n) std::nth_element(line, line + k, line + n, Descending{});
  std::sort(line, line + k, Descending{});
  for (int64_t a = 0; a < k; ++a) {
    values[a * stride] = store<T>(line[a].value);
    indices[a * stride] = line[a].index;
  }
}

template <typename T>
void top_k(const void* xv, void* vv, int64_t* indices, int64_t outer, int64_t n, int64_t inner, int64_t k,
           void* scratch, int64_t slots) {
  const T* x = static_cast<const T*>(xv);
  T* values = static_cast<T*>(vv);
  const int64_t lines = outer * inner;
  if (lines == 0 || k == 0) return;
  slots = std::clamp<int64_t>(slots, 1, lines);
  auto* pairs = static_cast<Keyed<compute_t<T>>*>(scratch);
  const int64_t cost = (lines / slots) * n * 8;  // ~n log n compares per line
  parallel_for(slots, cost, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      for (int64_t l = lines * s / slots; l < lines * (s + 1) / slots; ++l) {
        const int64_t o = l / inner, i = l % inner;
        top_k_line(x + o * n * inner + i, values + o * k * inner + i, indices + o * k * inner + i, n, inner, k,
                   pairs + s * n);
      }
    }
  });
}

template <typename T>
void argsort(const void* xv, int64_t* indices, int64_t n, bool ascending, void* scratch) {
  auto* line = static_cast<Keyed<compute_t<T>>*>(scratch);
  load_line(static_cast<const T*>(xv), n, 1, line);
  if (ascending) {
    std::sort(line, line + n, Ascending{});
  } else {
    std::sort(line, line + n, Descending{});
  }
  for (int64_t a = 0; a < n; ++a) indices[a] = line[a].index;
}

}  // namespace

TopKFn find_top_k_kernel(DType dtype) {
  TopKFn fn = nullptr;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) { fn = &top_k<typename decltype(tag)::type>; });
  return fn;
}

ArgsortFn find_argsort_kernel(DType dtype) {
  ArgsortFn fn = nullptr;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) { fn = &argsort<typename decltype(tag)::type>; });
  return fn;
}

uint64_t sort_scratch_bytes(DType dtype, int64_t n, int64_t slots) {
  uint64_t pair = 0;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) { pair = sizeof(Keyed<compute_t<typename decltype(tag)::type>>); });
  return pair * static_cast<uint64_t>(std::max<int64_t>(n, 0)) * static_cast<uint64_t>(std::max<int64_t>(slots, 1));
}

}  // namespace maxc::cpu
