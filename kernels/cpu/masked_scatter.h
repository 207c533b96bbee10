// torch's masked_scatter on bytes: output = input, then each position where the mask holds
// (in row-major order) takes the next element of `updates`.
#pragma once

#include <cstdint>
#include <span>

namespace maxc::cpu {

// `dims` is the input's shape; mask_strides the mask's element strides against it (0 where it
// broadcasts). Returns how many positions the mask holds; past `num_updates` of them the
// positions keep the input's element (the caller reports the shortfall).
int64_t masked_scatter(const void* input, const uint8_t* mask, const void* updates, void* output,
                       std::span<const int64_t> dims, std::span<const int64_t> mask_strides, int64_t element_bytes,
                       int64_t num_updates);

}  // namespace maxc::cpu
