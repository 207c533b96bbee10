// The one data-movement kernel behind most shape and layout ops: a dense row-major output
// whose every element is read from a strided position of the source. Permute and transpose
// (permuted strides), slice_tensor (an offset and stepped, possibly negative strides),
// broadcast_to and tile (zero strides) and repeat_interleave with a constant count are all
// one StridedCopy; only the plan differs. Elements are moved as opaque 1/2/4/8-byte words,
// so each loop exists once per width, whatever the dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace maxc::cpu {

struct StridedCopy {
  enum class Kind {
    kEmpty,      // nothing to write
    kContiguous, // one memcpy
    kRows,       // innermost source stride 1: a memcpy per row
    kFillRows,   // innermost source stride 0: each row repeats one element
    kTranspose,  // innermost source stride > 1 but another axis is contiguous: blocked tiles
    kGather,     // anything else: an element at a time
  };
  Kind kind = Kind::kEmpty;
  int32_t elem_bytes = 0;
  // The output's dims with size-1 axes dropped and mergeable neighbours merged; the source
  // stride (in elements) of each. The output is dense, so its strides follow from dims.
  std::vector<int64_t> dims;
  std::vector<int64_t> src_strides;
  int64_t src_offset = 0;  // elements from the source pointer to element [0, 0, ...]
  int64_t num_elements = 0;
  int32_t transpose_axis = -1;  // kTranspose: the output axis that is contiguous in the source
};

// `dims` are the output's, `src_strides` the source element stride along each output axis.
// `elem_bytes` must be 1, 2, 4 or 8 (the caller checks the dtype).
StridedCopy plan_strided_copy(int32_t elem_bytes, std::span<const int64_t> dims,
                              std::span<const int64_t> src_strides, int64_t src_offset = 0);

// Writes plan.num_elements elements to dst. src and dst must not overlap.
void strided_copy(const StridedCopy& plan, const void* src, void* dst);

// The dense row-major strides (in elements) of `dims`.
std::vector<int64_t> dense_strides(std::span<const int64_t> dims);

// Writes `count` copies of the `elem_bytes`-wide word held in the low bytes of `pattern`.
void fill_elements(void* dst, int64_t count, int32_t elem_bytes, uint64_t pattern);

// memcpy of n bytes where n is often one element: the common widths become one move instead
// of a library call that would cost more than the copy.
inline void copy_bytes(void* dst, const void* src, int64_t n) {
  switch (n) {
    case 1: std::memcpy(dst, src, 1); return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    default: std::memcpy(dst, src, static_cast<size_t>(n));
  }
}

}  // namespace maxc::cpu
