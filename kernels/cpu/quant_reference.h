// Quantizing float rows into a block encoding and decoding them back (the `dequantize` op).
// A row of `k` elements (a multiple of the encoding's elements_per_block) takes
// quant_row_bytes(e, k) bytes; rows are packed one after another.
#pragma once

#include <cstdint>

#include "base/quant_encoding.h"

namespace maxc::cpu {

// The reference quantizer: for tests, benchmarks and writers of quantized weights. It fits
// every block's scales by least squares rather than taking the first guess, so its error is
// what the encoding allows, not what a quick rounding gives; it is not meant to be fast.
void quantize_rows(QuantEncoding e, const float* src, int64_t rows, int64_t k, uint8_t* dst);

// Exact decoding: every output is the encoding's formula evaluated in float32.
void dequantize_rows(QuantEncoding e, const uint8_t* src, int64_t rows, int64_t k, float* dst);

}  // namespace maxc::cpu
