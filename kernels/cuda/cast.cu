// cast: every element of x converted to Out through In's compute type, with the meaning of
// common/cast.cuh (the CPU's): saturating float -> integer, wrapping integer narrowing,
// round-to-nearest-even half floats and float8, bool as x != 0. x is read through its Layout.
// saturate (nonzero or 0): the cast's attribute, what a float8 Out makes of values past its
// range (common/minifloat.cuh); other types ignore it.
#include "common/cast.cuh"
#include "common/indexing.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

template <class In, class Out>
__global__ void cast(const In* __restrict__ x, Layout x_layout, Out* __restrict__ y, Shape shape, i32 saturate) {
  typedef typename ComputeOf<In>::type C;
  for (i64 i = first_index(); i < shape.numel; i += index_step())
    y[i] = store_cast<Out>(load_as<C>(x[offset_of(i, shape, x_layout)]), saturate != 0);
}

}  // namespace gpu
}  // namespace maxc
