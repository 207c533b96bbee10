#include "kernels/cpu/gather.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gather_index.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

template <typename T>
int64_t gather_typed(const uint8_t* in, const T* idx, uint8_t* out, int64_t outer, int64_t axis_dim, int64_t n,
                     int64_t slice) {
  std::atomic<int64_t> bad{0};
  parallel_for(outer * n, slice / 4 + 1, [&](int64_t begin, int64_t end) {
    int64_t local_bad = 0;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / n, k = item % n;
      const int64_t i = wrap_index(idx[k], axis_dim);
      uint8_t* dst = out + item * slice;
      if (i < 0) {
        std::memset(dst, 0, static_cast<size_t>(slice));
        ++local_bad;
      } else {
        copy_bytes(dst, in + (o * axis_dim + i) * slice, slice);
      }
    }
    if (local_bad) bad += local_bad;
  });
  return bad.load();
}

template <typename T>
int64_t gather_nd_typed(const uint8_t* in, const T* idx, uint8_t* out, int64_t batch, std::span<const int64_t> dims,
                        int64_t per_batch, int64_t slice) {
  const size_t k = dims.size();
  std::vector<int64_t> strides(k, 1);  // in slices
  for (size_t j = k; j-- > 1;) strides[j - 1] = strides[j] * dims[j];
  const int64_t batch_slices = k ? strides[0] * dims[0] : 1;
  std::atomic<int64_t> bad{0};
  parallel_for(batch * per_batch, slice / 4 + static_cast<int64_t>(k), [&](int64_t begin, int64_t end) {
    int64_t local_bad = 0;
    for (int64_t item = begin; item < end; ++item) {
      const T* tuple = idx + item * static_cast<int64_t>(k);
      int64_t pos = (item / per_batch) * batch_slices;
      bool ok = true;
      for (size_t j = 0; j < k && ok; ++j) {
        const int64_t i = wrap_index(tuple[j], dims[j]);
        ok = i >= 0;
        pos += i * strides[j];
      }
      uint8_t* dst = out + item * slice;
      if (ok) {
        copy_bytes(dst, in + pos * slice, slice);
      } else {
        std::memset(dst, 0, static_cast<size_t>(slice));
        ++local_bad;
      }
    }
    if (local_bad) bad += local_bad;
  });
  return bad.load();
}

}  // namespace

int64_t gather(const void* input, const void* indices, DType index_type, void* output, int64_t outer, int64_t axis_dim,
               int64_t num_indices, int64_t slice_bytes) {
  int64_t bad = 0;
  with_index_type(index_type, [&](auto t) {
    using T = decltype(t);
    bad = gather_typed(static_cast<const uint8_t*>(input), static_cast<const T*>(indices), static_cast<uint8_t*>(output),
                       outer, axis_dim, num_indices, slice_bytes);
  });
  return bad;
}

int64_t gather_nd(const void* input, const void* indices, DType index_type, void* output, int64_t batch,
                  std::span<const int64_t> indexed_dims, int64_t per_batch, int64_t slice_bytes) {
  int64_t bad = 0;
  with_index_type(index_type, [&](auto t) {
    using T = decltype(t);
    bad = gather_nd_typed(static_cast<const uint8_t*>(input), static_cast<const T*>(indices),
                          static_cast<uint8_t*>(output), batch, indexed_dims, per_batch, slice_bytes);
  });
  return bad;
}

}  // namespace maxc::cpu
