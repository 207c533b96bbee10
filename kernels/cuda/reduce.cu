// sum, mean, max and min along one axis, with the policies of common/reduce_ops.cuh. The host
// views the input as [outer, axis_size, inner] and picks one of two shapes:
//   reduce_rows     inner == 1: one block per row, its threads stride along the row and
//                   combine through a block reduction;
//   reduce_columns  inner > 1: one thread per (outer, inner) column walking down the axis,
//                   so a warp's reads are consecutive in memory.
// Each writes y as [outer, inner] (keepdim is only a shape to the host).
#include "common/block_reduce.cuh"
#include "common/launch.cuh"
#include "common/reduce_ops.cuh"

namespace maxc {
namespace gpu {

template <class R>
struct Combine {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return R::combine(a, b);
  }
};

template <class R, class S>
__global__ void reduce_rows(const S* __restrict__ x, S* __restrict__ y, i64 rows, i64 axis_size) {
  typedef typename R::A A;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const S* xr = x + row * axis_size;
    A acc = R::identity();
    for (i64 j = threadIdx.x; j < axis_size; j += blockDim.x) acc = R::combine(acc, R::load(xr[j]));
    acc = block_reduce(acc, Combine<R>(), R::identity());
    if (threadIdx.x == 0) y[row] = R::finish(acc, axis_size);
  }
}

template <class R, class S>
__global__ void reduce_columns(const S* __restrict__ x, S* __restrict__ y, i64 outer, i64 axis_size, i64 inner) {
  typedef typename R::A A;
  for (i64 i = first_index(); i < outer * inner; i += index_step()) {
    const i64 o = i / inner, in = i % inner;
    // An offset, not a pointer: an empty axis may come with a null x.
    const i64 base = o * axis_size * inner + in;
    A acc = R::identity();
    for (i64 j = 0; j < axis_size; ++j) acc = R::combine(acc, R::load(x[base + j * inner]));
    y[i] = R::finish(acc, axis_size);
  }
}

}  // namespace gpu
}  // namespace maxc
