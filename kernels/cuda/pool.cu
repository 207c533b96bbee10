// max_pool2d and avg_pool2d over NHWC tensors, one thread per output element (grid-stride;
// consecutive threads take consecutive channels, so the reads of a tap are coalesced), with
// the CPU kernel's rules (kernels/cpu/pool.h) and its order of summation:
//   - max ignores padding and propagates NaN; a window of padding only gives the type's
//     lowest value (-inf for floats);
//   - avg sums the taps inside the input and scales by 1 / their count, or with
//     count_boundary by 1 / the count of taps inside the padded input; a window of padding
//     only gives zero.
// Half floats compute in float, float64 in double, integers (max only) in their own type.
#include "common/cast.cuh"
#include "common/conv_params.cuh"
#include "common/launch.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

// What max pools in: integers in their storage type, whose lowest value is the answer for a
// window of padding only (the CPU's numeric_limits<T>::lowest()); floats in their compute type.
template <class S>
struct PoolMaxOf {
  typedef S type;
  MAXC_HD static S lowest() {
    if (IsSignedInt<S>::value) return static_cast<S>(u64(1) << (8 * sizeof(S) - 1));
    return S(0);
  }
};
template <>
struct PoolMaxOf<half> {
  typedef float type;
  MAXC_HD static float lowest() { return -math::infinity<float>(); }
};
template <>
struct PoolMaxOf<bfloat16> {
  typedef float type;
  MAXC_HD static float lowest() { return -math::infinity<float>(); }
};
template <>
struct PoolMaxOf<float> {
  typedef float type;
  MAXC_HD static float lowest() { return -math::infinity<float>(); }
};
template <>
struct PoolMaxOf<double> {
  typedef double type;
  MAXC_HD static double lowest() { return -math::infinity<double>(); }
};

// The window of output element e: its pixel's first input row and column, batch and channel.
struct PoolWindow {
  i64 n, h0, w0, c;
};

__device__ __forceinline__ PoolWindow pool_window(const PoolParams& p, i64 e) {
  PoolWindow w;
  w.c = e % p.channels;
  const i64 pixel = e / p.channels;
  w.w0 = pixel % p.out_w * p.stride_w - p.pad_w;
  w.h0 = pixel / p.out_w % p.out_h * p.stride_h - p.pad_h;
  w.n = pixel / (p.out_w * p.out_h);
  return w;
}

template <class S>
__device__ __forceinline__ const S* pool_tap(const S* x, const PoolParams& p, const PoolWindow& w, i64 i, i64 j) {
  return x + ((w.n * p.in_h + w.h0 + i * p.dilation_h) * p.in_w + w.w0 + j * p.dilation_w) * p.channels + w.c;
}

template <class S>
__global__ void max_pool2d(const S* __restrict__ x, S* __restrict__ y, PoolParams p) {
  typedef typename PoolMaxOf<S>::type A;
  const i64 total = p.batch * p.out_h * p.out_w * p.channels;
  for (i64 e = first_index(); e < total; e += index_step()) {
    const PoolWindow w = pool_window(p, e);
    const PoolTaps th = pool_taps(w.h0, p.kernel_h, p.dilation_h, 0, p.in_h);
    const PoolTaps tw = pool_taps(w.w0, p.kernel_w, p.dilation_w, 0, p.in_w);
    A acc = PoolMaxOf<S>::lowest();
    for (i64 i = th.first; i < th.last; ++i)
      for (i64 j = tw.first; j < tw.last; ++j) {
        const A v = load_as<A>(*pool_tap(x, p, w, i, j));
        if (v > acc || v != v) acc = v;  // NaN wins, as in numpy's max
      }
    y[e] = store_as<S>(acc);
  }
}

template <class S>
__global__ void avg_pool2d(const S* __restrict__ x, S* __restrict__ y, PoolParams p) {
  typedef typename ComputeOf<S>::type C;
  const i64 total = p.batch * p.out_h * p.out_w * p.channels;
  for (i64 e = first_index(); e < total; e += index_step()) {
    const PoolWindow w = pool_window(p, e);
    const PoolTaps th = pool_taps(w.h0, p.kernel_h, p.dilation_h, 0, p.in_h);
    const PoolTaps tw = pool_taps(w.w0, p.kernel_w, p.dilation_w, 0, p.in_w);
    i64 divisor = pool_tap_count(th) * pool_tap_count(tw);
    if (p.count_boundary)
      divisor = pool_tap_count(pool_taps(w.h0, p.kernel_h, p.dilation_h, -p.pad_h, p.in_h + p.pad_h)) *
                pool_tap_count(pool_taps(w.w0, p.kernel_w, p.dilation_w, -p.pad_w, p.in_w + p.pad_w));
    C acc = C(0);
    for (i64 i = th.first; i < th.last; ++i)
      for (i64 j = tw.first; j < tw.last; ++j) acc += load_as<C>(*pool_tap(x, p, w, i, j));
    const C scale = divisor > 0 ? C(1) / static_cast<C>(divisor) : C(0);
    y[e] = store_as<S>(acc * scale);
  }
}

}  // namespace gpu
}  // namespace maxc
