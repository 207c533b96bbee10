// What the layout and indexing kernels (layout.cu, gather.cu, gather_nd.cu, scatter.cu) share
// with the host that launches them: index wrapping, and the small geometry structs the host
// fills and passes by value (this header compiles on the host, so both read one layout).
#ifndef MAXC_GPU_LAYOUT_CUH
#define MAXC_GPU_LAYOUT_CUH

#include "indexing.cuh"
#include "platform.cuh"

namespace maxc {
namespace gpu {

// The CPU's rule (kernels/cpu/gather_index.h): a negative index counts from the end; one
// outside [-n, n) gives -1, which the kernels never follow.
template <class I>
MAXC_HD i64 wrap_index(I i, i64 n) {
  if constexpr (IsUnsignedInt<I>::value) {
    return static_cast<u64>(i) < static_cast<u64>(n) ? static_cast<i64>(i) : -1;
  } else {
    const i64 v = static_cast<i64>(i) < 0 ? static_cast<i64>(i) + n : static_cast<i64>(i);
    return v >= 0 && v < n ? v : -1;
  }
}

// pad: per output dim, how many fill elements come before the input, and the input's extent.
struct PadGeometry {
  i64 before[kMaxRank];
  i64 in_dims[kMaxRank];
};

// gather_nd and scatter_nd: the dims an index tuple addresses (k of them), row-major.
struct IndexedDims {
  i64 dims[kMaxRank];
  i32 k;
  i32 pad_;
};

// scatter: the updates' dims (also the indices'), the output's strides, and the scatter axis.
struct ScatterGeometry {
  i64 upd_dims[kMaxRank];
  i64 out_strides[kMaxRank];
  i32 rank;
  i32 axis;
  i64 axis_dim;  // the output's extent along the axis: the bound of every index
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_LAYOUT_CUH
