// A direct 2-D convolution for the dtypes oneDNN lacks (float64): each output pixel is a
// sum over the window, channels innermost. Correct for every layout, group count, stride,
// dilation and padding; meant for correctness, not speed.
#pragma once

#include "kernels/cpu/conv_shape.h"

namespace maxc::cpu {

template <typename T>
void conv2d_direct(const Conv2dShape& s, const T* x, const T* filter, const T* bias, T* out);

}  // namespace maxc::cpu
