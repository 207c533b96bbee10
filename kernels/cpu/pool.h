// max_pool2d and avg_pool2d over NHWC tensors. The window of output (oh, ow) covers input
// rows oh * stride - pad + i * dilation for i < kernel (and columns alike); taps outside the
// input are padding. Max ignores padding (a window of padding only gives -inf, or the type's
// lowest value) and propagates NaN. Average sums the taps inside the input and divides by
// their count, or with count_boundary by the count of taps inside the padded input
// [-pad, size + pad), so a ceil_mode window hanging past the padding is not diluted.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

struct Pool2dShape {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_h = 0, pad_w = 0;
};

bool max_pool2d_supports(DType dtype);  // numeric dtypes
bool avg_pool2d_supports(DType dtype);  // float dtypes

void max_pool2d(DType dtype, const Pool2dShape& s, const void* x, void* out);
void avg_pool2d(DType dtype, const Pool2dShape& s, bool count_boundary, const void* x, void* out);

}  // namespace maxc::cpu
