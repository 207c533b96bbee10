// The direct convolution every CPU convolution test checks against: NHWC x, RSCF filter
// ([kh, kw, in_c / groups, out_c]), groups, strides, dilations and pads of s, summed in double.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/conv.h"

namespace maxc::kernel_test {

inline std::vector<double> conv_reference(const cpu::Conv2dShape& s, const std::vector<float>& x,
                                          const std::vector<float>& f, const std::vector<float>& bias) {
  const int64_t cg = s.in_c / s.groups, fg = s.out_c / s.groups;
  std::vector<double> out(static_cast<size_t>(s.out_elements()));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow)
        for (int64_t o = 0; o < s.out_c; ++o) {
          double acc = bias.empty() ? 0 : bias[o];
          for (int64_t r = 0; r < s.kernel_h; ++r)
            for (int64_t q = 0; q < s.kernel_w; ++q) {
              const int64_t ih = oh * s.stride_h - s.pad_top + r * s.dilation_h;
              const int64_t iw = ow * s.stride_w - s.pad_left + q * s.dilation_w;
              if (ih < 0 || ih >= s.in_h || iw < 0 || iw >= s.in_w) continue;
              for (int64_t c = 0; c < cg; ++c)
                acc += x[((n * s.in_h + ih) * s.in_w + iw) * s.in_c + o / fg * cg + c] *
                       f[((r * s.kernel_w + q) * cg + c) * s.out_c + o];
            }
          out[((n * s.out_h + oh) * s.out_w + ow) * s.out_c + o] = acc;
        }
  return out;
}

}  // namespace maxc::kernel_test
