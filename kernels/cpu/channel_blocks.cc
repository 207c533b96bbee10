#include "kernels/cpu/channel_blocks.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/transpose.h"

namespace maxc::cpu {

// Each block of 8 channels is one transpose of an [8, pixels] plane.
void to_channel_blocks(const float* x, int64_t batch, int64_t channels, int64_t pixels, float* y) {
  const int64_t block = kChannelBlock * pixels;
  parallel_for(batch * channels / kChannelBlock, block, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      transpose_plane(x + b * block, pixels, y + b * block, kChannelBlock, pixels, kChannelBlock, sizeof(float));
  });
}

void from_channel_blocks(const float* y, int64_t batch, int64_t channels, int64_t pixels, float* x) {
  const int64_t block = kChannelBlock * pixels;
  parallel_for(batch * channels / kChannelBlock, block, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      transpose_plane(y + b * block, kChannelBlock, x + b * block, pixels, kChannelBlock, pixels, sizeof(float));
  });
}

}  // namespace maxc::cpu
