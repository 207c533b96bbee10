// Batched matmul with the fused dense-layer epilogue (bias over the last dim, then an
// activation functor of common/elementwise_ops.cuh), C = act(A·B + bias), in shared-memory
// tiles. This is the portable kernel: it needs no vendor library and compiles for HIP too;
// cuBLASLt / hipBLASLt serve the large float shapes where they are present.
//
// A is [batch][M][K], B is [batch][K][N] (or [batch][N][K] read transposed), C is
// [batch][M][N], all row-major; an operand shared by every batch has batch stride 0. The bias
// holds N values (bias_len == N) or one (bias_len == 1); bias_len 0 means none. Launch:
// blocks of kTile x kTile threads, grid (ceil(N / kTile), ceil(M / kTile), batch).
//
// Integers accumulate in u64, where products and sums wrap as in the CPU's gemm
// (kernels/cpu/gemm.cc); the sum is stored back truncated, and the activation (none or relu)
// applies to the stored value, as there.
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"

namespace maxc {
namespace gpu {

constexpr int kMatmulTile = 16;

template <class S>
struct MatmulAccumulator {
  typedef typename Select<IsSignedInt<S>::value || IsUnsignedInt<S>::value, u64, typename ComputeOf<S>::type>::type type;
};

template <class S, class Act>
__global__ void matmul_tiled(const S* __restrict__ a, const S* __restrict__ b, const S* __restrict__ bias,
                             S* __restrict__ c, i64 m, i64 n, i64 k, i64 a_batch_stride, i64 b_batch_stride,
                             i32 b_transposed, i64 bias_len) {
  typedef typename MatmulAccumulator<S>::type C;
  __shared__ C a_tile[kMatmulTile][kMatmulTile];
  __shared__ C b_tile[kMatmulTile][kMatmulTile + 1];  // +1: column reads hit distinct banks
  const i64 batch = blockIdx.z;
  a += batch * a_batch_stride;
  b += batch * b_batch_stride;
  c += batch * m * n;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 row = static_cast<i64>(blockIdx.y) * kMatmulTile + ty;
  const i64 col = static_cast<i64>(blockIdx.x) * kMatmulTile + tx;
  C acc = C(0);
  for (i64 k0 = 0; k0 < k; k0 += kMatmulTile) {
    const i64 ak = k0 + tx, bk = k0 + ty;
    a_tile[ty][tx] = row < m && ak < k ? load_as<C>(a[row * k + ak]) : C(0);
    C bv = C(0);
    if (col < n && bk < k) bv = load_as<C>(b_transposed ? b[col * k + bk] : b[bk * n + col]);
    b_tile[ty][tx] = bv;
    __syncthreads();
    for (int kk = 0; kk < kMatmulTile; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  if (row >= m || col >= n) return;
  if (bias_len > 0) acc += load_as<C>(bias[bias_len == 1 ? 0 : col]);
  if constexpr (IsSame<C, u64>::value)
    c[row * n + col] = Act()(store_as<S>(acc));
  else
    c[row * n + col] = store_as<S>(Act()(acc));
}

}  // namespace gpu
}  // namespace maxc
