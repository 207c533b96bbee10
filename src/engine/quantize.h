// Quantizing a float32 tensor into a block encoding: how a user makes the uint8 weights that
// `qmatmul` reads (and save_gguf writes) from float ones.
#pragma once

#include "base/quant_encoding.h"
#include "driver/tensor.h"

namespace maxc {

// float32 [..., k] on the host -> a new uint8 [..., quant_row_bytes(e, k)], with every block's
// scales fitted by least squares (cpu::quantize_rows). INVALID_ARGUMENT for another dtype, a
// rank-0 tensor, no encoding, or k not a multiple of the encoding's block; FAILED_PRECONDITION
// for device memory.
Ref<Tensor> quantize(const Tensor& src, QuantEncoding e);

}  // namespace maxc
