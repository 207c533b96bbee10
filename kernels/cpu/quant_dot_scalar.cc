// The portable dot products: the integer sums of quant_dot_avx2.cc, one element at a time.
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_dot.h"

namespace maxc::cpu {
namespace {

float dot_q8_0(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ8_0*>(wp);
  const auto* x = static_cast<const ActQ8_32*>(xp);
  float acc = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    int32_t s = 0;
    for (int i = 0; i < kQ32; ++i) s += w[b].qs[i] * x[b].qs[i];
    acc += w[b].d.value() * x[b].d * static_cast<float>(s);
  }
  return acc;
}

// Σ (q - 8) x = Σ q x - 8 Σ x, with Σ x kept beside the activations.
float dot_q4_0(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ4_0*>(wp);
  const auto* x = static_cast<const ActQ8_32*>(xp);
  float acc = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    int32_t s = 0;
    for (int i = 0; i < kQ32 / 2; ++i) s += (w[b].qs[i] & 15) * x[b].qs[i] + (w[b].qs[i] >> 4) * x[b].qs[i + 16];
    acc += w[b].d.value() * x[b].d * static_cast<float>(s - 8 * x[b].sum);
  }
  return acc;
}

// Σ (d sc q - dmin m) x over a block: d Σ_j sc_j Σ q x  -  dmin Σ_j m_j Σ x, where the
// sub-block sums of x are two of the activations' 16-element sums. `qh` is null for Q4_K.
float dot_k_block(F16Bytes d, F16Bytes dmin, const uint8_t scales[12], const uint8_t* qs, const uint8_t* qh,
                  const ActQ8_256& x) {
  uint8_t sc[8], m[8], q[kQK];
  unpack_k_scales(scales, sc, m);
  k_levels(qs, qh, q);
  int32_t scaled = 0, mins = 0;
  for (int j = 0; j < 8; ++j) {
    int32_t s = 0;
    for (int l = 0; l < 32; ++l) s += q[32 * j + l] * x.qs[32 * j + l];
    scaled += sc[j] * s;
    mins += m[j] * (x.sums[2 * j] + x.sums[2 * j + 1]);
  }
  return d.value() * x.d * static_cast<float>(scaled) - dmin.value() * x.d * static_cast<float>(mins);
}

float dot_q4_k(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ4_K*>(wp);
  const auto* x = static_cast<const ActQ8_256*>(xp);
  float acc = 0;
  for (int64_t b = 0; b < blocks; ++b) acc += dot_k_block(w[b].d, w[b].dmin, w[b].scales, w[b].qs, nullptr, x[b]);
  return acc;
}

float dot_q5_k(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ5_K*>(wp);
  const auto* x = static_cast<const ActQ8_256*>(xp);
  float acc = 0;
  for (int64_t b = 0; b < blocks; ++b) acc += dot_k_block(w[b].d, w[b].dmin, w[b].scales, w[b].qs, w[b].qh, x[b]);
  return acc;
}

// Σ d sc_g (q - 32) x = d Σ_g sc_g (Σ q x - 32 Σ x).
float dot_q6_k(int64_t blocks, const uint8_t* wp, const void* xp) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(wp);
  const auto* x = static_cast<const ActQ8_256*>(xp);
  float acc = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t q[kQK];
    q6_k_levels(w[b], q);
    int32_t total = 0;
    for (int g = 0; g < 16; ++g) {
      int32_t s = 0;
      for (int i = 0; i < 16; ++i) s += q[16 * g + i] * x[b].qs[16 * g + i];
      total += w[b].scales[g] * (s - 32 * x[b].sums[g]);
    }
    acc += w[b].d.value() * x[b].d * static_cast<float>(total);
  }
  return acc;
}

}  // namespace

QuantDotFn quant_dot_scalar(QuantEncoding e) {
  switch (e) {
    case QuantEncoding::kQ4_0: return dot_q4_0;
    case QuantEncoding::kQ8_0: return dot_q8_0;
    case QuantEncoding::kQ4_K: return dot_q4_k;
    case QuantEncoding::kQ5_K: return dot_q5_k;
    case QuantEncoding::kQ6_K: return dot_q6_k;
    case QuantEncoding::kNone: break;
  }
  return nullptr;
}

}  // namespace maxc::cpu
