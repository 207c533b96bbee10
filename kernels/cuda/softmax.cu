// softmax and logsoftmax over one axis of a contiguous [outer, cols, inner] input: one block
// per row (the cols elements of one (outer, inner) pair, inner apart; inner is 1 for the last
// axis), three passes like the CPU's (the row's maximum, the sum of exp(x - max), the
// output), computed in float (double for float64). A row that holds a NaN gives NaNs.
#include "common/block_reduce.cuh"
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

template <class S, bool kLog>
__global__ void softmax_rows(const S* __restrict__ x, S* __restrict__ y, i64 rows, i64 cols, i64 inner) {
  typedef typename ComputeOf<S>::type C;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 base = row / inner * cols * inner + row % inner;
    const S* xr = x + base;
    S* yr = y + base;
    C m = math::lowest<C>();
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) m = op::Max()(load_as<C>(xr[j * inner]), m);
    m = block_reduce(m, op::Max(), math::lowest<C>());
    C sum = C(0);
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) sum += math::exp(load_as<C>(xr[j * inner]) - m);
    sum = block_reduce(sum, op::Add(), C(0));
    if constexpr (kLog) {
      const C log_sum = math::log(sum);
      for (i64 j = threadIdx.x; j < cols; j += blockDim.x)
        yr[j * inner] = store_as<S>(load_as<C>(xr[j * inner]) - m - log_sum);
    } else {
      const C inv = C(1) / sum;
      for (i64 j = threadIdx.x; j < cols; j += blockDim.x)
        yr[j * inner] = store_as<S>(math::exp(load_as<C>(xr[j * inner]) - m) * inv);
    }
  }
}

}  // namespace gpu
}  // namespace maxc
