// Arg reductions: argmax and argmin (see reduce.h), with int64 results.
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

using namespace reduce_detail;

// Two passes over a row: the extreme value (vectorized), then the first index holding it,
// or the first NaN when the extreme is NaN. Cheaper than carrying indices through the
// vector loop, and the row is in cache for the second pass.
template <typename Op, typename T>
MAXC_SIMD_CLONES void arg_reduce_rows(const T* x, int64_t* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * n;
    const auto best = reduce_row<Op>(row, n);
    int64_t i = 0;
    if (is_nan(best)) {
      while (i < n && !is_nan(load(row[i]))) ++i;
    } else {
      while (i < n && load(row[i]) != best) ++i;
    }
    y[r] = i;
  }
}

// x points at [o, 0, c0] and y at [o, c0]; `width` columns, at most kColumnBlock.
template <typename Op, typename T>
MAXC_SIMD_CLONES void arg_reduce_columns(const T* x, int64_t* y, int64_t n, int64_t inner, int64_t width) {
  using A = typename Op::A;
  A best[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) {
    best[j] = load(x[j]);
    y[j] = 0;
  }
  for (int64_t a = 1; a < n; ++a) {
    const T* row = x + a * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const A v = load(row[j]);
      // Strictly better keeps the first index; a NaN replaces anything but an earlier NaN.
      const bool take = !is_nan(best[j]) && Op::combine(best[j], v) != best[j];
      best[j] = take ? v : best[j];
      y[j] = take ? a : y[j];
    }
  }
}

template <typename Op, typename T>
void arg_reduce(const void* xv, void* yv, int64_t outer, int64_t n, int64_t inner) {
  const T* x = static_cast<const T*>(xv);
  int64_t* y = static_cast<int64_t*>(yv);
  if (n <= 0) return;  // no index to give; the lowering refuses this shape
  if (inner == 1) {
    parallel_for(outer, n, [&](int64_t begin, int64_t end) {
      arg_reduce_rows<Op>(x + begin * n, y + begin, end - begin, n);
    });
    return;
  }
  for_column_blocks(outer, inner, n, [&](int64_t o, int64_t c0, int64_t width) {
    arg_reduce_columns<Op>(x + o * n * inner + c0, y + o * inner + c0, n, inner, width);
  });
}

template <template <typename> class Op>
ReduceFn find_for(DType dtype) {
  ReduceFn fn = nullptr;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fn = &arg_reduce<Op<T>, T>;
  });
  return fn;
}

}  // namespace

ReduceFn find_arg_reduce_kernel(ArgReduceOp op, DType dtype) {
  switch (op) {
    case ArgReduceOp::kArgMax: return find_for<MaxOp>(dtype);
    case ArgReduceOp::kArgMin: return find_for<MinOp>(dtype);
  }
  return nullptr;
}

}  // namespace maxc::cpu
