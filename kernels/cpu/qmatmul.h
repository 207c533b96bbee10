// y[m, n] = x[m, k] · dequant(w[n, :])ᵀ for block-quantized weights, without dequantizing:
// each activation row is quantized once into 8-bit blocks (quant_activation.h), then every
// output is a row of integer dot products (quant_dot.h). The weights are pre-transposed, one
// row of quant_row_bytes(e, k) bytes per output column, as GGUF stores them.
#pragma once

#include <cstdint>

#include "base/quant_encoding.h"
#include "kernels/cpu/quant_dot.h"

namespace maxc::cpu {

// Scratch qmatmul needs for m rows of k (the quantized activations).
int64_t qmatmul_scratch_bytes(QuantEncoding e, int64_t m, int64_t k);

// Runs on the current pool: over n, or over m when there are few columns and many rows.
// `k` must be a multiple of the encoding's elements_per_block (0 gives y = 0).
void qmatmul(QuantEncoding e, const float* x, int64_t m, int64_t k, const uint8_t* w, int64_t n, float* y,
             void* scratch, QuantIsa isa = QuantIsa::kAuto);

}  // namespace maxc::cpu
