// The layout ops' kernels (engine/lower_gpu/layout.cc): a copy strided on both sides, a
// constant pad, band_part, range, outer, and repeat_interleave with per-slice counts. The
// copies move values as raw words of their width (u8 .. u64), so they serve every dtype.
#include "common/cast.cuh"
#include "common/elementwise_ops.cuh"
#include "common/launch.cuh"
#include "common/layout.cuh"

namespace maxc {
namespace gpu {

// Element i of `shape` (row-major) read at its offset in x and written at its offset in y:
// slice reads through strides, concat and stack write each input into its window of the
// output, split and chunk read each output's window of the input.
template <class W>
__global__ void copy_between(const W* __restrict__ x, Layout x_layout, W* __restrict__ y, Layout y_layout,
                             Shape shape) {
  for (i64 i = first_index(); i < shape.numel; i += index_step())
    y[offset_of(i, shape, y_layout)] = x[offset_of(i, shape, x_layout)];
}

// y (`shape`) is x (dense, g.in_dims) moved by g.before along each dim, `fill` elsewhere.
template <class W>
__global__ void pad_constant(const W* __restrict__ x, PadGeometry g, W* __restrict__ y, Shape shape, W fill) {
  for (i64 i = first_index(); i < shape.numel; i += index_step()) {
    i64 rest = i, src = 0, stride = 1;
    bool inside = true;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const i64 k = rest % shape.dims[d] - g.before[d];
      rest /= shape.dims[d];
      inside = inside && k >= 0 && k < g.in_dims[d];
      src += k * stride;
      stride *= g.in_dims[d];
    }
    y[i] = inside ? x[src] : fill;
  }
}

// x as [rows, n] with rows = batch * m: element (i, j) of each [m, n] matrix is kept when it
// lies in the band (j - i <= upper, i - j <= lower; a negative bound is no bound), or outside
// it when `exclude`; the rest is zero. Each element is read before it is written: in place is fine.
template <class W>
__global__ void band_part(const W* x, W* y, i64 rows, i64 m, i64 n, i64 lower, i64 upper, i32 exclude) {
  const i64 total = rows * n;
  for (i64 e = first_index(); e < total; e += index_step()) {
    const i64 i = (e / n) % m, j = e % n;
    const bool in_band = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
    y[e] = in_band != (exclude != 0) ? x[e] : W(0);
  }
}

// y[i] = start + i * step (not a running sum, so long float ranges do not drift), in the
// dtype's compute type; integers wrap as the CPU's do. start and step are one element each.
template <class S>
__global__ void range_fill(const S* __restrict__ start, const S* __restrict__ step, S* __restrict__ y, i64 n) {
  typedef typename ComputeOf<S>::type C;
  const C s = load_as<C>(*start), d = load_as<C>(*step);
  for (i64 i = first_index(); i < n; i += index_step()) {
    if constexpr (IsFloat<C>::value) y[i] = store_as<S>(s + static_cast<C>(i) * d);
    else y[i] = store_as<S>(op::wrap_add(s, op::wrap_mul(static_cast<C>(i), d)));
  }
}

// y[i][j] = a[i] * b[j] for y [na, nb].
template <class S>
__global__ void outer(const S* __restrict__ a, const S* __restrict__ b, S* __restrict__ y, i64 na, i64 nb) {
  typedef typename ComputeOf<S>::type C;
  const i64 total = na * nb;
  for (i64 i = first_index(); i < total; i += index_step()) {
    const C u = load_as<C>(a[i / nb]), v = load_as<C>(b[i % nb]);
    if constexpr (IsFloat<C>::value) y[i] = store_as<S>(u * v);
    else y[i] = store_as<S>(op::wrap_mul(u, v));
  }
}

// repeat_interleave, step 1 (one thread: the axis is short next to the data it repeats):
// starts[j] = where slice j's copies begin along the output axis, for j <= d, clamped to
// out_len. A negative count counts as 0 and the sum saturates, as on the CPU.
template <class I>
__global__ void repeat_starts(const I* __restrict__ counts, i64 num_counts, i64 d, i64 out_len,
                              i64* __restrict__ starts) {
  if (first_index() != 0) return;
  i64 total = 0;
  starts[0] = 0;
  for (i64 j = 0; j < d; ++j) {
    const I r = counts[num_counts == 1 ? 0 : j];
    const u64 add = r > I(0) ? static_cast<u64>(r) : 0;
    const i64 room = 0x7fffffffffffffffll - total;
    total = add > static_cast<u64>(room) ? 0x7fffffffffffffffll : total + static_cast<i64>(add);
    starts[j + 1] = total < out_len ? total : out_len;
  }
}

// Step 2: y [outer, out_len, inner] from x [outer, d, inner]; output row k copies the slice j
// with starts[j] <= k < starts[j + 1] (a binary search), and rows past starts[d] are zeros.
template <class W>
__global__ void repeat_rows(const W* __restrict__ x, const i64* __restrict__ starts, W* __restrict__ y, i64 outer,
                            i64 d, i64 out_len, i64 inner) {
  const i64 total = outer * out_len * inner;
  for (i64 i = first_index(); i < total; i += index_step()) {
    const i64 in = i % inner, rest = i / inner;
    const i64 k = rest % out_len, o = rest / out_len;
    i64 lo = 0, hi = d + 1;  // the first j with starts[j] > k lies in [lo, hi]
    while (lo < hi) {
      const i64 mid = (lo + hi) / 2;
      if (starts[mid] > k) hi = mid;
      else lo = mid + 1;
    }
    y[i] = lo > d ? W(0) : x[(o * d + lo - 1) * inner + in];
  }
}

}  // namespace gpu
}  // namespace maxc
