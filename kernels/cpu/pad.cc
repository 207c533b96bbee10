#include "kernels/cpu/pad.h"

#include <cstring>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {

// Row by row over the output's last axis: a row outside the input along any outer axis is all
// fill; one inside is fill, an input row, fill.
void pad_constant(const void* src, void* dst, int32_t elem_bytes, std::span<const int64_t> in_dims,
                  std::span<const int64_t> before, std::span<const int64_t> out_dims, uint64_t pattern) {
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const int64_t w = elem_bytes;
  const size_t rank = out_dims.size();
  if (rank == 0) {
    std::memcpy(out, in, static_cast<size_t>(w));
    return;
  }
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= out_dims[i];
  const int64_t n_out = out_dims[rank - 1], n_in = in_dims[rank - 1], lead = before[rank - 1];
  if (rows == 0 || n_out == 0) return;
  const std::vector<int64_t> in_strides = dense_strides(in_dims);

  parallel_for(rows, n_out, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank - 1, 0);  // output index of row `begin`, then counted up
    for (int64_t i = static_cast<int64_t>(rank) - 2, rest = begin; i >= 0; --i) {
      index[i] = rest % out_dims[i];
      rest /= out_dims[i];
    }
    for (int64_t r = begin; r < end; ++r) {
      uint8_t* row = out + r * n_out * w;
      int64_t src_row = 0;
      bool inside = n_in > 0;
      for (size_t i = 0; i + 1 < rank && inside; ++i) {
        const int64_t k = index[i] - before[i];
        inside = k >= 0 && k < in_dims[i];
        src_row += k * in_strides[i];
      }
      if (!inside) {
        fill_elements(row, n_out, elem_bytes, pattern);
      } else {
        fill_elements(row, lead, elem_bytes, pattern);
        std::memcpy(row + lead * w, in + src_row * w, static_cast<size_t>(n_in * w));
        fill_elements(row + (lead + n_in) * w, n_out - lead - n_in, elem_bytes, pattern);
      }
      for (int64_t i = static_cast<int64_t>(rank) - 2; i >= 0; --i) {
        if (++index[i] < out_dims[i]) break;
        index[i] = 0;
      }
    }
  });
}

}  // namespace maxc::cpu
