// nonzero, and count_nonzero, which the compiler adds to find the count that binds nonzero's
// out_dim before the rest of the program is planned (compiler/stages.h).
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/nonzero.h"

namespace maxc {

namespace {

cpu::ZeroTest zero_test(const LowerContext& ctx, DType dtype) {
  const std::optional<cpu::ZeroTest> test = cpu::zero_test_of(dtype);
  if (!test) ctx.unsupported(dtype_name(dtype));
  return *test;
}

Lowered lower_count_nonzero(const LowerContext& ctx) {
  const cpu::ZeroTest test = zero_test(ctx, ctx.inputs[0].dtype);
  const int64_t n = ctx.inputs[0].num_elements();
  return {[test, n](const KernelArgs& a) { *static_cast<int64_t*>(a.outputs[0]) = cpu::count_nonzero(a.inputs[0], n, test); }};
}

Lowered lower_nonzero(const LowerContext& ctx) {
  const cpu::ZeroTest test = zero_test(ctx, ctx.inputs[0].dtype);
  const std::vector<int64_t> dims = ctx.inputs[0].dims;
  const int64_t count = ctx.outputs[0].dims[0];
  const Dim out_dim = ctx.attr<std::vector<Dim>>("out_dim").at(0);
  const std::string label = ctx.op_label();
  return {[test, dims, count, out_dim, label](const KernelArgs& a) {
    const int64_t found = cpu::nonzero_indices(a.inputs[0], dims, test, static_cast<int64_t*>(a.outputs[0]), count);
    if (found != count)
      fail(Code::kInvalidArgument, label, ": the input has ", found, " nonzero elements, but out_dim '", out_dim,
           "' is ", count);
  }};
}

}  // namespace

void register_nonzero_kernels(KernelTable& t) {
  t.add("nonzero", lower_nonzero);
  t.add("count_nonzero", lower_count_nonzero);
}

}  // namespace maxc
