// Block-quantized matrix-vector products through the ABI (a graph with a uint8 weight and the
// qmatmul op), the decode-time shape of an LLM layer: GB/s of weight bytes read, beside the
// machine's measured read bandwidth and the float32 matvec.
#pragma once

#include "abi_model.h"

namespace bench {

void quant_matvec_table(const Context& ctx);

}  // namespace bench
