// The value reductions (sum, mean, max, min) as policies of a storage type S: the type they
// accumulate in (A), its identity, how two partial results combine, and how the total becomes
// a stored value. The meaning is the CPU's (kernels/cpu/reduce_ops.h): floats accumulate in
// float (double for float64), integer sums wrap in u64, integer means average in double and
// truncate, max/min propagate NaN, and a mean over nothing is NaN (0 for integers).
#ifndef MAXC_GPU_REDUCE_OPS_CUH
#define MAXC_GPU_REDUCE_OPS_CUH

#include "cast.cuh"
#include "math.cuh"

namespace maxc {
namespace gpu {

template <class S>
struct SumAcc {
  typedef typename Select<IsFloat<typename ComputeOf<S>::type>::value, typename ComputeOf<S>::type, u64>::type type;
};

template <class S>
struct Sum {
  typedef typename SumAcc<S>::type A;
  MAXC_HD static A identity() { return A(0); }
  MAXC_HD static A load(S s) { return load_as<A>(s); }
  MAXC_HD static A combine(A a, A b) { return a + b; }
  MAXC_HD static S finish(A a, i64) { return store_as<S>(a); }
};

template <class S>
struct Mean {
  typedef typename ComputeOf<S>::type C;
  typedef typename Select<IsFloat<C>::value, C, double>::type A;
  MAXC_HD static A identity() { return A(0); }
  MAXC_HD static A load(S s) { return static_cast<A>(load_as<C>(s)); }
  MAXC_HD static A combine(A a, A b) { return a + b; }
  MAXC_HD static S finish(A a, i64 n) {
    if constexpr (IsFloat<C>::value) {
      return store_as<S>(a / static_cast<A>(n));  // 0/0: NaN
    } else {
      return n == 0 ? store_as<S>(C(0)) : store_as<S>(static_cast<C>(a / static_cast<double>(n)));
    }
  }
};

template <class S>
struct Max {
  typedef typename ComputeOf<S>::type A;
  MAXC_HD static A identity() { return math::lowest<A>(); }
  MAXC_HD static A load(S s) { return load_as<A>(s); }
  MAXC_HD static A combine(A a, A b) { return (b > a || math::is_nan(b)) ? b : a; }  // NaN wins and stays
  MAXC_HD static S finish(A a, i64) { return store_as<S>(a); }
};

template <class S>
struct Min {
  typedef typename ComputeOf<S>::type A;
  MAXC_HD static A identity() { return math::highest<A>(); }
  MAXC_HD static A load(S s) { return load_as<A>(s); }
  MAXC_HD static A combine(A a, A b) { return (b < a || math::is_nan(b)) ? b : a; }
  MAXC_HD static S finish(A a, i64) { return store_as<S>(a); }
};

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_REDUCE_OPS_CUH
