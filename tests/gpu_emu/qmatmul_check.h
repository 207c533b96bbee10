// What a GPU qmatmul result must be, for the emulator's tests:
// x · dequantize(w)ᵀ to float rounding (a few ulps of the sum of |products|), and the CPU's
// qmatmul within its activation rounding (the CPU rounds each x to 1/254 of its block's
// largest magnitude, at most the row's). The first five misses are reported.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace maxc::testing {

// got and cpu are [m, n]; x is [m, k]; wd, the dequantized weights, [n, k].
inline void expect_qmatmul_close(const std::string& label, const std::vector<float>& got, const std::vector<float>& cpu,
                                 const std::vector<float>& x, const std::vector<float>& wd, int64_t m, int64_t k,
                                 int64_t n) {
  int reported = 0;
  for (int64_t i = 0; i < m && reported < 5; ++i)
    for (int64_t j = 0; j < n && reported < 5; ++j) {
      double exact = 0, magnitude = 0, w_sum = 0, x_max = 0;
      for (int64_t t = 0; t < k; ++t) {
        const double xv = x[i * k + t], wv = wd[j * k + t];
        exact += xv * wv;
        magnitude += std::fabs(xv * wv);
        w_sum += std::fabs(wv);
        x_max = std::max(x_max, std::fabs(xv));
      }
      const double g = got[i * n + j], c = cpu[i * n + j];
      if (std::fabs(g - exact) > 1e-5 * magnitude + 1e-6) {
        ADD_FAILURE() << label << ": y[" << i << ", " << j << "] is " << g << ", x · dequantize(w) is " << exact;
        ++reported;
      }
      if (std::fabs(g - c) > w_sum * x_max / 254 + 1e-5 * magnitude + 1e-6) {
        ADD_FAILURE() << label << ": y[" << i << ", " << j << "] is " << g << ", the CPU's qmatmul " << c;
        ++reported;
      }
    }
}

}  // namespace maxc::testing
