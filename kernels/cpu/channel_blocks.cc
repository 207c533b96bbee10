#include "kernels/cpu/channel_blocks.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/transpose.h"

namespace maxc::cpu {

int64_t native_channel_block() { return cpu_has_avx512() ? 16 : 8; }

// Each block of channels is one transpose of a [block, pixels] plane.
void to_channel_blocks(const float* x, int64_t batch, int64_t channels, int64_t pixels, int64_t block, float* y) {
  const int64_t plane = block * pixels;
  parallel_for(batch * channels / block, plane, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      transpose_plane(x + b * plane, pixels, y + b * plane, block, pixels, block, sizeof(float));
  });
}

void from_channel_blocks(const float* y, int64_t batch, int64_t channels, int64_t pixels, int64_t block, float* x) {
  const int64_t plane = block * pixels;
  parallel_for(batch * channels / block, plane, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      transpose_plane(y + b * plane, block, x + b * plane, pixels, block, pixels, sizeof(float));
  });
}

}  // namespace maxc::cpu
