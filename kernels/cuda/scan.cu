// cumsum along one axis of a contiguous input seen as [outer, n, inner]: one thread per line
// (outer x inner of them, grid-stride), walking its n elements in order, forward or in
// reverse, inclusive or exclusive. The accumulation is the CPU's (kernels/cpu/scan.cc) in
// the same order and type, so results match it bit for bit: float for float32 and the half
// floats (rounded once per stored element), double for float64, and for integers unsigned
// 64-bit sums stored back modulo 2^bits, as numpy wraps.
#include "common/cast.cuh"
#include "common/launch.cuh"

namespace maxc {
namespace gpu {

template <class S>
struct ScanAcc {
  typedef typename ComputeOf<S>::type type;
};
template <>
struct ScanAcc<i32> {
  typedef u64 type;
};
template <>
struct ScanAcc<i64> {
  typedef u64 type;
};

template <class A, class S>
__device__ __forceinline__ A scan_load(S s) {
  if constexpr (IsSignedInt<S>::value) return static_cast<A>(static_cast<i64>(s));  // sign-extended, then wrapped
  else return load_as<A>(s);
}

template <class S, class A>
__device__ __forceinline__ S scan_store(A acc) {
  if constexpr (IsSignedInt<S>::value) return static_cast<S>(static_cast<i64>(acc));  // modulo 2^bits
  else return store_as<S>(acc);
}

template <class S>
__global__ void cumsum_lines(const S* x, S* y, i64 outer, i64 n, i64 inner, i32 exclusive, i32 reverse) {
  typedef typename ScanAcc<S>::type A;
  const i64 lines = outer * inner;
  for (i64 line = first_index(); line < lines; line += index_step()) {
    const i64 o = line / inner, c = line - o * inner;
    const i64 base = o * n * inner + c;
    A acc = A(0);
    for (i64 s = 0; s < n; ++s) {
      const i64 at = base + (reverse ? n - 1 - s : s) * inner;
      const A v = scan_load<A>(x[at]);  // read before the write: y may be x
      if (exclusive) {
        y[at] = scan_store<S>(acc);
        acc += v;
      } else {
        acc += v;
        y[at] = scan_store<S>(acc);
      }
    }
  }
}

}  // namespace gpu
}  // namespace maxc
