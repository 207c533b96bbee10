// gather along one axis: x viewed as [outer, axis_size, inner], indices as a flat list of
// `count` positions, y as [outer, count, inner]. Indices follow the CPU's rule
// (kernels/cpu/gather_index.h): negative ones count from the end, and one outside
// [-axis_size, axis_size) is never followed: its row of y is zeros and *bad_index is set to 1,
// which the host reads back to report the error (a kernel cannot throw). Values move as raw
// words of their width.
#include "common/launch.cuh"
#include "common/layout.cuh"
#include "common/platform.cuh"

namespace maxc {
namespace gpu {

template <class W, class I>
__global__ void gather(const W* __restrict__ x, const I* __restrict__ indices, W* __restrict__ y, i64 outer,
                       i64 axis_size, i64 inner, i64 count, i32* __restrict__ bad_index) {
  const i64 total = outer * count * inner;
  for (i64 i = first_index(); i < total; i += index_step()) {
    const i64 in = i % inner, rest = i / inner;
    const i64 k = rest % count, o = rest / count;
    const i64 j = wrap_index(indices[k], axis_size);
    if (j < 0) {
      y[i] = W(0);
      *bad_index = 1;  // a plain store: every writer stores the same value
    } else {
      y[i] = x[(o * axis_size + j) * inner + in];
    }
  }
}

}  // namespace gpu
}  // namespace maxc
