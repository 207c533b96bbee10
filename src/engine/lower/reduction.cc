// Lowerings of the reductions, scans and sorts (inventory §5.6): sum, mean, argmax, argmin,
// cumsum, top_k, argsort, and the one-input max/min that the elementwise family hands over.
// Each reads the axis, splits the input's dims around it into (outer, n, inner) and captures
// a kernel from kernels/cpu chosen by dtype.
#include <algorithm>

#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lower/reduce_max_min.h"
#include "engine/lowering.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/scan.h"
#include "kernels/cpu/sort.h"

namespace maxc {
namespace {

[[noreturn]] void no_dtype_kernel(const LowerContext& ctx, const Shape& in) {
  ctx.unsupported("dtype ", dtype_label(in.dtype), " (input ", in.to_string(),
                  ")");
}

// max, min, argmax and argmin have no identity: an empty axis has no answer, as in numpy.
void require_nonempty_axis(const LowerContext& ctx, const Shape& in, const AxisSplit& s) {
  if (s.n == 0 && s.outer * s.inner > 0)
    fail(Code::kInvalidArgument, ctx.op_label(), ": cannot reduce over axis ", s.axis, " of input ", in.to_string(),
         ": it is empty and the reduction has no identity");
}

Lowered lower_reduce(const LowerContext& ctx, cpu::ReduceOp op) {
  const Shape& in = ctx.inputs[0];
  const cpu::ReduceFn fn = cpu::find_reduce_kernel(op, in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, with_axis(in, s.axis, 1, in.dtype));
  if (op == cpu::ReduceOp::kMax || op == cpu::ReduceOp::kMin) require_nonempty_axis(ctx, in, s);
  return {[fn, s](const KernelArgs& a) { fn(a.inputs[0], a.outputs[0], s.outer, s.n, s.inner); }};
}

Lowered lower_arg_reduce(const LowerContext& ctx, cpu::ArgReduceOp op) {
  const Shape& in = ctx.inputs[0];
  const cpu::ReduceFn fn = cpu::find_arg_reduce_kernel(op, in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, with_axis(in, s.axis, 1, DType::kInt64));
  require_nonempty_axis(ctx, in, s);
  return {[fn, s](const KernelArgs& a) { fn(a.inputs[0], a.outputs[0], s.outer, s.n, s.inner); }};
}

Lowered lower_cumsum(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const cpu::ScanFn fn = cpu::find_cumsum_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  const AxisSplit s = split_at_axis(ctx, in);
  expect_output(ctx, 0, in);
  const bool exclusive = ctx.attr<bool>("exclusive"), reverse = ctx.attr<bool>("reverse");
  Lowered l{[=](const KernelArgs& a) { fn(a.inputs[0], a.outputs[0], s.outer, s.n, s.inner, exclusive, reverse); }};
  l.inplace_input = 0;
  return l;
}

Lowered lower_top_k(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const cpu::TopKFn fn = cpu::find_top_k_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  const AxisSplit s = split_at_axis(ctx, in);
  const int64_t k = top_k_extent(ctx, in, s);
  // Each thread sorts its lines in its own slot of the scratch.
  const int64_t slots = std::clamp<int64_t>(s.outer * s.inner, 1, std::max(ctx.num_threads, 1));
  Lowered l{[=](const KernelArgs& a) {
    fn(a.inputs[0], a.outputs[0], static_cast<int64_t*>(a.outputs[1]), s.outer, s.n, s.inner, k, a.scratch, slots);
  }};
  l.scratch_bytes = k > 0 ? cpu::sort_scratch_bytes(in.dtype, s.n, slots) : 0;
  return l;
}

Lowered lower_argsort(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const cpu::ArgsortFn fn = cpu::find_argsort_kernel(in.dtype);
  if (!fn) no_dtype_kernel(ctx, in);
  if (in.rank() != 1) ctx.unsupported("input ", in.to_string(), " of rank ", in.rank(), " (argsort sorts rank 1)");
  expect_output(ctx, 0, Shape{DType::kInt64, in.dims});
  const int64_t n = in.dims[0];
  const bool ascending = ctx.attr<bool>("ascending");
  Lowered l{[=](const KernelArgs& a) {
    fn(a.inputs[0], static_cast<int64_t*>(a.outputs[0]), n, ascending, a.scratch);
  }};
  l.scratch_bytes = cpu::sort_scratch_bytes(in.dtype, n, 1);
  return l;
}

}  // namespace

Lowered lower_reduce_max_min(const LowerContext& ctx) {
  if (ctx.inputs.size() != 1)
    fail(Code::kInternal, ctx.op_label(), ": the reduction form takes 1 input, got ", ctx.inputs.size());
  return lower_reduce(ctx, ctx.op() == "max" ? cpu::ReduceOp::kMax : cpu::ReduceOp::kMin);
}

void register_reduction_kernels(KernelTable& t) {
  t.add("sum", [](const LowerContext& ctx) { return lower_reduce(ctx, cpu::ReduceOp::kSum); });
  t.add("mean", [](const LowerContext& ctx) { return lower_reduce(ctx, cpu::ReduceOp::kMean); });
  t.add("argmax", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, cpu::ArgReduceOp::kArgMax); });
  t.add("argmin", [](const LowerContext& ctx) { return lower_arg_reduce(ctx, cpu::ArgReduceOp::kArgMin); });
  t.add("cumsum", lower_cumsum);
  t.add("top_k", lower_top_k);
  t.add("argsort", lower_argsort);
}

}  // namespace maxc
