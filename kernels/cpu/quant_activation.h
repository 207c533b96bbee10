// The 8-bit form qmatmul turns each activation row into, once per call, so that every weight
// row meets it in integer dot products: ActQ8_32 blocks for Q4_0 / Q8_0 weights, ActQ8_256
// for the K-quants (quant_blocks.h). Each block's scale is its largest magnitude / 127, so an
// element is off by at most half a step: |x - d * q| <= max|x| / 254 over its block.
#pragma once

#include <cstdint>

#include "base/quant_encoding.h"

namespace maxc::cpu {

// Elements per activation block for weights of encoding `e` (32 or 256).
int64_t activation_block_elements(QuantEncoding e);
// Bytes of one quantized activation row of `k` elements (k a multiple of the block).
int64_t activation_row_bytes(QuantEncoding e, int64_t k);
void quantize_activation_row(QuantEncoding e, const float* x, int64_t k, void* dst);

}  // namespace maxc::cpu
