#include "kernels/cpu/masked_scatter.h"

#include <cstring>
#include <vector>

namespace maxc::cpu {

int64_t masked_scatter(const void* input, const uint8_t* mask, const void* updates, void* output,
                       std::span<const int64_t> dims, std::span<const int64_t> mask_strides, int64_t element_bytes,
                       int64_t num_updates) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return 0;
  std::memcpy(output, input, static_cast<size_t>(n * element_bytes));
  auto* out = static_cast<uint8_t*>(output);
  const auto* src = static_cast<const uint8_t*>(updates);
  std::vector<int64_t> index(dims.size(), 0);
  int64_t mask_at = 0, taken = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (mask[mask_at] != 0) {
      if (taken < num_updates)
        std::memcpy(out + i * element_bytes, src + taken * element_bytes, static_cast<size_t>(element_bytes));
      ++taken;
    }
    // The next row-major position: carry through the axes, moving the mask's offset along.
    for (size_t a = dims.size(); a-- > 0;) {
      mask_at += mask_strides[a];
      if (++index[a] < dims[a]) break;
      mask_at -= mask_strides[a] * dims[a];
      index[a] = 0;
    }
  }
  return taken;
}

}  // namespace maxc::cpu
