// The channel-blocked activation layout oneDNN's direct convolutions compute in (its nChw8c,
// or nChw16c where its AVX-512 kernels run): NCHW with the channels cut into blocks of
// `block` (8 or 16), each block stored pixel-major with its channels innermost, i.e. the 5-D
// tensor [N, C / block, H, W, block].
// compiler/block_channels.cc keeps a CNN's activations in this layout from one convolution
// to the next; these copies convert at the edges of such a run.
#pragma once

#include <cstdint>

namespace maxc::cpu {

// The block oneDNN's fastest direct convolutions on this CPU take: 16 channels where its
// AVX-512 kernels run (a zmm register of floats), else 8.
int64_t native_channel_block();

// x [batch, channels, pixels] -> y [batch, channels / block, pixels, block]; channels is a
// multiple of block. Runs on the team.
void to_channel_blocks(const float* x, int64_t batch, int64_t channels, int64_t pixels, int64_t block, float* y);
// The inverse: y [batch, channels / block, pixels, block] -> x [batch, channels, pixels].
void from_channel_blocks(const float* y, int64_t batch, int64_t channels, int64_t pixels, int64_t block, float* x);

}  // namespace maxc::cpu
