#include "kernels/cpu/quant_dot.h"

#include "base/error.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {

QuantDotFn quant_dot_kernel(QuantEncoding e, QuantIsa isa) {
  const bool avx2 = isa == QuantIsa::kAvx2 || (isa == QuantIsa::kAuto && cpu_has_avx2());
  if (avx2 && !cpu_has_avx2()) fail(Code::kFailedPrecondition, "this CPU has no AVX2, FMA and F16C");
  const QuantDotFn fn = avx2 ? quant_dot_avx2(e) : quant_dot_scalar(e);
  if (!fn) fail(Code::kInvalidArgument, "no quantized dot product for encoding ", static_cast<int>(e));
  return fn;
}

}  // namespace maxc::cpu
