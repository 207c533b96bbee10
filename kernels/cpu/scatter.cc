#include "kernels/cpu/scatter.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/parallel.h"

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
template <typename W, typename T>
int64_t scatter_typed(const W* upd, const T* idx, W* out, std::span<const int64_t> in_dims,
                      std::span<const int64_t> upd_dims, int64_t axis) {
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
        out[base + i * axis_stride + q_off] = upd[p];
      }
    }
    if (local_bad) bad += local_bad;
  });
  return bad.load();
}

template <typename T>
int64_t scatter_nd_typed(const uint8_t* upd, const T* idx, uint8_t* out, std::span<const int64_t> dims, int64_t count,
                         int64_t slice) {
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
      std::memcpy(out + pos * slice + lo, upd + n * slice + lo, static_cast<size_t>(hi - lo));
    }
    if (begin == 0) bad += local_bad;  // every share meets the same bad tuples; count them once
  });
  return bad.load();
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

int64_t scatter(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                int32_t elem_bytes, std::span<const int64_t> in_dims, std::span<const int64_t> upd_dims, int64_t axis) {
  int64_t elements = 1, num_updates = 1;
  for (int64_t d : in_dims) elements *= d;
  for (int64_t d : upd_dims) num_updates *= d;
  copy_input(input, output, elements * elem_bytes);
  if (num_updates == 0) return 0;
  int64_t bad = 0;
  with_width(elem_bytes, [&](auto w) {
    using W = decltype(w);
    with_index_type(index_type, [&](auto t) {
      using T = decltype(t);
      bad = scatter_typed(static_cast<const W*>(updates), static_cast<const T*>(indices), static_cast<W*>(output),
                          in_dims, upd_dims, axis);
    });
  });
  return bad;
}

int64_t scatter_nd(const void* input, const void* updates, const void* indices, DType index_type, void* output,
                   std::span<const int64_t> indexed_dims, int64_t count, int64_t slice_bytes) {
  int64_t slices = 1;
  for (int64_t d : indexed_dims) slices *= d;
  copy_input(input, output, slices * slice_bytes);
  if (count == 0 || slice_bytes == 0) return 0;
  int64_t bad = 0;
  with_index_type(index_type, [&](auto t) {
    using T = decltype(t);
    bad = scatter_nd_typed(static_cast<const uint8_t*>(updates), static_cast<const T*>(indices),
                           static_cast<uint8_t*>(output), indexed_dims, count, slice_bytes);
  });
  return bad;
}

}  // namespace maxc::cpu
