#include "kernels/cpu/quant_activation.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_round.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

bool is_k_quant(QuantEncoding e) {
  return e == QuantEncoding::kQ4_K || e == QuantEncoding::kQ5_K || e == QuantEncoding::kQ6_K;
}

// Quantizes n elements (|x| <= 127 / inv after scaling) and returns their sum. The clamp
// (NaN to -127) keeps the conversion defined whatever x holds.
MAXC_SIMD_CLONES int32_t quantize_run(const float* x, int n, float inv, int8_t* q) {
  int32_t sum = 0;
  for (int i = 0; i < n; ++i) {
    const int v = static_cast<int>(round_small(clamp_to(x[i] * inv, -127.f, 127.f)));
    q[i] = static_cast<int8_t>(v);
    sum += v;
  }
  return sum;
}

MAXC_SIMD_CLONES float max_magnitude(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

void quantize_act_32(const float* x, ActQ8_32& b) {
  const float amax = max_magnitude(x, kQ32);
  b.d = amax / 127;
  b.sum = quantize_run(x, kQ32, amax > 0 ? 127 / amax : 0, b.qs);
}

void quantize_act_256(const float* x, ActQ8_256& b) {
  const float amax = max_magnitude(x, kQK);
  b.d = amax / 127;
  const float inv = amax > 0 ? 127 / amax : 0;
  for (int g = 0; g < kQK / 16; ++g) b.sums[g] = static_cast<int16_t>(quantize_run(x + 16 * g, 16, inv, b.qs + 16 * g));
}

}  // namespace

int64_t activation_block_elements(QuantEncoding e) { return is_k_quant(e) ? kQK : kQ32; }

int64_t activation_row_bytes(QuantEncoding e, int64_t k) {
  return is_k_quant(e) ? k / kQK * static_cast<int64_t>(sizeof(ActQ8_256))
                       : k / kQ32 * static_cast<int64_t>(sizeof(ActQ8_32));
}

void quantize_activation_row(QuantEncoding e, const float* x, int64_t k, void* dst) {
  if (is_k_quant(e)) {
    auto* out = static_cast<ActQ8_256*>(dst);
    for (int64_t b = 0; b < k / kQK; ++b) quantize_act_256(x + b * kQK, out[b]);
  } else {
    auto* out = static_cast<ActQ8_32*>(dst);
    for (int64_t b = 0; b < k / kQ32; ++b) quantize_act_32(x + b * kQ32, out[b]);
  }
}

}  // namespace maxc::cpu
