// cast: every element of x converted to Out through In's compute type, with the meaning of
// common/cast.cuh (the CPU's): saturating float -> integer, wrapping integer narrowing,
// round-to-nearest-even half floats, bool as x != 0. x is read through its Layout.
#include "common/cast.cuh"
#include "common/indexing.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

template <class In, class Out>
__global__ void cast(const In* __restrict__ x, Layout x_layout, Out* __restrict__ y, Shape shape) {
  typedef typename ComputeOf<In>::type C;
  for (i64 i = first_index(); i < shape.numel; i += index_step())
    y[i] = store_as<Out>(load_as<C>(x[offset_of(i, shape, x_layout)]));
}

}  // namespace gpu
}  // namespace maxc
