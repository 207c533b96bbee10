#include "kernels/cpu/dnnl_convert.h"

#include "base/error.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

MAXC_SIMD_CLONES void widen_f16(const uint16_t* src, float* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_float(src[i]);
}
MAXC_SIMD_CLONES void widen_bf16(const uint16_t* src, float* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
}
MAXC_SIMD_CLONES void narrow_f16(const float* src, uint16_t* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_f16(src[i]);
}
MAXC_SIMD_CLONES void narrow_bf16(const float* src, uint16_t* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

void require_half(DType d, const char* what) {
  if (d != DType::kFloat16 && d != DType::kBFloat16)
    fail(Code::kInternal, what, ": expected float16 or bfloat16, got ", dtype_label(d));
}

}  // namespace

void widen_to_f32(DType from, const void* src, float* dst, int64_t count) {
  require_half(from, "widen_to_f32");
  const auto* s = static_cast<const uint16_t*>(src);
  parallel_for(count, 4, [&](int64_t begin, int64_t end) {
    if (from == DType::kFloat16) widen_f16(s + begin, dst + begin, end - begin);
    else widen_bf16(s + begin, dst + begin, end - begin);
  });
}

void narrow_from_f32(DType to, const float* src, void* dst, int64_t count) {
  require_half(to, "narrow_from_f32");
  auto* d = static_cast<uint16_t*>(dst);
  parallel_for(count, 8, [&](int64_t begin, int64_t end) {
    if (to == DType::kFloat16) narrow_f16(src + begin, d + begin, end - begin);
    else narrow_bf16(src + begin, d + begin, end - begin);
  });
}

}  // namespace maxc::cpu
