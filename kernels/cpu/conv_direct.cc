#include "kernels/cpu/conv_direct.h"

#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Element strides of a 4-D tensor in the shape's activation layout, by logical axis.
struct ActStrides {
  int64_t n, h, w, c;
};

ActStrides act_strides(const Conv2dShape& s, int64_t h, int64_t w, int64_t c) {
  if (s.channels_first) return {c * h * w, w, 1, h * w};
  return {h * w * c, w * c, c, 1};
}

struct FilterStrides {
  int64_t r, s, c, f;
};

FilterStrides filter_strides(const Conv2dShape& s) {
  const int64_t cg = s.in_c / s.groups;
  if (s.filter_fcrs) return {s.kernel_w, 1, s.kernel_h * s.kernel_w, cg * s.kernel_h * s.kernel_w};
  return {s.kernel_w * cg * s.out_c, cg * s.out_c, s.out_c, 1};
}

}  // namespace

template <typename T>
void conv2d_direct(const Conv2dShape& s, const T* x, const T* filter, const T* bias, T* out) {
  const ActStrides xs = act_strides(s, s.in_h, s.in_w, s.in_c), os = act_strides(s, s.out_h, s.out_w, s.out_c);
  const FilterStrides fs = filter_strides(s);
  const int64_t cg = s.in_c / s.groups, fg = s.out_c / s.groups;
  const int64_t pixels = s.batch * s.out_h * s.out_w;
  parallel_for(pixels, s.out_c * cg * s.kernel_h * s.kernel_w, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / (s.out_h * s.out_w), oh = p / s.out_w % s.out_h, ow = p % s.out_w;
      for (int64_t f = 0; f < s.out_c; ++f) {
        const int64_t c0 = f / fg * cg;
        T acc = bias ? bias[f] : T(0);
        for (int64_t r = 0; r < s.kernel_h; ++r) {
          const int64_t ih = oh * s.stride_h - s.pad_top + r * s.dilation_h;
          if (ih < 0 || ih >= s.in_h) continue;
          for (int64_t q = 0; q < s.kernel_w; ++q) {
            const int64_t iw = ow * s.stride_w - s.pad_left + q * s.dilation_w;
            if (iw < 0 || iw >= s.in_w) continue;
            // Offsets, not pointers: with no input channels x and filter may be null.
            const int64_t xo = n * xs.n + ih * xs.h + iw * xs.w + c0 * xs.c, fo = r * fs.r + q * fs.s + f * fs.f;
            for (int64_t c = 0; c < cg; ++c) acc += x[xo + c * xs.c] * filter[fo + c * fs.c];
          }
        }
        out[n * os.n + oh * os.h + ow * os.w + f * os.c] = acc;
      }
    }
  });
}

template void conv2d_direct<float>(const Conv2dShape&, const float*, const float*, const float*, float*);
template void conv2d_direct<double>(const Conv2dShape&, const double*, const double*, const double*, double*);

}  // namespace maxc::cpu
