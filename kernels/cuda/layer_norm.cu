// layer_norm over the last axis of a contiguous [rows, cols] input, with gamma and beta of
// [cols]: one block per row, computed in float (double for float64). The variance is the
// CPU's "corrected two-pass" one (kernels/cpu/norm_layer.cc): a rough mean first, then sums
// centred on it that also correct the mean, so rows with a large mean keep their precision.
//
// add_layer_norm (compiler/fuse_layer_norm.cc) first writes the row's x + residual, rounded
// to the storage type as the CPU's is, into the sum output (or into y when the sum is not
// an output), then normalizes that row. Every pass hands thread t the same elements
// (j = t, t + blockDim.x, ...), so a thread only reads back what it wrote itself, and y may
// be x.
#include "common/block_reduce.cuh"
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

template <class S>
__device__ void layer_norm_row(const S* xr, const S* __restrict__ gamma, const S* __restrict__ beta, S* yr,
                               i64 cols, double epsilon) {
  typedef typename ComputeOf<S>::type C;
  const C inv_n = C(1) / static_cast<C>(cols);
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

template <class S>
__global__ void layer_norm(const S* __restrict__ x, const S* __restrict__ gamma, const S* __restrict__ beta,
                           S* __restrict__ y, i64 rows, i64 cols, double epsilon) {
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x)
    layer_norm_row(x + row * cols, gamma, beta, y + row * cols, cols, epsilon);
}

// residual_stride: cols, or 0 for one residual row shared by every row. sum: null when the
// fused node has no sum output.
template <class S>
__global__ void add_layer_norm(const S* x, const S* __restrict__ residual, i64 residual_stride,
                               const S* __restrict__ gamma, const S* __restrict__ beta, S* y, S* sum, i64 rows,
                               i64 cols, double epsilon) {
  typedef typename ComputeOf<S>::type C;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const S* xr = x + row * cols;
    const S* rr = residual + row * residual_stride;
    S* yr = y + row * cols;
    S* sr = sum ? sum + row * cols : yr;
    for (i64 j = threadIdx.x; j < cols; j += blockDim.x) sr[j] = store_as<S>(load_as<C>(xr[j]) + load_as<C>(rr[j]));
    layer_norm_row(sr, gamma, beta, yr, cols, epsilon);
  }
}

}  // namespace gpu
}  // namespace maxc
