// The standalone elementwise kernels: unary, binary and where, one op functor
// (common/elementwise_ops.cuh) and one set of storage types per instantiation, computed in
// the input's compute type (common/cast.cuh). Operands are read through their Layouts, so
// numpy broadcasting, transposed and sliced views need no copy; the output is contiguous.
// Chains of these ops are better served by a generated fused kernel (fused_elementwise.cc),
// which calls the same functors.
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/indexing.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

// `op` comes by value so an op with parameters (Clamp's bounds) gets them at launch; the
// host passes an op without fields as an empty struct all the same (one byte).
template <class Op, class In, class Out>
__global__ void unary(const In* __restrict__ x, Layout x_layout, Out* __restrict__ y, Shape shape, Op op) {
  typedef typename ComputeOf<In>::type C;
  for (i64 i = first_index(); i < shape.numel; i += index_step())
    y[i] = store_as<Out>(op(load_as<C>(x[offset_of(i, shape, x_layout)])));
}

template <class Op, class In, class Out>
__global__ void binary(const In* __restrict__ a, Layout a_layout, const In* __restrict__ b, Layout b_layout,
                       Out* __restrict__ y, Shape shape) {
  typedef typename ComputeOf<In>::type C;
  const Op op = Op();
  for (i64 i = first_index(); i < shape.numel; i += index_step()) {
    const C va = load_as<C>(a[offset_of(i, shape, a_layout)]);
    const C vb = load_as<C>(b[offset_of(i, shape, b_layout)]);
    y[i] = store_as<Out>(op(va, vb));
  }
}

// out = condition ? x : y. The values move as raw words of their width (u8, u16, u32, u64),
// so one instantiation serves every dtype of that size.
template <class W>
__global__ void where(const bool8* __restrict__ condition, Layout c_layout, const W* __restrict__ x, Layout x_layout,
                      const W* __restrict__ y, Layout y_layout, W* __restrict__ out, Shape shape) {
  for (i64 i = first_index(); i < shape.numel; i += index_step()) {
    const bool c = condition[offset_of(i, shape, c_layout)].v != 0;
    out[i] = c ? x[offset_of(i, shape, x_layout)] : y[offset_of(i, shape, y_layout)];
  }
}

}  // namespace gpu
}  // namespace maxc
