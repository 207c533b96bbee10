// top_k and argsort: every line along the axis of a contiguous input seen as [outer, n, inner]
// is sorted by one block (grid-stride over the outer x inner lines) with a bitonic network
// over (key, position) pairs, and its first k pairs are written out: values (top_k) and
// int64 positions. The network needs a total order to give one answer, and the order is the
// CPU's (kernels/cpu/sort.cc), so the result equals its stable sort bit for bit:
//   - NaN is above every number (first when descending, last when ascending);
//   - equal values, -0 and +0 included, and NaNs among themselves, keep the lower position
//     first in both directions;
//   - keys are compared in the CPU's compute type (float for the half floats) and values are
//     written back through it, as the CPU stores them.
// A line padded to a power of two of up to kSortSharedLength pairs sorts in shared memory;
// a longer one, up to kSortMaxLength, in the block's slice of the launch's global scratch
// (common/sort_params.cuh sizes it). The padding pairs sort after every real one.
#include "common/cast.cuh"
#include "common/math.cuh"
#include "common/sort_params.cuh"

namespace maxc {
namespace gpu {

// The strict total order of the CPU's Descending / Ascending over (key, position) pairs,
// with the padding (positions from n on) after every element of the line.
template <class C>
struct SortOrder {
  i32 n;
  bool descending;

  MAXC_HD bool before(C a, i32 ia, C b, i32 ib) const {
    if (ia >= n || ib >= n) return ia < ib;
    const bool an = math::is_nan(a), bn = math::is_nan(b);
    if (an || bn) return (descending ? an && !bn : bn && !an) || (an && bn && ia < ib);
    if (a != b) return descending ? a > b : a < b;
    return ia < ib;
  }
};

template <class C>
__device__ __forceinline__ void swap_pairs(C* keys, i32* pos, i32 i, i32 j) {
  const C k = keys[i];
  keys[i] = keys[j];
  keys[j] = k;
  const i32 p = pos[i];
  pos[i] = pos[j];
  pos[j] = p;
}

// Sorts the padded line in `order`; every thread of the block takes part, and all see the
// result. Each step pairs i with i + stride; a run of `size` goes along the order when
// (i & size) == 0 and against it otherwise, so the runs merge into a sorted whole.
template <class C>
__device__ __forceinline__ void bitonic_sort(C* keys, i32* pos, i32 padded, const SortOrder<C>& order) {
  for (i32 size = 2; size <= padded; size <<= 1) {
    for (i32 stride = size >> 1; stride > 0; stride >>= 1) {
      for (i32 t = threadIdx.x; t < padded / 2; t += blockDim.x) {
        const i32 i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool along = (i & size) == 0;
        if (order.before(keys[j], pos[j], keys[i], pos[i]) == along) swap_pairs(keys, pos, i, j);
      }
      __syncthreads();
    }
  }
}

template <class S, class C>
__device__ __forceinline__ void load_line(const S* x, i64 inner, i32 n, i32 padded, C* keys, i32* pos) {
  for (i32 a = threadIdx.x; a < padded; a += blockDim.x) {
    keys[a] = a < n ? load_as<C>(x[a * inner]) : C(0);
    pos[a] = a;
  }
}

// values is null for argsort, which only wants the positions.
template <class S, class C>
__device__ __forceinline__ void write_line(const C* keys, const i32* pos, i64 k, i64 inner, S* values, i64* indices) {
  for (i64 a = threadIdx.x; a < k; a += blockDim.x) {
    if (values) values[a * inner] = store_as<S>(keys[a]);
    indices[a * inner] = pos[a];
  }
}

// Sorts each [outer, n, inner] line (descending for top_k) and writes its first k pairs
// to values and indices of [outer, k, inner]. `scratch` is used only when the padded line
// is longer than kSortSharedLength: sort_block_scratch_bytes for each block of the grid.
template <class S>
__global__ void sort_lines(const S* __restrict__ x, S* __restrict__ values, i64* __restrict__ indices, i64 outer,
                           i64 n, i64 inner, i64 k, i32 descending, void* scratch) {
  typedef typename ComputeOf<S>::type C;
  __shared__ C shared_keys[kSortSharedLength];
  __shared__ i32 shared_pos[kSortSharedLength];
  const i32 padded = static_cast<i32>(sort_padded_length(n));
  C* keys = shared_keys;
  i32* pos = shared_pos;
  if (padded > kSortSharedLength) {
    char* mine = static_cast<char*>(scratch) + blockIdx.x * sort_block_scratch_bytes(padded, sizeof(C));
    keys = reinterpret_cast<C*>(mine);
    pos = reinterpret_cast<i32*>(mine + padded * static_cast<i64>(sizeof(C)));
  }
  const SortOrder<C> order = {static_cast<i32>(n), descending != 0};
  const i64 lines = outer * inner;
  for (i64 line = blockIdx.x; line < lines; line += gridDim.x) {  // the same trip count for the whole block
    const i64 o = line / inner, c = line - o * inner;
    load_line(x + o * n * inner + c, inner, static_cast<i32>(n), padded, keys, pos);
    __syncthreads();
    bitonic_sort(keys, pos, padded, order);
    write_line(keys, pos, k, inner, values ? values + o * k * inner + c : values, indices + o * k * inner + c);
    __syncthreads();  // the next line overwrites keys that this one's writes read
  }
}

}  // namespace gpu
}  // namespace maxc
