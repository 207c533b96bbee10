// The channel-blocked activation layout oneDNN's direct convolutions compute in (its
// nChw8c): NCHW with the channels cut into blocks of kChannelBlock, each block stored
// pixel-major with its channels innermost, i.e. the 5-D tensor [N, C / 8, H, W, 8].
// compiler/block_channels.cc keeps a CNN's activations in this layout from one convolution
// to the next; these copies convert at the edges of such a run.
#pragma once

#include <cstdint>

namespace maxc::cpu {

inline constexpr int64_t kChannelBlock = 8;

// x [batch, channels, pixels] -> y [batch, channels / 8, pixels, 8]; channels is a multiple
// of kChannelBlock. Runs on the team.
void to_channel_blocks(const float* x, int64_t batch, int64_t channels, int64_t pixels, float* y);
// The inverse: y [batch, channels / 8, pixels, 8] -> x [batch, channels, pixels].
void from_channel_blocks(const float* y, int64_t batch, int64_t channels, int64_t pixels, float* x);

}  // namespace maxc::cpu
