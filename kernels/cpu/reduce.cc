// Value reductions: sum, mean, max, min (see reduce.h).
#include "kernels/cpu/reduce.h"

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

using namespace reduce_detail;

template <typename Op, typename T>
MAXC_SIMD_CLONES void reduce_rows(const T* x, T* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) y[r] = Op::finish(reduce_row<Op>(x + r * n, n), n);
}

// x points at [o, 0, c0] and y at [o, c0]; `width` columns, at most kColumnBlock.
template <typename Op, typename T>
MAXC_SIMD_CLONES void reduce_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t width) {
  typename Op::A acc[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) acc[j] = Op::init();
  for (int64_t a = 0; a < n; ++a) {
    const T* row = x + a * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) acc[j] = Op::combine(acc[j], load(row[j]));
  }
  for (int64_t j = 0; j < width; ++j) y[j] = Op::finish(acc[j], n);
}

template <typename Op, typename T>
void reduce(const void* xv, void* yv, int64_t outer, int64_t n, int64_t inner) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  if (inner == 1) {
    parallel_for(outer, n, [&](int64_t begin, int64_t end) { reduce_rows<Op>(x + begin * n, y + begin, end - begin, n); });
    return;
  }
  for_column_blocks(outer, inner, n, [&](int64_t o, int64_t c0, int64_t width) {
    // An empty axis reads nothing, and x of an empty tensor may be null: no offset from it.
    reduce_columns<Op>(n ? x + o * n * inner + c0 : x, y + o * inner + c0, n, inner, width);
  });
}

template <template <typename> class Op>
ReduceFn find_for(DType dtype) {
  ReduceFn fn = nullptr;
  visit_dtype<DTypeSet::kNumeric>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fn = &reduce<Op<T>, T>;
  });
  return fn;
}

}  // namespace

ReduceFn find_reduce_kernel(ReduceOp op, DType dtype) {
  switch (op) {
    case ReduceOp::kSum: return find_for<SumOp>(dtype);
    case ReduceOp::kMean: return find_for<MeanOp>(dtype);
    case ReduceOp::kMax: return find_for<MaxOp>(dtype);
    case ReduceOp::kMin: return find_for<MinOp>(dtype);
  }
  return nullptr;
}

}  // namespace maxc::cpu
