// How kernels walk a tensor: a row-major output Shape and, per operand, a Layout that says
// where output element i lives in that operand (broadcast dims have stride 0; transposed,
// sliced and permuted views have their own strides). Host code fills these very structs
// (this header compiles on the host) and passes them by value as kernel parameters, so
// their layout is the one the kernels read. Strides count elements, not bytes.
#ifndef MAXC_GPU_INDEXING_CUH
#define MAXC_GPU_INDEXING_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

// Ranks above this are collapsed by the host before launch (adjacent dims that are
// contiguous in every operand merge).
constexpr int kMaxRank = 8;

struct Shape {
  i64 numel;
  i32 rank;
  i32 pad_;
  i64 dims[kMaxRank];
};

struct Layout {
  i64 strides[kMaxRank];
  i32 dense;  // nonzero: element i is at offset i, whatever the strides say
  i32 pad_;
};

// The offset of output element `i` in an operand with `strides`. 32-bit division when the
// tensor allows it: 64-bit division is several times slower on GPUs.
MAXC_HD i64 strided_offset(i64 i, const Shape& shape, const i64* strides) {
  i64 offset = 0;
  if (shape.numel <= 0x7fffffffll) {
    u32 rest = static_cast<u32>(i);
    for (int d = shape.rank - 1; d > 0; --d) {
      const u32 extent = static_cast<u32>(shape.dims[d]);
      const u32 q = rest / extent;
      offset += static_cast<i64>(rest - q * extent) * strides[d];
      rest = q;
    }
    return shape.rank > 0 ? offset + static_cast<i64>(rest) * strides[0] : 0;
  }
  for (int d = shape.rank - 1; d > 0; --d) {
    const i64 q = i / shape.dims[d];
    offset += (i - q * shape.dims[d]) * strides[d];
    i = q;
  }
  return shape.rank > 0 ? offset + i * strides[0] : 0;
}

MAXC_HD i64 offset_of(i64 i, const Shape& shape, const Layout& layout) {
  return layout.dense ? i : strided_offset(i, shape, layout.strides);
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_INDEXING_CUH
