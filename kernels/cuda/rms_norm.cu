// rms_norm over the last axis of a contiguous [rows, cols] input with a weight of [cols]:
// y = x / sqrt(mean(x^2) + epsilon) * (weight + weight_offset), one block per row, computed
// in float (double for float64). multiply_before_cast is MAX's RMSNorm switch, with the
// CPU's meaning (kernels/cpu/norm_rms.cc): nonzero multiplies in the compute type and rounds
// once; zero rounds the normalized x and the offset weight to the storage type first, as a
// graph that cast before multiplying would.
#include "common/block_reduce.cuh"
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

template <class S>
__global__ void rms_norm(const S* __restrict__ x, const S* __restrict__ weight, S* __restrict__ y, i64 rows,
                         i64 cols, double epsilon, double weight_offset, i32 multiply_before_cast) {
  typedef typename ComputeOf<S>::type C;
  const C offset = static_cast<C>(weight_offset);
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const S* xr = x + row * cols;
    S* yr = y + row * cols;
    C sq = C(0);
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) {
      const C v = load_as<C>(xr[j]);
      sq += v * v;
    }
    const C mean_square = block_reduce(sq, op::Add(), C(0)) / static_cast<C>(cols);
    const C scale = C(1) / math::sqrt(mean_square + static_cast<C>(epsilon));
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) {
      const C v = load_as<C>(xr[j]) * scale, w = load_as<C>(weight[j]) + offset;
      yr[j] = multiply_before_cast ? store_as<S>(v * w) : store_as<S>(narrow_to<S>(v) * narrow_to<S>(w));
    }
  }
}

}  // namespace gpu
}  // namespace maxc
