// scatter (ONNX ScatterElements) and scatter_nd over an output that already holds a copy of
// the input. Where two updates land on one element the CPU applies them in the updates'
// row-major order (the later one wins, or each is combined with what is there); these
// kernels keep that order exactly, with no atomics, by giving every destination element to
// one thread that walks its updates in order:
//   - scatter: updates that differ off the axis never collide, so a thread takes one
//     position off the axis and walks the axis;
//   - scatter_nd: any two tuples may collide, so a thread takes one element of the slice and
//     walks every update.
// So add, mul, max and min give the CPU's results bit for bit, floats included. An index out
// of range is skipped and sets *bad_index, which the host reads back to fail the call.
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/launch.cuh"
#include "common/layout.cuh"

namespace maxc {
namespace gpu {

// How an update meets the element it lands on. The reductions compute in the dtype's
// compute type and round back after each update (as the CPU does); integers wrap; max and
// min propagate NaN (numpy's maximum and minimum).
struct ScatterAssign {
  template <class S>
  __device__ __forceinline__ static S apply(S, S update) {
    return update;
  }
};

#define MAXC_SCATTER_REDUCTION(Name, body)                                           \
  struct Name {                                                                      \
    template <class S>                                                               \
    __device__ __forceinline__ static S apply(S there, S update) {                   \
      typedef typename ComputeOf<S>::type C;                                         \
      const C a = load_as<C>(there), b = load_as<C>(update);                         \
      return store_as<S>(combine(a, b));                                             \
    }                                                                                \
    template <class C>                                                               \
    __device__ __forceinline__ static C combine(C a, C b) body                       \
  };

MAXC_SCATTER_REDUCTION(ScatterAdd, {
  if constexpr (IsFloat<C>::value) return a + b;
  else return op::wrap_add(a, b);
})
MAXC_SCATTER_REDUCTION(ScatterMul, {
  if constexpr (IsFloat<C>::value) return a * b;
  else return op::wrap_mul(a, b);
})
MAXC_SCATTER_REDUCTION(ScatterMax, {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
})
MAXC_SCATTER_REDUCTION(ScatterMin, {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
})
#undef MAXC_SCATTER_REDUCTION

// updates and indices [g.upd_dims], y [.., g.axis_dim, ..] with strides g.out_strides:
// y[p with p[axis] = indices[p]] = R(y[..], updates[p]) for every position p of updates.
template <class S, class I, class R>
__global__ void scatter_elements(const S* __restrict__ updates, const I* __restrict__ indices, S* __restrict__ y,
                                 ScatterGeometry g, i32* __restrict__ bad_index) {
  i64 inner = 1, off_axis = 1;
  for (int d = 0; d < g.rank; ++d) {
    if (d > g.axis) inner *= g.upd_dims[d];
    if (d != g.axis) off_axis *= g.upd_dims[d];
  }
  const i64 along = g.upd_dims[g.axis], axis_stride = g.out_strides[g.axis];
  for (i64 t = first_index(); t < off_axis; t += index_step()) {
    i64 rest = t, base = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      if (d == g.axis) continue;
      base += (rest % g.upd_dims[d]) * g.out_strides[d];
      rest /= g.upd_dims[d];
    }
    const i64 first = (t / inner) * along * inner + t % inner;  // position of (.., 0, ..) in updates
    for (i64 a = 0; a < along; ++a) {
      const i64 p = first + a * inner;
      const i64 i = wrap_index(indices[p], g.axis_dim);
      if (i < 0) {
        *bad_index = 1;
        continue;
      }
      S& there = y[base + i * axis_stride];
      there = R::apply(there, updates[p]);
    }
  }
}

// y as [dims.dims[0..k), slice], indices [count, k], updates [count, slice]:
// y[indices[n]] = R(y[indices[n]], updates[n]) for n in order.
template <class S, class I, class R>
__global__ void scatter_nd(const S* __restrict__ updates, const I* __restrict__ indices, S* __restrict__ y,
                           IndexedDims dims, i64 count, i64 slice, i32* __restrict__ bad_index) {
  for (i64 s = first_index(); s < slice; s += index_step()) {
    for (i64 n = 0; n < count; ++n) {
      const I* tuple = indices + n * dims.k;
      i64 pos = 0;
      bool ok = true;
      for (int j = 0; j < dims.k && ok; ++j) {
        const i64 v = wrap_index(tuple[j], dims.dims[j]);
        ok = v >= 0;
        pos = pos * dims.dims[j] + v;
      }
      if (!ok) {
        *bad_index = 1;
        continue;
      }
      S& there = y[pos * slice + s];
      there = R::apply(there, updates[n * slice + s]);
    }
  }
}

}  // namespace gpu
}  // namespace maxc
