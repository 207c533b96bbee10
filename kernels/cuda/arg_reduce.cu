// argmax and argmin along one axis of a contiguous input seen as [outer, n, inner], with
// int64 results of [outer, inner]: one thread per line (grid-stride), walking its n
// elements in order. The CPU's rules (kernels/cpu/reduce_arg.cc): the first index of the
// extreme value (ties keep the earlier index, and -0 ties +0), and when the line holds a
// NaN, the index of its first NaN. n must be at least 1 (the lowering refuses empty axes).
#include "common/cast.cuh"
#include "common/launch.cuh"
#include "common/math.cuh"

namespace maxc {
namespace gpu {

struct ArgMax {
  template <class C>
  MAXC_HD bool better(C v, C best) const {
    return v > best;
  }
};

struct ArgMin {
  template <class C>
  MAXC_HD bool better(C v, C best) const {
    return v < best;
  }
};

template <class Op, class S>
__global__ void arg_reduce_lines(const S* __restrict__ x, i64* __restrict__ y, i64 outer, i64 n, i64 inner) {
  typedef typename ComputeOf<S>::type C;
  const i64 lines = outer * inner;
  for (i64 line = first_index(); line < lines; line += index_step()) {
    const i64 o = line / inner, c = line - o * inner;
    const S* xl = x + o * n * inner + c;
    C best = load_as<C>(xl[0]);
    i64 index = 0;
    for (i64 a = 1; a < n && !math::is_nan(best); ++a) {
      const C v = load_as<C>(xl[a * inner]);
      if (Op().better(v, best) || math::is_nan(v)) {
        best = v;
        index = a;
      }
    }
    y[line] = index;
  }
}

}  // namespace gpu
}  // namespace maxc
