// The block-quantized ops on GGUF encodings (common/quant_blocks.cuh: QuantQ4_0, QuantQ4_K,
// QuantQ5_K, QuantQ6_K, QuantQ8_0), the CPU's dequantize and qmatmul (kernels/cpu):
//   - dequantize_rows: every element of the packed blocks decoded to float32, one thread per
//     output element, grid-stride. A thread per element rather than per block keeps the
//     writes of a warp contiguous, and the element's bits are the CPU reference's;
//   - qmatmul_rows: y[m, n] = sum_k x[m, k] * w(n, k) with w's rows encoded (one row of k per
//     output column, as GGUF stores them). One block per (column, group of kQmatmulRows rows
//     of x): its threads stride over k, decode each weight element once for the group's rows
//     and sum in float, then reduce across the block. Unlike the CPU, which quantizes x to 8
//     bits and takes integer dot products, this multiplies x as it is with the exactly decoded
//     weights: the result is closer to x · dequantize(w)ᵀ than the CPU's, not the same bits.
// Simple rather than fast: each element re-reads its block's scales (from cache), and x is
// read from global memory by every column's block.
#include "common/block_reduce.cuh"
#include "common/launch.cuh"
#include "common/quant_blocks.cuh"

namespace maxc {
namespace gpu {

// Rows of x that one qmatmul block computes, reusing each decoded weight element for them.
constexpr int kQmatmulRows = 4;

struct QuantAdd {
  MAXC_HD float operator()(float a, float b) const { return a + b; }
};

// x: the packed blocks of `elements` decoded elements (rows of whole blocks follow each other,
// so the rows need not be told apart); y: float32 [elements].
template <class Q>
__global__ void dequantize_rows(const u8* __restrict__ x, float* __restrict__ y, i64 elements) {
  for (i64 e = first_index(); e < elements; e += index_step()) {
    const i64 block = e / Q::kElements;
    y[e] = Q::value(x + block * Q::kBytes, static_cast<int>(e - block * Q::kElements));
  }
}

// x: float32 [m, k]; w: [n, k / Q::kElements blocks]; y: float32 [m, n]. k is a multiple of
// Q::kElements (0 writes zeros). Launch whole warps (256 threads): block_reduce needs them.
template <class Q>
__global__ void qmatmul_rows(const float* __restrict__ x, const u8* __restrict__ w, float* __restrict__ y, i64 m,
                             i64 k, i64 n) {
  const i64 row_bytes = k / Q::kElements * Q::kBytes;
  const i64 groups = (m + kQmatmulRows - 1) / kQmatmulRows;
  // Consecutive blocks take consecutive columns of the same rows, so x stays in cache.
  for (i64 task = blockIdx.x; task < groups * n; task += gridDim.x) {  // the same trip count for the whole block
    const i64 col = task % n, first_row = task / n * kQmatmulRows;
    const int rows = m - first_row < kQmatmulRows ? static_cast<int>(m - first_row) : kQmatmulRows;
    const u8* wr = w + col * row_bytes;
    const float* xr = x + first_row * k;
    float acc[kQmatmulRows] = {};
    for (i64 e = threadIdx.x; e < k; e += blockDim.x) {
      const i64 block = e / Q::kElements;
      const float v = Q::value(wr + block * Q::kBytes, static_cast<int>(e - block * Q::kElements));
      for (int r = 0; r < rows; ++r) acc[r] += xr[r * k + e] * v;
    }
    // Every thread reduces every slot, whatever `rows` is: block_reduce is a barrier.
    for (int r = 0; r < kQmatmulRows; ++r) {
      const float sum = block_reduce(acc[r], QuantAdd(), 0.0f);
      if (threadIdx.x == 0 && r < rows) y[(first_row + r) * n + col] = sum;
    }
  }
}

}  // namespace gpu
}  // namespace maxc
