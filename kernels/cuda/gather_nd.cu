// gather_nd: x as [batch, dims.dims[0..k), slice], indices as [batch * per_batch, k] tuples,
// y as [batch * per_batch, slice]: each tuple picks one slice of its batch. Indices follow the
// CPU's rule (common/layout.cuh wrap_index); a tuple with an index out of range is never
// followed: its slice of y is zeros and *bad_index is set to 1, which the host reads back to
// fail the call. Values move as raw words of their width.
#include "common/launch.cuh"
#include "common/layout.cuh"

namespace maxc {
namespace gpu {

template <class W, class I>
__global__ void gather_nd(const W* __restrict__ x, const I* __restrict__ indices, W* __restrict__ y, i64 batch,
                          i64 per_batch, IndexedDims dims, i64 slice, i32* __restrict__ bad_index) {
  i64 batch_slices = 1;
  for (int j = 0; j < dims.k; ++j) batch_slices *= dims.dims[j];
  const i64 total = batch * per_batch * slice;
  for (i64 i = first_index(); i < total; i += index_step()) {
    const i64 s = i % slice, item = i / slice;
    const I* tuple = indices + item * dims.k;
    i64 pos = 0;
    bool ok = true;
    for (int j = 0; j < dims.k && ok; ++j) {
      const i64 v = wrap_index(tuple[j], dims.dims[j]);
      ok = v >= 0;
      pos = pos * dims.dims[j] + v;
    }
    if (ok) {
      y[i] = x[((item / per_batch) * batch_slices + pos) * slice + s];
    } else {
      y[i] = W(0);
      *bad_index = 1;  // a plain store: every writer stores the same value
    }
  }
}

}  // namespace gpu
}  // namespace maxc
