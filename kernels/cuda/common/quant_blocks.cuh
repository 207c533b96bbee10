// The GGUF block encodings (GGML's layouts, as kernels/cpu/quant_blocks.h describes them) read
// one element at a time, for quantized.cu's dequantize_rows and qmatmul_rows. Each encoding is
// a tag struct: the elements and bytes of one block, and `value(block, i)`, element i of the
// block at `block` as float32.
//
// value() evaluates the CPU reference's formula (kernels/cpu/quant_reference.cc) with the same
// float operations in the same order, fma where it uses fma, so a decoded element has the
// same bits on either device. Blocks sit at any byte address (a row of 18-byte Q4_0 blocks),
// so everything is read a byte at a time, the half scales included.
#ifndef MAXC_GPU_QUANT_BLOCKS_CUH
#define MAXC_GPU_QUANT_BLOCKS_CUH

#include "cast.cuh"
#include "platform.cuh"

namespace maxc {
namespace gpu {

// The little-endian half at `p` as float.
MAXC_HD float quant_half_at(const u8* p) { return half_bits_to_float(static_cast<u16>(p[0] | p[1] << 8)); }

// A fused multiply-add, rounded once, as the CPU reference's std::fma.
MAXC_HD float quant_fma(float a, float b, float c) {
#if defined(MAXC_HOST_ONLY)
  return std::fma(a, b, c);
#else
  return ::fmaf(a, b, c);
#endif
}

// 32 elements, (q - 8) * d: d (half), then 16 bytes whose low nibbles are elements 0..15 and
// high nibbles 16..31.
struct QuantQ4_0 {
  static constexpr int kElements = 32;
  static constexpr int kBytes = 18;
  static MAXC_HD float value(const u8* b, int i) {
    const u8 byte = b[2 + (i & 15)];
    const int q = (i < 16 ? byte & 15 : byte >> 4) - 8;
    return static_cast<float>(q) * quant_half_at(b);
  }
};

// 32 elements, q * d: d (half), then 32 signed bytes.
struct QuantQ8_0 {
  static constexpr int kElements = 32;
  static constexpr int kBytes = 34;
  static MAXC_HD float value(const u8* b, int i) {
    return static_cast<float>(static_cast<i8>(b[2 + i])) * quant_half_at(b);
  }
};

// The 6-bit scale (`mins` false) or min (true) of sub-block j of a Q4_K / Q5_K block, from
// the 12 bytes at `packed`: the first four of each in the low six bits of bytes 0-3 (scales)
// and 4-7 (mins); the last four with their low four bits in the nibbles of bytes 8-11 and
// their top two in the spare top bits of bytes 0-3 (scales) and 4-7 (mins).
MAXC_HD int quant_k_scale(const u8* packed, int j, bool mins) {
  const int base = mins ? 4 : 0;
  if (j < 4) return packed[base + j] & 63;
  const u8 low = packed[j + 4];
  return (mins ? low >> 4 : low & 15) | (packed[base + j - 4] >> 6) << 4;
}

// Q4_K (no high bits) and Q5_K: 256 elements in 8 sub-blocks of 32, d * sc[j] * q - dmin * m[j].
// Each 32 bytes of qs hold sub-blocks 2c (low nibbles) and 2c + 1 (high); Q5_K's fifth bit of
// element 32 * j + l is bit j of qh[l].
MAXC_HD float quant_k_value(const u8* b, const u8* qs, const u8* qh, int i) {
  const int j = i >> 5, l = i & 31;
  const u8 byte = qs[32 * (j >> 1) + l];
  int q = (j & 1) ? byte >> 4 : byte & 15;
  if (qh) q |= ((qh[l] >> j) & 1) << 4;
  const u8* scales = b + 4;
  const float s = quant_half_at(b) * static_cast<float>(quant_k_scale(scales, j, false));
  const float o = quant_half_at(b + 2) * static_cast<float>(quant_k_scale(scales, j, true));
  return quant_fma(s, static_cast<float>(q), -o);
}

// d (half), dmin (half), scales[12], qs[128].
struct QuantQ4_K {
  static constexpr int kElements = 256;
  static constexpr int kBytes = 144;
  static MAXC_HD float value(const u8* b, int i) { return quant_k_value(b, b + 16, nullptr, i); }
};

// d (half), dmin (half), scales[12], qh[32], qs[128].
struct QuantQ5_K {
  static constexpr int kElements = 256;
  static constexpr int kBytes = 176;
  static MAXC_HD float value(const u8* b, int i) { return quant_k_value(b, b + 48, b + 16, i); }
};

// 256 elements in 16 groups of 16, d * scales[g] * (q - 32) with q 6-bit: ql[128], qh[64],
// scales[16] (signed), d (half). Each half of 128 elements takes 64 bytes of ql and 32 of qh:
// element 32 * t + l of a half (t < 4, l < 32) has its low four bits in ql[l + 32 * (t & 1)]
// (low nibble for t < 2, high for t >= 2) and its top two at bits 2t, 2t + 1 of qh[l].
struct QuantQ6_K {
  static constexpr int kElements = 256;
  static constexpr int kBytes = 210;
  static MAXC_HD float value(const u8* b, int i) {
    const int h = i >> 7, t = (i >> 5) & 3, l = i & 31;
    const u8 low = b[64 * h + l + 32 * (t & 1)];
    const u8 high = b[128 + 32 * h + l];
    const int q = ((t < 2 ? low & 15 : low >> 4) | ((high >> (2 * t)) & 3) << 4) - 32;
    const float s = quant_half_at(b + 208) * static_cast<float>(static_cast<i8>(b[192 + (i >> 4)]));
    return s * static_cast<float>(q);
  }
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_QUANT_BLOCKS_CUH
