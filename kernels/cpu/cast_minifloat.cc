#include "kernels/cpu/cast_minifloat.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise_io.h"
#include "kernels/cpu/minifloat.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Elements per step: a stack buffer of floats that stays in L1. Even, so that every float4
// chunk starts on a byte and no two threads write one byte.
constexpr int64_t kChunk = 1024;
static_assert(kChunk % 2 == 0);

template <MiniFormat F>
void decode(const void* in, int64_t begin, int64_t n, float* x) {
  const auto& table = kMiniTable<F>;
  if constexpr (F.bits() == 4) {
    const uint8_t* p = static_cast<const uint8_t*>(in) + begin / 2;
    for (int64_t i = 0; i < n; ++i) x[i] = table[(p[i >> 1] >> ((i & 1) * 4)) & 0xfu];
  } else {
    const uint8_t* p = static_cast<const uint8_t*>(in) + begin;
    for (int64_t i = 0; i < n; ++i) x[i] = table[p[i]];
  }
}

template <MiniFormat F, typename T>
void encode(const T* x, void* out, int64_t begin, int64_t n, bool saturate) {
  if constexpr (F.bits() == 4) {
    uint8_t* p = static_cast<uint8_t*>(out) + begin / 2;
    const int64_t pairs = n / 2;
#pragma omp simd
    for (int64_t i = 0; i < pairs; ++i)
      p[i] = static_cast<uint8_t>(minifloat_from<F>(x[2 * i], saturate) |
                                  (minifloat_from<F>(x[2 * i + 1], saturate) << 4));
    if (n % 2 != 0) p[pairs] = minifloat_from<F>(x[n - 1], saturate);
  } else {
    uint8_t* p = static_cast<uint8_t*>(out) + begin;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) p[i] = minifloat_from<F>(x[i], saturate);
  }
}

template <typename T>
void encode_to(DType dst, const T* x, void* out, int64_t begin, int64_t n, bool saturate) {
  visit_minifloat(dst, [&](auto f) { encode<decltype(f)::value>(x, out, begin, n, saturate); });
}

void decode_e8m0(const void* in, int64_t begin, int64_t n, float* x) {
  const uint8_t* p = static_cast<const uint8_t*>(in) + begin;
  for (int64_t i = 0; i < n; ++i) x[i] = kE8M0Table[p[i]];
}

void encode_e8m0(const float* x, void* out, int64_t begin, int64_t n, bool saturate) {
  uint8_t* p = static_cast<uint8_t*>(out) + begin;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) p[i] = e8m0_from(x[i], saturate);
}

// Elements [begin, begin + n) of a float8/float4 buffer as floats; false for other dtypes.
bool decode_any(DType src, const void* in, int64_t begin, int64_t n, float* x) {
  if (is_e8m0(src)) return decode_e8m0(in, begin, n, x), true;
  return visit_minifloat(src, [&](auto f) { decode<decltype(f)::value>(in, begin, n, x); });
}

// Floats written as elements [begin, begin + n) of a float8/float4 buffer; false for others.
bool encode_any(DType dst, const float* x, void* out, int64_t begin, int64_t n, bool saturate) {
  if (is_e8m0(dst)) return encode_e8m0(x, out, begin, n, saturate), true;
  if (!is_minifloat(dst)) return false;
  encode_to(dst, x, out, begin, n, saturate);
  return true;
}

// Elements [begin, begin + n) of one chunk.
void cast_chunk(DType src, DType dst, const void* in, void* out, int64_t begin, int64_t n, bool saturate) {
  if (src == DType::kFloat64 && is_minifloat(dst)) {
    encode_to(dst, static_cast<const double*>(in) + begin, out, begin, n, saturate);
    return;
  }
  float x[kChunk];
  if (!decode_any(src, in, begin, n, x)) elem::load_run(src, in, begin, 1, n, x);
  if (!encode_any(dst, x, out, begin, n, saturate)) elem::store_run(dst, out, begin, x, n);
}

}  // namespace

bool is_cast_minifloat(DType dtype) { return is_minifloat(dtype) || is_e8m0(dtype); }

void minifloat_to_float(DType mini, const void* in, int64_t begin, int64_t n, float* out) {
  if (!decode_any(mini, in, begin, n, out))
    fail(Code::kInvalidArgument, "minifloat_to_float: ", dtype_label(mini), " is not a float8 or float4 dtype");
}

void minifloat_from_float(DType mini, const float* x, void* out, int64_t begin, int64_t n, bool saturate) {
  if (!encode_any(mini, x, out, begin, n, saturate))
    fail(Code::kInvalidArgument, "minifloat_from_float: ", dtype_label(mini), " is not a float8 or float4 dtype");
}

bool cast_minifloat_supports(DType src, DType dst) {
  const bool a = is_cast_minifloat(src), b = is_cast_minifloat(dst);
  return (a || b) && (a || is_storage_supported(src)) && (b || is_storage_supported(dst));
}

void cast_minifloat(DType src, DType dst, const void* in, void* out, int64_t n, bool saturate) {
  if (!cast_minifloat_supports(src, dst))
    fail(Code::kInvalidArgument, "cast_minifloat: no conversion from ", dtype_label(src),
         " to ", dtype_label(dst));
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, kChunk * 8, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * kChunk;
      cast_chunk(src, dst, in, out, begin, std::min(kChunk, n - begin), saturate);
    }
  });
}

}  // namespace maxc::cpu
