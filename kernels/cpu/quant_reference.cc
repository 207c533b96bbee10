#include "kernels/cpu/quant_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

#include "base/error.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_fit.h"
#include "kernels/cpu/quant_round.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

// Clamped before the conversion: a huge or NaN v must not reach the int cast.
int round_clamp(float v, int lo, int hi) {
  return static_cast<int>(round_small(clamp_to(v, static_cast<float>(lo), static_cast<float>(hi))));
}

// ---- quantizing one block ------------------------------------------------------------------

void quantize_q8_0(const float* x, BlockQ8_0& b) {
  float amax = 0;
  for (int i = 0; i < kQ32; ++i) amax = std::max(amax, std::fabs(x[i]));
  b.d.set(amax / 127);
  // Quantize against the half the decoder will read, not the float it was rounded from.
  const float d = b.d.value(), id = d != 0 ? 1 / d : 0;
  for (int i = 0; i < kQ32; ++i) b.qs[i] = static_cast<int8_t>(round_clamp(x[i] * id, -128, 127));
}

float as_half(float d) { return f16_to_float(float_to_f16(d)); }

void quantize_q4_0(const float* x, BlockQ4_0& b) {
  b.d.set(fit_symmetric_scale(x, kQ32, -8, 7, as_half));
  const float d = b.d.value(), id = d != 0 ? 1 / d : 0;
  for (int i = 0; i < kQ32 / 2; ++i) {
    const int lo = round_clamp(x[i] * id, -8, 7) + 8, hi = round_clamp(x[i + 16] * id, -8, 7) + 8;
    b.qs[i] = static_cast<uint8_t>(lo | hi << 4);
  }
}

// Σ (x - (s q - o))² over n elements with q = round((x + o) / s) in [lo, hi]; the levels go
// to `q` when it is not null.
double level_error(const float* x, int n, int lo, int hi, float s, float o, uint8_t* q = nullptr, int bias = 0) {
  const float inv = s != 0 ? 1 / s : 0;
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const int level = round_clamp((x[i] + o) * inv, lo, hi);
    const double e = double{s} * level - o - x[i];
    err += e * e;
    if (q) q[i] = static_cast<uint8_t>(level + bias);
  }
  return err;
}

// A sub-block's 6-bit min under `dmin`: of the offsets its fit allows, the nearest the grid.
uint8_t k_min(const AffineFit& f, float dmin) {
  if (!(dmin > 0)) return 0;
  int best = 0;
  float gap = INFINITY;
  for (int t = 0; t <= f.shifts; ++t) {
    const float o = f.offset + f.scale * t;
    const int m = round_clamp(o / dmin, 0, 63);
    if (std::fabs(o - dmin * m) < gap) gap = std::fabs(o - dmin * m), best = m;
  }
  return static_cast<uint8_t>(best);
}

// The 6-bit scales and mins of Q4_K / Q5_K, and the 0..nmax level of every element under
// them. d puts the largest sub-block scale on 63. dmin puts one of the offsets some sub-block
// allows on 63, the one that gives the least error: usually the largest fitted offset, and
// for a block decoded from this encoding, its own dmin and mins.
void quantize_k_levels(const float* x, int nmax, F16Bytes& d_out, F16Bytes& dmin_out, uint8_t packed[12],
                       uint8_t levels[kQK]) {
  AffineFit fit[8];
  float max_scale = 0;
  for (int j = 0; j < 8; ++j) fit[j] = fit_affine(x + 32 * j, 32, nmax), max_scale = std::max(max_scale, fit[j].scale);
  d_out.set(max_scale / 63);
  const float d = d_out.value();
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) sc[j] = static_cast<uint8_t>(d > 0 ? round_clamp(fit[j].scale / d, 0, 63) : 0);
  // The mins under dmin, with sub-block `top` (if any) pinned to 63.
  auto mins = [&](float dmin, int top, uint8_t out[8]) {
    for (int j = 0; j < 8; ++j) out[j] = j == top ? 63 : k_min(fit[j], dmin);
  };
  double best_err = INFINITY, energy = 0;
  for (int i = 0; i < kQK; ++i) energy += double{x[i]} * x[i];
  int best_top = -1;
  auto try_dmin = [&](float offset, int top) {
    F16Bytes candidate;
    candidate.set(offset / 63);
    const float dmin = candidate.value();
    uint8_t mj[8];
    mins(dmin, top, mj);
    double err = 0;
    for (int j = 0; j < 8; ++j) err += level_error(x + 32 * j, 32, 0, nmax, d * sc[j], dmin * mj[j]);
    // Ties (a decoded block fits exactly under several dmin) go to the largest dmin.
    if (same_fit_error(err, best_err, energy) ? dmin > dmin_out.value() : err < best_err)
      dmin_out = candidate, best_top = top;
    best_err = std::min(best_err, err);
  };
  try_dmin(0, -1);
  for (int j = 0; j < 8; ++j)
    for (int t = 0; t <= fit[j].shifts; ++t) try_dmin(fit[j].offset + fit[j].scale * t, j);
  const float dmin = dmin_out.value();
  mins(dmin, best_top, m);
  for (int j = 0; j < 8; ++j) level_error(x + 32 * j, 32, 0, nmax, d * sc[j], dmin * m[j], levels + 32 * j);
  pack_k_scales(sc, m, packed);
}

void quantize_q4_k(const float* x, BlockQ4_K& b) {
  uint8_t q[kQK];
  quantize_k_levels(x, 15, b.d, b.dmin, b.scales, q);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | q[64 * c + 32 + l] << 4);
}

void quantize_q5_k(const float* x, BlockQ5_K& b) {
  uint8_t q[kQK];
  quantize_k_levels(x, 31, b.d, b.dmin, b.scales, q);
  std::memset(b.qh, 0, sizeof b.qh);
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 32; ++l) b.qh[l] |= static_cast<uint8_t>((q[32 * j + l] >> 4) << j);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      b.qs[32 * c + l] = static_cast<uint8_t>((q[64 * c + l] & 15) | (q[64 * c + 32 + l] & 15) << 4);
}

// The int8 group scales and the biased 6-bit levels of a Q6_K block under super-scale d;
// returns the squared error. A scale that rounds to 128 becomes 127 or, with the group's
// levels negated, -128, whichever fits better.
double fit_q6_k_groups(const float* x, const float scale[16], float d, int8_t sc[16], uint8_t q[kQK]) {
  double total = 0;
  for (int g = 0; g < 16; ++g) {
    const int s = d != 0 ? round_clamp(scale[g] / d, -128, 128) : 0;
    const int options[2] = {std::min(s, 127), -128};
    double best = INFINITY;
    for (int c : std::span(options, s == 128 ? 2 : 1)) {
      uint8_t levels[16];
      const double err = level_error(x + 16 * g, 16, -32, 31, d * c, 0, levels, 32);
      if (err < best) best = err, sc[g] = static_cast<int8_t>(c), std::memcpy(q + 16 * g, levels, 16);
    }
    total += best;
  }
  return total;
}

// The super-scale puts the largest group scale on -128 (int8's extra level), or on +-127, or
// on +128 with that group negated, whichever fits best: the sign of a group's fit is arbitrary
// whenever its levels avoid -32, and trying all four also finds a decoded block's own scales.
void quantize_q6_k(const float* x, BlockQ6_K& b) {
  float scale[16], top = 0;
  for (int g = 0; g < 16; ++g) {
    scale[g] = fit_symmetric_scale(x + 16 * g, 16, -32, 31);
    if (std::fabs(scale[g]) > std::fabs(top)) top = scale[g];
  }
  uint8_t q[kQK];
  double best = INFINITY;
  for (float level : {-128.f, 127.f, -127.f, 128.f}) {
    F16Bytes d;
    d.set(top / level);
    int8_t sc[16];
    uint8_t levels[kQK];
    const double err = fit_q6_k_groups(x, scale, d.value(), sc, levels);
    if (err < best) {
      best = err, b.d = d;
      std::memcpy(b.scales, sc, sizeof sc);
      std::memcpy(q, levels, sizeof q);
    }
  }
  for (int h = 0; h < 2; ++h) {
    const uint8_t* e = q + 128 * h;
    uint8_t* ql = b.ql + 64 * h;
    uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((e[l] & 15) | (e[l + 64] & 15) << 4);
      ql[l + 32] = static_cast<uint8_t>((e[l + 32] & 15) | (e[l + 96] & 15) << 4);
      qh[l] = static_cast<uint8_t>(e[l] >> 4 | (e[l + 32] >> 4) << 2 | (e[l + 64] >> 4) << 4 | (e[l + 96] >> 4) << 6);
    }
  }
}

// ---- decoding one block --------------------------------------------------------------------
// The K-quants' d * sc * q - dmin * m rounds d * sc and dmin * m to float and then fuses the
// multiply-subtract, so that every build and every clone (FMA or not) gives the same bits.

MAXC_SIMD_CLONES void dequantize_q8_0(const BlockQ8_0& b, float* y) {
  const float d = b.d.value();
  for (int i = 0; i < kQ32; ++i) y[i] = b.qs[i] * d;
}

MAXC_SIMD_CLONES void dequantize_q4_0(const BlockQ4_0& b, float* y) {
  const float d = b.d.value();
  for (int i = 0; i < kQ32 / 2; ++i) {
    y[i] = static_cast<float>((b.qs[i] & 15) - 8) * d;
    y[i + 16] = static_cast<float>((b.qs[i] >> 4) - 8) * d;
  }
}

// Q4_K and Q5_K (`qh` null for Q4_K).
MAXC_SIMD_CLONES void dequantize_k(F16Bytes d_half, F16Bytes dmin_half, const uint8_t scales[12],
                                   const uint8_t qs[kQK / 2], const uint8_t* qh, float* y) {
  uint8_t sc[8], m[8], q[kQK];
  unpack_k_scales(scales, sc, m);
  k_levels(qs, qh, q);
  const float d = d_half.value(), dmin = dmin_half.value();
  for (int j = 0; j < 8; ++j) {
    const float s = d * sc[j], o = dmin * m[j];
    for (int l = 0; l < 32; ++l) y[32 * j + l] = std::fma(s, static_cast<float>(q[32 * j + l]), -o);
  }
}

void dequantize_q4_k(const BlockQ4_K& b, float* y) { dequantize_k(b.d, b.dmin, b.scales, b.qs, nullptr, y); }
void dequantize_q5_k(const BlockQ5_K& b, float* y) { dequantize_k(b.d, b.dmin, b.scales, b.qs, b.qh, y); }

MAXC_SIMD_CLONES void dequantize_q6_k(const BlockQ6_K& b, float* y) {
  uint8_t q[kQK];
  q6_k_levels(b, q);
  const float d = b.d.value();
  for (int g = 0; g < 16; ++g) {
    const float s = d * b.scales[g];
    for (int i = 0; i < 16; ++i) y[16 * g + i] = s * static_cast<float>(q[16 * g + i] - 32);
  }
}

// ---- rows ----------------------------------------------------------------------------------

template <typename Block>
void quantize_blocks(void (*fn)(const float*, Block&), const float* src, int64_t blocks, int64_t elements,
                     uint8_t* dst) {
  Block* out = reinterpret_cast<Block*>(dst);
  parallel_for(blocks, 64 * elements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(src + i * elements, out[i]);
  });
}

template <typename Block>
void dequantize_blocks(void (*fn)(const Block&, float*), const uint8_t* src, int64_t blocks, int64_t elements,
                       float* dst) {
  const Block* in = reinterpret_cast<const Block*>(src);
  parallel_for(blocks, 2 * elements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(in[i], dst + i * elements);
  });
}

int64_t block_count(QuantEncoding e, int64_t rows, int64_t k) {
  const QuantEncodingInfo* info = quant_encoding_info(e);
  if (!info) fail(Code::kInvalidArgument, "unknown quantization encoding ", static_cast<int>(e));
  if (rows < 0 || k % info->elements_per_block != 0)
    fail(Code::kInvalidArgument, "cannot (de)quantize ", rows, " rows of ", k, " elements as ", info->name,
         " (blocks of ", info->elements_per_block, ")");
  return rows * (k / info->elements_per_block);
}

}  // namespace

void quantize_rows(QuantEncoding e, const float* src, int64_t rows, int64_t k, uint8_t* dst) {
  const int64_t blocks = block_count(e, rows, k);
  switch (e) {
    case QuantEncoding::kQ4_0: return quantize_blocks(quantize_q4_0, src, blocks, kQ32, dst);
    case QuantEncoding::kQ8_0: return quantize_blocks(quantize_q8_0, src, blocks, kQ32, dst);
    case QuantEncoding::kQ4_K: return quantize_blocks(quantize_q4_k, src, blocks, kQK, dst);
    case QuantEncoding::kQ5_K: return quantize_blocks(quantize_q5_k, src, blocks, kQK, dst);
    case QuantEncoding::kQ6_K: return quantize_blocks(quantize_q6_k, src, blocks, kQK, dst);
    case QuantEncoding::kNone: break;
  }
  fail(Code::kInvalidArgument, "unknown quantization encoding ", static_cast<int>(e));
}

void dequantize_rows(QuantEncoding e, const uint8_t* src, int64_t rows, int64_t k, float* dst) {
  const int64_t blocks = block_count(e, rows, k);
  switch (e) {
    case QuantEncoding::kQ4_0: return dequantize_blocks(dequantize_q4_0, src, blocks, kQ32, dst);
    case QuantEncoding::kQ8_0: return dequantize_blocks(dequantize_q8_0, src, blocks, kQ32, dst);
    case QuantEncoding::kQ4_K: return dequantize_blocks(dequantize_q4_k, src, blocks, kQK, dst);
    case QuantEncoding::kQ5_K: return dequantize_blocks(dequantize_q5_k, src, blocks, kQK, dst);
    case QuantEncoding::kQ6_K: return dequantize_blocks(dequantize_q6_k, src, blocks, kQK, dst);
    case QuantEncoding::kNone: break;
  }
  fail(Code::kInvalidArgument, "unknown quantization encoding ", static_cast<int>(e));
}

}  // namespace maxc::cpu
