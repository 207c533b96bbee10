// Rounding to integer levels in the quantizers' inner loops, without libm calls (which
// baseline x86-64 code makes for nearbyint and fmin / fmax) and without undefined int
// conversions.
#pragma once

#include <algorithm>

namespace maxc::cpu {

// Round to nearest even for |v| < 2^22 (every level of every encoding), with two adds instead
// of a libm call: adding 1.5 * 2^23 leaves no fraction bits, so the FPU rounds.
inline float round_small(float v) {
  constexpr float kShift = 12582912.f;  // 1.5 * 2^23
  return (v + kShift) - kShift;
}

// v clamped to [lo, hi] with a NaN going to lo, so that the int conversion after it is always
// defined. (std::max(lo, v) compiles to one maxss and keeps lo when v is NaN; std::fmax is a
// libm call.)
inline float clamp_to(float v, float lo, float hi) { return std::min(hi, std::max(lo, v)); }

}  // namespace maxc::cpu
