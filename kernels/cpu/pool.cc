#include "kernels/cpu/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec8.h"

namespace maxc::cpu {
namespace {

// Storage type S computed in Acc: halves in float, the rest in themselves.
template <typename S, typename Acc, Acc (*Load)(S), S (*Store)(Acc)>
struct Elem {
  using Storage = S;
  using Compute = Acc;
  static Acc load(S x) { return Load(x); }
  static S store(Acc x) { return Store(x); }
};

template <typename T>
T same(T x) {
  return x;
}

template <typename T>
using Plain = Elem<T, T, same<T>, same<T>>;
using Half = Elem<uint16_t, float, f16_to_float, float_to_f16>;
using BHalf = Elem<uint16_t, float, bf16_to_float, float_to_bf16>;

// The taps of one window along one axis: [first, last) of i, for rows start + i * dilation.
struct Taps {
  int64_t first, last;
  int64_t count() const { return last > first ? last - first : 0; }
};

Taps taps_within(int64_t start, int64_t kernel, int64_t dilation, int64_t lo, int64_t hi) {
  Taps t{0, kernel};
  while (t.first < kernel && start + t.first * dilation < lo) ++t.first;
  while (t.last > t.first && start + (t.last - 1) * dilation >= hi) --t.last;
  return t;
}

// Calls fn(output pixel, batch, first input row, first input column, accumulator of one
// value per channel) for every output pixel, in parallel.
template <typename Acc, typename Fn>
void for_each_window(const Pool2dShape& s, Fn&& fn) {
  const int64_t pixels = s.batch * s.out_h * s.out_w;
  parallel_for(pixels, s.channels * s.kernel_h * s.kernel_w, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(s.channels);
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / (s.out_h * s.out_w), oh = p / s.out_w % s.out_h, ow = p % s.out_w;
      fn(p, n, oh * s.stride_h - s.pad_h, ow * s.stride_w - s.pad_w, acc.data());
    }
  });
}

template <typename E>
void max_pool_typed(const Pool2dShape& s, const void* in, void* out) {
  using S = typename E::Storage;
  using Acc = typename E::Compute;
  const auto* x = static_cast<const S*>(in);
  auto* y = static_cast<S*>(out);
  const int64_t c = s.channels;
  constexpr Acc lowest = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                                 : std::numeric_limits<Acc>::lowest();
  for_each_window<Acc>(s, [&](int64_t p, int64_t n, int64_t h0, int64_t w0, Acc* acc) {
    const Taps th = taps_within(h0, s.kernel_h, s.dilation_h, 0, s.in_h);
    const Taps tw = taps_within(w0, s.kernel_w, s.dilation_w, 0, s.in_w);
    std::fill(acc, acc + c, lowest);
    for (int64_t i = th.first; i < th.last; ++i)
      for (int64_t j = tw.first; j < tw.last; ++j) {
        const S* row = x + ((n * s.in_h + h0 + i * s.dilation_h) * s.in_w + w0 + j * s.dilation_w) * c;
        // A select, not a conditional store, so the channel loop vectorizes.
#pragma omp simd
        for (int64_t ch = 0; ch < c; ++ch) {
          const Acc v = E::load(row[ch]);
          if constexpr (std::is_floating_point_v<Acc>) {
            acc[ch] = v > acc[ch] || v != v ? v : acc[ch];  // NaN wins, as in numpy's max
          } else {
            acc[ch] = v > acc[ch] ? v : acc[ch];
          }
        }
      }
    for (int64_t ch = 0; ch < c; ++ch) y[p * c + ch] = E::store(acc[ch]);
  });
}

// float32 over channels in multiples of 8 (most CNN widths, NHWC): each window reduces in
// eight-float registers, in the AVX2 clone where the CPU has it, instead of the generic loop's
// baseline code and per-pixel channel buffer (4-5x faster on ResNet-50's stem pool). A tap's
// address is computed once for N registers of channels: per register, the tap loop's
// arithmetic cost more than the load and max it carried (SqueezeNet's 3x3 stride-2 pool
// over 64 channels, 2x faster with N = 4).
template <int N>
[[gnu::always_inline]] inline void max_window(const Pool2dShape& s, const float* x, int64_t h0, int64_t w0, Taps th,
                                              Taps tw, float* y) {
  const V8 lowest = V8{} - std::numeric_limits<float>::infinity();
  V8 acc[N];
  for (int k = 0; k < N; ++k) acc[k] = lowest;
  for (int64_t i = th.first; i < th.last; ++i)
    for (int64_t j = tw.first; j < tw.last; ++j) {
      const float* tap = x + ((h0 + i * s.dilation_h) * s.in_w + w0 + j * s.dilation_w) * s.channels;
      for (int k = 0; k < N; ++k) {
        const V8 v = load8(tap + 8 * k);
        acc[k] = (v > acc[k]) | (v != v) ? v : acc[k];  // NaN wins, as in the generic loop
      }
    }
  for (int k = 0; k < N; ++k) store8(y + 8 * k, acc[k]);
}

MAXC_SIMD_CLONES void max_pool_f32_pixels(const Pool2dShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  const int64_t c = s.channels;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t n = p / (s.out_h * s.out_w), oh = p / s.out_w % s.out_h, ow = p % s.out_w;
    const int64_t h0 = oh * s.stride_h - s.pad_h, w0 = ow * s.stride_w - s.pad_w;
    const Taps th = taps_within(h0, s.kernel_h, s.dilation_h, 0, s.in_h);
    const Taps tw = taps_within(w0, s.kernel_w, s.dilation_w, 0, s.in_w);
    const float* image = x + n * s.in_h * s.in_w * c;
    int64_t ch = 0;
    for (; ch + 32 <= c; ch += 32) max_window<4>(s, image + ch, h0, w0, th, tw, y + p * c + ch);
    for (; ch < c; ch += 8) max_window<1>(s, image + ch, h0, w0, th, tw, y + p * c + ch);
  }
}

void max_pool_f32(const Pool2dShape& s, const void* in, void* out) {
  parallel_for(s.batch * s.out_h * s.out_w, s.channels * s.kernel_h * s.kernel_w, [&](int64_t begin, int64_t end) {
    max_pool_f32_pixels(s, static_cast<const float*>(in), static_cast<float*>(out), begin, end);
  });
}

template <typename E>
void avg_pool_typed(const Pool2dShape& s, bool count_boundary, const void* in, void* out) {
  using S = typename E::Storage;
  using Acc = typename E::Compute;
  const auto* x = static_cast<const S*>(in);
  auto* y = static_cast<S*>(out);
  const int64_t c = s.channels;
  for_each_window<Acc>(s, [&](int64_t p, int64_t n, int64_t h0, int64_t w0, Acc* acc) {
    const Taps th = taps_within(h0, s.kernel_h, s.dilation_h, 0, s.in_h);
    const Taps tw = taps_within(w0, s.kernel_w, s.dilation_w, 0, s.in_w);
    int64_t divisor = th.count() * tw.count();
    if (count_boundary)
      divisor = taps_within(h0, s.kernel_h, s.dilation_h, -s.pad_h, s.in_h + s.pad_h).count() *
                taps_within(w0, s.kernel_w, s.dilation_w, -s.pad_w, s.in_w + s.pad_w).count();
    std::fill(acc, acc + c, Acc(0));
    for (int64_t i = th.first; i < th.last; ++i)
      for (int64_t j = tw.first; j < tw.last; ++j) {
        const S* row = x + ((n * s.in_h + h0 + i * s.dilation_h) * s.in_w + w0 + j * s.dilation_w) * c;
        for (int64_t ch = 0; ch < c; ++ch) acc[ch] += E::load(row[ch]);
      }
    // A window of padding only averages zeros.
    const Acc scale = divisor > 0 ? Acc(1) / static_cast<Acc>(divisor) : Acc(0);
    for (int64_t ch = 0; ch < c; ++ch) y[p * c + ch] = E::store(acc[ch] * scale);
  });
}

const char* name_of(DType d) { return dtype_label(d); }

}  // namespace

bool max_pool2d_supports(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool avg_pool2d_supports(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

void max_pool2d(DType dtype, const Pool2dShape& s, const void* x, void* out) {
  switch (dtype) {
    case DType::kFloat16: return max_pool_typed<Half>(s, x, out);
    case DType::kBFloat16: return max_pool_typed<BHalf>(s, x, out);
    case DType::kFloat32:
      return s.channels % 8 == 0 ? max_pool_f32(s, x, out) : max_pool_typed<Plain<float>>(s, x, out);
    case DType::kFloat64: return max_pool_typed<Plain<double>>(s, x, out);
    case DType::kInt8: return max_pool_typed<Plain<int8_t>>(s, x, out);
    case DType::kInt16: return max_pool_typed<Plain<int16_t>>(s, x, out);
    case DType::kInt32: return max_pool_typed<Plain<int32_t>>(s, x, out);
    case DType::kInt64: return max_pool_typed<Plain<int64_t>>(s, x, out);
    case DType::kUInt8: return max_pool_typed<Plain<uint8_t>>(s, x, out);
    case DType::kUInt16: return max_pool_typed<Plain<uint16_t>>(s, x, out);
    case DType::kUInt32: return max_pool_typed<Plain<uint32_t>>(s, x, out);
    case DType::kUInt64: return max_pool_typed<Plain<uint64_t>>(s, x, out);
    default: fail(Code::kUnimplemented, "max_pool2d: no CPU kernel for dtype ", name_of(dtype));
  }
}

void avg_pool2d(DType dtype, const Pool2dShape& s, bool count_boundary, const void* x, void* out) {
  switch (dtype) {
    case DType::kFloat16: return avg_pool_typed<Half>(s, count_boundary, x, out);
    case DType::kBFloat16: return avg_pool_typed<BHalf>(s, count_boundary, x, out);
    case DType::kFloat32: return avg_pool_typed<Plain<float>>(s, count_boundary, x, out);
    case DType::kFloat64: return avg_pool_typed<Plain<double>>(s, count_boundary, x, out);
    default: fail(Code::kUnimplemented, "avg_pool2d: no CPU kernel for dtype ", name_of(dtype));
  }
}

}  // namespace maxc::cpu
