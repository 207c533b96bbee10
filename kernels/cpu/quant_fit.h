// Least-squares fits of one block's scale (and offset) for the reference quantizer: the
// quality of a block encoding is decided here, not by its bit layout.
#pragma once

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant_round.h"

namespace maxc::cpu {

// Squared errors this close are equal: both fits are exact up to float rounding (`energy`,
// Σ x² over the block, sets the scale of that rounding) or they differ in the sixth digit.
inline bool same_fit_error(double a, double b, double energy) {
  const double larger = std::max(a, b);
  return std::isfinite(larger) && (std::fabs(a - b) <= 1e-6 * larger || larger <= 1e-12 * energy);
}

// The d for x ≈ d * q with integer q in [lo, hi] (lo < 0 < hi) and a small squared error.
// Tries putting the largest-magnitude element on a few levels near either end of the range,
// refits each choice by least squares and keeps the best; 0 for an all-zero block. A block
// that already lies on a grid (decoded data) gets that grid's d exactly; `stored` is how the
// caller will store d (rounded to half, say), which decides what "exactly" means.
inline float stored_as_is(float d) { return d; }
float fit_symmetric_scale(const float* x, int n, int lo, int hi, float (*stored)(float) = stored_as_is);

// x ≈ scale * q - offset with q in [0, nmax], scale >= 0 and offset >= 0 (the K-quants store
// unsigned 6-bit mins, so a block's lower end is never above zero). When the levels leave
// room (a block decoded from a K-quant often has neither 0 nor nmax among them), the offsets
// offset + scale * t for t in [0, shifts] fit exactly as well.
struct AffineFit {
  float scale = 0;
  float offset = 0;
  int shifts = 0;
};
AffineFit fit_affine(const float* x, int n, int nmax);

}  // namespace maxc::cpu
