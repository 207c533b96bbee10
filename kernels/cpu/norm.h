// Normalizations over the last dim of a tensor seen as [rows, d], computed in float32
// (float64 for float64; half floats are loaded into float32 and rounded once when stored).
//   layer_norm:     y = (x - mean) / sqrt(var + epsilon) * gamma + beta, var biased (1/d),
//                   by two passes over the row (mean, then the centred sum of squares).
//   add_layer_norm: s = x + residual rounded to the dtype (as the unfused add would hold
//                   it), then y = layer_norm(s); s is also written to `sum` when not null.
//   rms_norm:       y = x / sqrt(mean(x^2) + epsilon) * (weight + weight_offset); with
//                   multiply_before_cast false, x·rsqrt is rounded to the dtype first and the
//                   product computed as the dtype would (MAX's nn.RMSNorm).
// gamma, beta and weight have d elements of the input's dtype.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// y may be x.
using LayerNormFn = void (*)(const void* x, const void* gamma, const void* beta, void* y, int64_t rows, int64_t d,
                             double epsilon);

// `residual_stride` is the distance in elements between the residual's rows: d when it has
// x's shape, 0 when one row of d elements is broadcast over all rows. y may be x.
using AddLayerNormFn = void (*)(const void* x, const void* residual, int64_t residual_stride, const void* gamma,
                                const void* beta, void* y, void* sum, int64_t rows, int64_t d, double epsilon);

// y may be x.
using RmsNormFn = void (*)(const void* x, const void* weight, void* y, int64_t rows, int64_t d, double epsilon,
                           double weight_offset, bool multiply_before_cast);

// nullptr when there is no kernel for `dtype` (float32, float64, float16, bfloat16 have one).
LayerNormFn find_layer_norm_kernel(DType dtype);
AddLayerNormFn find_add_layer_norm_kernel(DType dtype);
RmsNormFn find_rms_norm_kernel(DType dtype);

}  // namespace maxc::cpu
