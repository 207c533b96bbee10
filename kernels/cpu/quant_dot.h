// Dot products of one block-quantized weight row with one activation row in qmatmul's 8-bit
// form (quant_activation.h), summed in integers block by block and scaled once per block.
// Two implementations give the same integer sums and differ only in float rounding: AVX2
// (maddubs / madd, in quant_dot_avx2.cc) and portable C++ (quant_dot_scalar.cc).
#pragma once

#include <cstdint>

#include "base/quant_encoding.h"

namespace maxc::cpu {

// sum over `blocks` weight blocks at `w` of dequant(w) · x, x the activation row.
using QuantDotFn = float (*)(int64_t blocks, const uint8_t* w, const void* x);

enum class QuantIsa {
  kAuto,    // AVX2 when the CPU has it
  kScalar,  // the portable code, everywhere
  kAvx2,    // FAILED_PRECONDITION when the CPU lacks AVX2, FMA or F16C
};

QuantDotFn quant_dot_kernel(QuantEncoding e, QuantIsa isa = QuantIsa::kAuto);

// The per-encoding kernels the dispatcher picks from (nullptr where a build has no AVX2).
QuantDotFn quant_dot_scalar(QuantEncoding e);
QuantDotFn quant_dot_avx2(QuantEncoding e);

}  // namespace maxc::cpu
