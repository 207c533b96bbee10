#include "kernels/cpu/cast_packed_int.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/packed_int.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/elementwise_io.h"
#include "kernels/cpu/minifloat.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// Elements per step: stack buffers that stay in L1. A multiple of 4 (and even), so every
// chunk of a 2-bit, 4-bit or float4 buffer starts on a byte and no two threads write one.
constexpr int64_t kChunk = 1024;
static_assert(kChunk % 4 == 0);

template <int Bits, bool Signed>
struct PackedFormat {
  static constexpr int kBits = Bits;
  static constexpr bool kSigned = Signed;
  static constexpr int kPerByte = 8 / Bits;
};

// Calls fn(PackedFormat<...>{}) for a packed-int dtype; false for any other.
template <typename Fn>
bool visit_packed_int(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kUInt2: fn(PackedFormat<2, false>{}); return true;
    case DType::kInt2: fn(PackedFormat<2, true>{}); return true;
    case DType::kUInt4: fn(PackedFormat<4, false>{}); return true;
    case DType::kInt4: fn(PackedFormat<4, true>{}); return true;
    default: return false;
  }
}

// Elements [begin, begin + n) of a packed buffer; `begin` is a multiple of kChunk.
template <typename F>
void unpack(const void* in, int64_t begin, int64_t n, int64_t* v) {
  const uint8_t* p = static_cast<const uint8_t*>(in) + begin / F::kPerByte;
  for (int64_t i = 0; i < n; ++i)
    v[i] = packed_int_wrap(p[i / F::kPerByte] >> packed_int_shift(F::kBits, i), F::kBits, F::kSigned);
}

// Writes whole bytes, so a last partial byte gets 0 in its unused high bits.
template <typename F>
void pack(const int64_t* v, void* out, int64_t begin, int64_t n) {
  constexpr uint64_t kMask = (uint64_t{1} << F::kBits) - 1;
  uint8_t* p = static_cast<uint8_t*>(out) + begin / F::kPerByte;
  const int64_t bytes = (n + F::kPerByte - 1) / F::kPerByte;
  for (int64_t b = 0; b < bytes; ++b) {
    const int64_t first = b * F::kPerByte, count = std::min<int64_t>(F::kPerByte, n - first);
    uint64_t byte = 0;
    for (int64_t k = 0; k < count; ++k) byte |= (static_cast<uint64_t>(v[first + k]) & kMask) << (k * F::kBits);
    p[b] = static_cast<uint8_t>(byte);
  }
}

// The source's elements [begin, begin + n) as int64 values. A float source means a packed
// integer destination, and rounds half to even: ONNX's rule for its 4-bit types, "rounding to
// the nearest-integer (with ties to even) ... and truncating" (store_ints keeps the low bits).
void load_ints(DType src, const void* in, int64_t begin, int64_t n, int64_t* v) {
  if (visit_packed_int(src, [&](auto f) { unpack<decltype(f)>(in, begin, n, v); })) return;
  const bool minifloat = is_cast_minifloat(src);
  if (!minifloat && !dtype_is_float(src)) {
    elem::load_run(src, in, begin, 1, n, v);
    return;
  }
  double x[kChunk];
  if (minifloat) {
    float f[kChunk];
    minifloat_to_float(src, in, begin, n, f);
    std::copy(f, f + n, x);
  } else {
    elem::load_run(src, in, begin, 1, n, x);
  }
  for (int64_t i = 0; i < n; ++i) v[i] = saturate_to_int64(std::nearbyint(x[i]));
}

// int64 values written as the destination's elements [begin, begin + n).
void store_ints(DType dst, const int64_t* v, void* out, int64_t begin, int64_t n, bool saturate) {
  if (visit_packed_int(dst, [&](auto f) { pack<decltype(f)>(v, out, begin, n); })) return;
  if (is_cast_minifloat(dst)) {
    float x[kChunk];
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(v[i]);
    minifloat_from_float(dst, x, out, begin, n, saturate);
    return;
  }
  elem::store_run(dst, out, begin, v, n);
}

bool is_convertible(DType d) { return dtype_is_packed_int(d) || is_cast_minifloat(d) || is_storage_supported(d); }

}  // namespace

bool cast_packed_int_supports(DType src, DType dst) {
  return (dtype_is_packed_int(src) || dtype_is_packed_int(dst)) && is_convertible(src) && is_convertible(dst);
}

void cast_packed_int(DType src, DType dst, const void* in, void* out, int64_t n, bool saturate) {
  if (!cast_packed_int_supports(src, dst))
    fail(Code::kInvalidArgument, "cast_packed_int: no conversion from ", dtype_label(src), " to ", dtype_label(dst));
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, kChunk * 4, [&](int64_t first, int64_t last) {
    int64_t v[kChunk];
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
      load_ints(src, in, begin, count, v);
      store_ints(dst, v, out, begin, count, saturate);
    }
  });
}

}  // namespace maxc::cpu
