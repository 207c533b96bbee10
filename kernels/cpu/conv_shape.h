// One 2-D convolution with every extent known: what the conv kernels are specialized for.
#pragma once

#include <cstdint>

namespace maxc::cpu {

struct Conv2dShape {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t kernel_h = 0, kernel_w = 0, out_c = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t groups = 1;
  bool channels_first = false;  // x and out NCHW; else NHWC
  bool filter_fcrs = false;     // filter [F, C/groups, kH, kW]; else RSCF [kH, kW, C/groups, F]

  int64_t in_elements() const { return batch * in_h * in_w * in_c; }
  int64_t out_elements() const { return batch * out_h * out_w * out_c; }
  int64_t filter_elements() const { return kernel_h * kernel_w * (in_c / groups) * out_c; }
};

// What follows the convolution in the same kernel (compiler/fuse_conv.cc): out = act(conv *
// scale[c] + shift[c] + residual), with one float32 scale and shift per output channel and
// a residual of the output's shape (compiler/channels_last.cc).
struct ConvEpilogue {
  bool scale = false, shift = false, relu = false, residual = false;
  bool any() const { return scale || shift || relu || residual; }
};

// The epilogue over a float32 result already written (for kernels without post-ops).
void apply_conv_epilogue(const Conv2dShape& s, const ConvEpilogue& e, const float* scale, const float* shift,
                         float* out);

}  // namespace maxc::cpu
