// The byte layouts of the block-quantized encodings (GGML's, as GGUF files store them) and
// the 8-bit forms that qmatmul quantizes activations into. Weight blocks are read straight
// out of user uint8 tensors at any address, so every member is a byte array (alignment 1).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/half.h"

namespace maxc::cpu {

// A little-endian IEEE half kept as bytes, so that a block may sit at an odd address.
struct F16Bytes {
  uint8_t bytes[2];
  float value() const { return f16_to_float(static_cast<uint16_t>(bytes[0] | bytes[1] << 8)); }
  void set(float f) {
    const uint16_t h = float_to_f16(f);
    bytes[0] = static_cast<uint8_t>(h), bytes[1] = static_cast<uint8_t>(h >> 8);
  }
};

constexpr int kQ32 = 32;    // elements of a Q4_0 / Q8_0 block
constexpr int kQK = 256;    // elements of a K-quant super-block

// 32 elements: (q - 8) * d; element j in the low nibble of qs[j], element j + 16 in the high.
struct BlockQ4_0 {
  F16Bytes d;
  uint8_t qs[kQ32 / 2];
};

// 32 elements: q * d.
struct BlockQ8_0 {
  F16Bytes d;
  int8_t qs[kQ32];
};

// 256 elements in 8 sub-blocks of 32: d * sc[j] * q - dmin * m[j], with the 6-bit sc and m
// packed into `scales` (see unpack_k_scales). Each 32 bytes of qs hold two sub-blocks: 2c in
// the low nibbles, 2c + 1 in the high ones.
struct BlockQ4_K {
  F16Bytes d;
  F16Bytes dmin;
  uint8_t scales[12];
  uint8_t qs[kQK / 2];
};

// Q4_K plus a fifth bit: bit j of qh[l] is the high bit of element 32 * j + l.
struct BlockQ5_K {
  F16Bytes d;
  F16Bytes dmin;
  uint8_t scales[12];
  uint8_t qh[kQK / 8];
  uint8_t qs[kQK / 2];
};

// 256 elements in 16 groups of 16: d * scales[g] * (q - 32), q 6-bit. Each half of 128
// elements takes 64 bytes of ql and 32 of qh: element 32 * i + l (i < 4, l < 32) has its low
// four bits in ql[l + 32 * (i & 1)] (low nibble for i < 2, high for i >= 2) and its top two
// at bits 2i, 2i + 1 of qh[l].
struct BlockQ6_K {
  uint8_t ql[kQK / 2];
  uint8_t qh[kQK / 4];
  int8_t scales[kQK / 16];
  F16Bytes d;
};

static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 1);
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 1);
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 1);
static_assert(sizeof(BlockQ5_K) == 176 && alignof(BlockQ5_K) == 1);
static_assert(sizeof(BlockQ6_K) == 210 && alignof(BlockQ6_K) == 1);

// Activations for Q4_0 / Q8_0 weights: 32 elements q * d, and sum(q) for Q4_0's -8 offset.
// A float scale (not GGML's half) costs nothing here and keeps the activations exact to 8 bits.
struct ActQ8_32 {
  float d;
  int32_t sum;
  int8_t qs[kQ32];
};

// Activations for the K-quants: 256 elements q * d, and the sum of every 16, which the
// weights' minimums (Q4_K, Q5_K) and Q6_K's -32 offset multiply.
struct ActQ8_256 {
  float d;
  int8_t qs[kQK];
  int16_t sums[kQK / 16];
};

static_assert(sizeof(ActQ8_32) == 40);
static_assert(sizeof(ActQ8_256) == 292);

// The eight 6-bit scales and mins of a Q4_K / Q5_K block. The first four of each sit in the
// low six bits of bytes 0-3 (scales) and 4-7 (mins); the last four have their low four bits
// in the nibbles of bytes 8-11 and their top two bits in the spare top bits of bytes 0-7.
// Four bytes at a time, as little-endian words: out[0..1] hold the scales, out[2..3] the mins
// (the hot loops call this once per 256 elements and load the words into a vector).
inline void k_scale_words(const uint8_t packed[12], uint32_t out[4]) {
  static_assert(std::endian::native == std::endian::little);
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  out[0] = w[0] & kLow6;
  out[1] = (w[2] & kLow4) | ((w[0] >> 6) & kLow2) << 4;
  out[2] = w[1] & kLow6;
  out[3] = ((w[2] >> 4) & kLow4) | ((w[1] >> 6) & kLow2) << 4;
}

inline void unpack_k_scales(const uint8_t packed[12], uint8_t sc[8], uint8_t m[8]) {
  uint32_t words[4];
  k_scale_words(packed, words);
  std::memcpy(sc, words, 8);
  std::memcpy(m, words + 2, 8);
}

inline void pack_k_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t packed[12]) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    packed[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
}

// The 0..15 (Q4_K) or 0..31 (Q5_K) level of each of a block's 256 elements.
inline void k_levels(const uint8_t qs[kQK / 2], const uint8_t* qh, uint8_t out[kQK]) {
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      out[64 * c + l] = qs[32 * c + l] & 15;
      out[64 * c + 32 + l] = qs[32 * c + l] >> 4;
    }
  if (!qh) return;
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 32; ++l) out[32 * j + l] |= static_cast<uint8_t>(((qh[l] >> j) & 1) << 4);
}

// The 0..63 level (q + 32) of each of a Q6_K block's 256 elements.
inline void q6_k_levels(const BlockQ6_K& b, uint8_t out[kQK]) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    uint8_t* q = out + 128 * h;
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<uint8_t>((ql[l] & 15) | (qh[l] & 3) << 4);
      q[l + 32] = static_cast<uint8_t>((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4);
      q[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
      q[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
    }
  }
}

}  // namespace maxc::cpu
