// outer(lhs, rhs): out[i, j] = lhs[i] * rhs[j] over both inputs flattened. Integers wrap on
// overflow; float16 and bfloat16 multiply in float32 and round once.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

bool outer_supports(DType dtype);
void outer(DType dtype, const void* lhs, int64_t n_lhs, const void* rhs, int64_t n_rhs, void* out);

}  // namespace maxc::cpu
