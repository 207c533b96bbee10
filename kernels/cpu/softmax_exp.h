// The exp loops of softmax over contiguous float32 spans. GCC does not vectorize std::exp
// without -ffast-math, nor a polynomial exp with clamps under the default -ftrapping-math, so
// these two loops are written with AVX2+FMA intrinsics (range reduction to |r| <= ln2/2 and
// a degree-6 polynomial, within 2 ulp of expf; results below 1.2e-38 flush to 0) and fall
// back to std::exp on CPUs without AVX2.
#pragma once

#include <cstdint>

namespace maxc::cpu {

// e[i] = exp(x[i] - shift) for i < n, written to y[i] unless y is null (y may be x).
// Returns the sum of the e[i].
float exp_shifted_sum(const float* x, float shift, float* y, int64_t n);

// e[j] = exp(x[j] - shift[j]); sum[j] += e[j]; y[j] = e[j] unless y is null; for j < n.
void exp_shifted_accumulate(const float* x, const float* shift, float* sum, float* y, int64_t n);

}  // namespace maxc::cpu
