// The extents of one conv2d or pooling launch (kernels/cuda/conv.cu, pool.cu), passed by
// value as one kernel parameter, and the per-element index math both kernels share. Host code
// fills these very structs (the header compiles on the host too), so their layout is the one
// the kernels read. The window rules are the CPU's (kernels/cpu/conv_direct.cc, pool.cc):
// tap i of output row o reads input row o * stride - pad + i * dilation, and a tap outside
// the input reads padding (zero for conv, nothing for pools).
#ifndef MAXC_GPU_CONV_PARAMS_CUH
#define MAXC_GPU_CONV_PARAMS_CUH

#include "platform.cuh"

namespace maxc {
namespace gpu {

// conv2d as an implicit GEMM per group: rows are output pixels (m = batch * out_h * out_w),
// columns a group's output channels (fg of them), the reduction runs over k = kernel_h *
// kernel_w * cg taps. The tap order follows the filter so that it is a plain matrix: RSCF
// [R, S, cg, F] is k-major with (r, s, c), c fastest; FCRS [F, cg, R, S] is f-major with
// (c, r, s), s fastest.
struct ConvParams {
  i64 batch, in_h, in_w, in_c;
  i64 out_h, out_w, out_c;
  i64 kernel_h, kernel_w;
  i64 stride_h, stride_w, dilation_h, dilation_w;
  i64 pad_top, pad_left;  // bottom and right padding only shape the output
  i64 groups;
  i64 m, k, cg, fg;       // derived: conv_params_finish
  i32 channels_first;     // x and out NCHW, else NHWC
  i32 filter_fcrs;        // else RSCF
  i32 relu;               // fused_conv2d's activation, after the bias, scale, shift and residual
};

MAXC_HD void conv_params_finish(ConvParams& p) {
  p.m = p.batch * p.out_h * p.out_w;
  p.cg = p.groups > 0 ? p.in_c / p.groups : 0;
  p.fg = p.groups > 0 ? p.out_c / p.groups : 0;
  p.k = p.kernel_h * p.kernel_w * p.cg;
}

// An output pixel, row m of the GEMM.
struct ConvPixel {
  i64 n, oh, ow;
};

MAXC_HD ConvPixel conv_pixel(const ConvParams& p, i64 m) {
  ConvPixel px;
  px.ow = m % p.out_w;
  px.oh = m / p.out_w % p.out_h;
  px.n = m / (p.out_w * p.out_h);
  return px;
}

// Element offset of x at (n, ih, iw, channel c) in the activation layout.
MAXC_HD i64 conv_x_offset(const ConvParams& p, i64 n, i64 ih, i64 iw, i64 c) {
  if (p.channels_first) return ((n * p.in_c + c) * p.in_h + ih) * p.in_w + iw;
  return ((n * p.in_h + ih) * p.in_w + iw) * p.in_c + c;
}

// Element offset of out at pixel m, output channel f (over all groups).
MAXC_HD i64 conv_out_offset(const ConvParams& p, i64 m, i64 f) {
  if (!p.channels_first) return m * p.out_c + f;
  const i64 pixels = p.out_h * p.out_w;
  const i64 n = m / pixels;
  return (n * p.out_c + f) * pixels + (m - n * pixels);
}

// Output element e in out's own layout (so consecutive threads write consecutive elements):
// its GEMM row m and output channel f.
MAXC_HD void conv_out_element(const ConvParams& p, i64 e, i64& m, i64& f) {
  if (!p.channels_first) {
    m = e / p.out_c;
    f = e - m * p.out_c;
    return;
  }
  const i64 pixels = p.out_h * p.out_w;
  const i64 nf = e / pixels;
  f = nf % p.out_c;
  m = nf / p.out_c * pixels + (e - nf * pixels);
}

// Offset of x for GEMM element (m, tap t) of group g, or -1 where the tap reads padding.
MAXC_HD i64 conv_x_tap(const ConvParams& p, const ConvPixel& px, i64 g, i64 t) {
  i64 r, s, c;
  if (p.filter_fcrs) {
    s = t % p.kernel_w;
    r = t / p.kernel_w % p.kernel_h;
    c = t / (p.kernel_w * p.kernel_h);
  } else {
    c = t % p.cg;
    s = t / p.cg % p.kernel_w;
    r = t / (p.cg * p.kernel_w);
  }
  const i64 ih = px.oh * p.stride_h - p.pad_top + r * p.dilation_h;
  const i64 iw = px.ow * p.stride_w - p.pad_left + s * p.dilation_w;
  if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) return -1;
  return conv_x_offset(p, px.n, ih, iw, g * p.cg + c);
}

// Offset of the filter for tap t and output channel f (over all groups).
MAXC_HD i64 conv_filter_offset(const ConvParams& p, i64 t, i64 f) {
  return p.filter_fcrs ? f * p.k + t : t * p.out_c + f;
}

// max_pool2d and avg_pool2d over NHWC: one output element per (pixel, channel).
struct PoolParams {
  i64 batch, in_h, in_w, channels;
  i64 out_h, out_w;
  i64 kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  i64 pad_h, pad_w;
  i32 count_boundary;  // avg: divide by the taps inside the padded input, else inside the input
};

// The taps [first, last) of one window along one axis whose rows start + i * dilation lie in
// [lo, hi): the CPU's taps_within, step for step.
struct PoolTaps {
  i64 first, last;
};

MAXC_HD PoolTaps pool_taps(i64 start, i64 kernel, i64 dilation, i64 lo, i64 hi) {
  PoolTaps t;
  t.first = 0;
  t.last = kernel;
  while (t.first < kernel && start + t.first * dilation < lo) ++t.first;
  while (t.last > t.first && start + (t.last - 1) * dilation >= hi) --t.last;
  return t;
}

MAXC_HD i64 pool_tap_count(const PoolTaps& t) { return t.last > t.first ? t.last - t.first : 0; }

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_CONV_PARAMS_CUH
