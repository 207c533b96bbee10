// layer_norm over the last axis of a contiguous [rows, cols] input, with gamma and beta of
// [cols]: one block per row, computed in float (double for float64). The variance is the
// CPU's "corrected two-pass" one (kernels/cpu/norm_layer.cc): a rough mean first, then sums
// centred on it that also correct the mean, so rows with a large mean keep their precision.
#include "common/block_reduce.cuh"
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

template <class S>
__global__ void layer_norm(const S* __restrict__ x, const S* __restrict__ gamma, const S* __restrict__ beta,
                           S* __restrict__ y, i64 rows, i64 cols, double epsilon) {
  typedef typename ComputeOf<S>::type C;
  const C inv_n = C(1) / static_cast<C>(cols);
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const S* xr = x + row * cols;
    S* yr = y + row * cols;
    C s0 = C(0);
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) s0 += load_as<C>(xr[j]);
    const C rough_mean = block_reduce(s0, op::Add(), C(0)) * inv_n;
    C s1 = C(0), s2 = C(0);
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) {
      const C c = load_as<C>(xr[j]) - rough_mean;
      s1 += c;
      s2 += c * c;
    }
    s1 = block_reduce(s1, op::Add(), C(0));
    s2 = block_reduce(s2, op::Add(), C(0));
    const C shift = s1 * inv_n;
    const C mean = rough_mean + shift;
    const C centred_var = s2 * inv_n - shift * shift;
    const C var = centred_var > C(0) ? centred_var : C(0);
    const C rstd = C(1) / math::sqrt(var + static_cast<C>(epsilon));
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x)
      yr[j] = store_as<S>((load_as<C>(xr[j]) - mean) * rstd * load_as<C>(gamma[j]) + load_as<C>(beta[j]));
  }
}

}  // namespace gpu
}  // namespace maxc
