// The positions where a condition holds, in row-major order: nonzero, its count, and
// masked_scatter; and the length repeat_interleave's repeats give. One block of kFlagThreads
// threads walks the elements a chunk at a time, prefix-summing the chunk's flags in shared
// memory, so every position lands where the CPU kernels (kernels/cpu/nonzero.h,
// masked_scatter.h) put it. One block is enough for what these ops see (a detection's boxes,
// a mask over a batch): they are never a model's hot loop.
//
// Elements are tested by their bits: W is the unsigned word of the dtype's width and an
// element is nonzero when (bits & mask) != 0, the mask leaving out a float's sign bit.
#include "common/indexing.cuh"

namespace maxc {
namespace gpu {

constexpr int kFlagThreads = 256;

// This thread's flag's exclusive prefix sum across the block; *total gets the chunk's sum.
__device__ __forceinline__ i64 block_exclusive_scan(i32 flag, i64* total) {
  __shared__ i32 sums[kFlagThreads];
  const int t = threadIdx.x;
  sums[t] = flag;
  __syncthreads();
  for (int offset = 1; offset < kFlagThreads; offset <<= 1) {
    const i32 add = t >= offset ? sums[t - offset] : 0;
    __syncthreads();
    sums[t] += add;
    __syncthreads();
  }
  *total = sums[kFlagThreads - 1];
  const i32 inclusive = sums[t];
  __syncthreads();  // the next chunk may write sums only once every thread has read it
  return inclusive - flag;
}

template <class W>
__device__ __forceinline__ i32 nonzero_at(const W* x, i64 i, i64 n, W mask) {
  return i < n && (x[i] & mask) != W(0) ? 1 : 0;
}

// *count = how many of x's n elements are nonzero.
template <class W>
__global__ void count_nonzero_block(const W* x, i64 n, W mask, i64* count) {
  i64 seen = 0;
  for (i64 start = 0; start < n; start += kFlagThreads) {
    i64 total = 0;
    block_exclusive_scan(nonzero_at(x, start + threadIdx.x, n, mask), &total);
    seen += total;
  }
  if (threadIdx.x == 0) *count = seen;
}

// The index (shape.rank int64s) of each of the first `capacity` nonzero elements of x into
// out; *error set when x has another count than capacity.
template <class W>
__global__ void nonzero_block(const W* x, Shape shape, W mask, i64* out, i64 capacity, i32* error) {
  i64 seen = 0;
  for (i64 start = 0; start < shape.numel; start += kFlagThreads) {
    const i64 i = start + threadIdx.x;
    const i32 flag = nonzero_at(x, i, shape.numel, mask);
    i64 total = 0;
    const i64 at = seen + block_exclusive_scan(flag, &total);
    if (flag && at < capacity) {
      i64 rest = i;
      for (int d = shape.rank - 1; d >= 0; --d) {
        out[at * shape.rank + d] = rest % shape.dims[d];
        rest /= shape.dims[d];
      }
    }
    seen += total;
  }
  if (threadIdx.x == 0 && seen != capacity && error) *error = 1;
}

// out = input, each position where the mask (read through mask_strides) holds taking the
// next of updates' num_updates elements; *error set to the positions it holds at (at most
// INT32_MAX) when updates run out.
template <class W>
__global__ void masked_scatter_block(const W* input, const u8* mask, Layout mask_layout, const W* updates, W* out,
                                     Shape shape, i64 num_updates, i32* error) {
  i64 taken = 0;
  for (i64 start = 0; start < shape.numel; start += kFlagThreads) {
    const i64 i = start + threadIdx.x;
    const i32 flag = i < shape.numel && mask[offset_of(i, shape, mask_layout)] != 0 ? 1 : 0;
    i64 total = 0;
    const i64 at = taken + block_exclusive_scan(flag, &total);
    if (i < shape.numel) out[i] = flag && at < num_updates ? updates[at] : input[i];
    taken += total;
  }
  if (threadIdx.x == 0 && taken > num_updates && error) *error = static_cast<i32>(taken < 2147483647 ? taken : 2147483647);
}

// *total = the length d slices repeated by `counts` (one per slice, or one for all) make:
// negative counts count as 0, and the sum saturates, as on the CPU.
template <class C>
__global__ void count_repeats_one(const C* counts, i64 num_counts, i64 d, i64* total) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const i64 kMax = 0x7fffffffffffffffll;
  i64 sum = 0;
  for (i64 j = 0; j < d; ++j) {
    const C r = counts[num_counts == 1 ? 0 : j];
    const i64 add = r > C(0) ? static_cast<i64>(r) : 0;
    sum = add > kMax - sum ? kMax : sum + add;
  }
  *total = sum;
}

}  // namespace gpu
}  // namespace maxc
