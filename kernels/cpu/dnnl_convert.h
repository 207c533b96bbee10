// float16 and bfloat16 operands of oneDNN primitives that run only in float32 on this CPU
// (oneDNN 2.6 needs AVX-512 for its half-precision kernels): widened into scratch before the
// call and narrowed after it, in parallel.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// float16 or bfloat16 -> float32, `count` elements.
void widen_to_f32(DType from, const void* src, float* dst, int64_t count);
// float32 -> float16 or bfloat16, rounding to nearest even.
void narrow_from_f32(DType to, const float* src, void* dst, int64_t count);

}  // namespace maxc::cpu
