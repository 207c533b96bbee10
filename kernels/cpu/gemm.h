// Our own matmul kernel, for what oneDNN does not do on this CPU: float64 and the integer
// dtypes (which wrap around on overflow, as numpy's do), and degenerate shapes (K = 0, where
// the result is the epilogue of zeros). float16 and bfloat16 are computed in float32.
#pragma once

#include "base/dtype.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/cpu/matmul_shape.h"

namespace maxc::cpu {

bool gemm_supports(DType dtype);

// out = epilogue(lhs @ rhs) over the batches of `d`. `bias` has e.bias_len elements of the
// dtype when e.has_bias. Integer dtypes accept only the relu activation.
void gemm(DType dtype, const MatmulDims& d, const void* lhs, const void* rhs, const void* bias, void* out,
          const MatmulEpilogue& e);

}  // namespace maxc::cpu
