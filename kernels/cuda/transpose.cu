// Copies that rearrange elements: a general strided copy (permute, transpose, slice,
// broadcast_to and any non-contiguous view made contiguous) and a tiled transpose of the two
// innermost dims, the common case that the general copy serves badly: its reads or its writes
// stride through memory, where the tiled one stages a 32x32 tile in shared memory so both are
// coalesced. Values move as raw words of their width (u8, u16, u32, u64).
#include "common/indexing.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

template <class W>
__global__ void copy_strided(const W* __restrict__ x, Layout x_layout, W* __restrict__ y, Shape shape) {
  for (i64 i = first_index(); i < shape.numel; i += index_step()) y[i] = x[offset_of(i, shape, x_layout)];
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: each thread moves kTile / kTileRows elements

// y[b][c][r] = x[b][r][c] for x of shape [batch, rows, cols]. Launch with blocks of
// (kTile, kTileRows) threads and a grid of (ceil(cols / kTile), ceil(rows / kTile), batch),
// the batch in z (at most 65535; the host splits larger batches).
template <class W>
__global__ void transpose_tiles(const W* __restrict__ x, W* __restrict__ y, i64 rows, i64 cols) {
  __shared__ W tile[kTile][kTile + 1];  // +1: the column reads hit distinct banks
  const i64 batch = blockIdx.z;
  const i64 r0 = static_cast<i64>(blockIdx.y) * kTile, c0 = static_cast<i64>(blockIdx.x) * kTile;
  const W* xb = x + batch * rows * cols;
  W* yb = y + batch * rows * cols;
  for (int k = threadIdx.y; k < kTile; k += kTileRows) {
    const i64 r = r0 + k, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[k][threadIdx.x] = xb[r * cols + c];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < kTile; k += kTileRows) {
    const i64 c = c0 + k, r = r0 + threadIdx.x;
    if (r < rows && c < cols) yb[c * rows + r] = tile[threadIdx.x][k];
  }
}

}  // namespace gpu
}  // namespace maxc
