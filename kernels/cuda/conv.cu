// conv2d and fused_conv2d as an implicit GEMM per group (common/conv_params.cuh), in
// shared-memory tiles like matmul.cu's: out[m, f] = sum over taps t of x(m, t) * filter[t, f],
// where x(m, t) is the input under tap t of output pixel m, or zero in the padding. Every
// layout, group count (depthwise included), stride, dilation and padding of the CPU's direct
// kernel (kernels/cpu/conv_direct.cc) is served by the same loop; only the index math differs.
//
// The epilogue is the CPU's (kernels/cpu/conv_shape.h, ConvEpilogue), in this order:
//   out = relu?((acc + bias[f]) * scale[f] + shift[f] + residual[m, f])
// each operand optional (null). Computed in float (double for float64) whatever the storage.
// conv2d_tiled launches blocks of kConvTile x kConvTile threads; grid.x = groups * ceil(fg /
// kConvTile) column tiles, grid.y up to 65535, over which the blocks loop through the ceil(m
// / kConvTile) row tiles. conv2d_direct, for few output channels per group (depthwise), is
// one thread per output element, grid-stride.
#include "common/cast.cuh"
#include "common/conv_params.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

constexpr int kConvTile = 16;

template <class S, class C>
__device__ __forceinline__ C conv_epilogue(C acc, i64 f, i64 out_at, const S* bias, const S* scale, const S* shift,
                                           const S* residual, i32 relu) {
  if (bias) acc += load_as<C>(bias[f]);
  if (scale) acc *= load_as<C>(scale[f]);
  if (shift) acc += load_as<C>(shift[f]);
  if (residual) acc += load_as<C>(residual[out_at]);
  if (relu && acc < C(0)) acc = C(0);
  return acc;
}

template <class S>
__global__ void conv2d_tiled(const S* __restrict__ x, const S* __restrict__ filter, const S* __restrict__ bias,
                             const S* __restrict__ scale, const S* __restrict__ shift, const S* residual, S* out,
                             ConvParams p) {
  typedef typename ComputeOf<S>::type C;
  __shared__ C x_tile[kConvTile][kConvTile];
  __shared__ C f_tile[kConvTile][kConvTile + 1];  // +1: column reads hit distinct banks
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 col_tiles = (p.fg + kConvTile - 1) / kConvTile;
  const i64 g = blockIdx.x / col_tiles;
  const i64 f_local = (blockIdx.x - g * col_tiles) * kConvTile + tx;
  const i64 f = g * p.fg + f_local;
  // The row this thread loads for the x tile is ty's; the filter column it loads is its own.
  const i64 row_tiles = (p.m + kConvTile - 1) / kConvTile;
  for (i64 tile = blockIdx.y; tile < row_tiles; tile += gridDim.y) {
    const i64 m = tile * kConvTile + ty;
    const ConvPixel px = conv_pixel(p, m < p.m ? m : 0);
    C acc = C(0);
    for (i64 k0 = 0; k0 < p.k; k0 += kConvTile) {
      const i64 xt = k0 + tx, ft = k0 + ty;
      const i64 at = m < p.m && xt < p.k ? conv_x_tap(p, px, g, xt) : -1;
      x_tile[ty][tx] = at >= 0 ? load_as<C>(x[at]) : C(0);
      f_tile[ty][tx] = f_local < p.fg && ft < p.k ? load_as<C>(filter[conv_filter_offset(p, ft, f)]) : C(0);
      __syncthreads();
      for (int kk = 0; kk < kConvTile; ++kk) acc += x_tile[ty][kk] * f_tile[kk][tx];
      __syncthreads();  // the next step overwrites the tiles
    }
    if (m < p.m && f_local < p.fg) {
      const i64 out_at = conv_out_offset(p, m, f);
      out[out_at] = store_as<S>(conv_epilogue<S, C>(acc, f, out_at, bias, scale, shift, residual, p.relu));
    }
  }
}

// One thread per output element, grid-stride, summing its k taps: for few output channels
// per group (depthwise), where most columns of a GEMM tile would be idle.
template <class S>
__global__ void conv2d_direct(const S* __restrict__ x, const S* __restrict__ filter, const S* __restrict__ bias,
                              const S* __restrict__ scale, const S* __restrict__ shift, const S* residual, S* out,
                              ConvParams p) {
  typedef typename ComputeOf<S>::type C;
  const i64 total = p.m * p.out_c;
  for (i64 e = first_index(); e < total; e += index_step()) {
    i64 m, f;
    conv_out_element(p, e, m, f);
    const ConvPixel px = conv_pixel(p, m);
    const i64 g = f / p.fg;
    C acc = C(0);
    for (i64 t = 0; t < p.k; ++t) {
      const i64 at = conv_x_tap(p, px, g, t);
      if (at >= 0) acc += load_as<C>(x[at]) * load_as<C>(filter[conv_filter_offset(p, t, f)]);
    }
    out[e] = store_as<S>(conv_epilogue<S, C>(acc, f, e, bias, scale, shift, residual, p.relu));
  }
}

}  // namespace gpu
}  // namespace maxc
