// nonzero, and count_nonzero, which the compiler adds to find the count that binds nonzero's
// out_dim before the rest of the program is planned (compiler/stages.h).
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/nonzero.h"

namespace maxc {

namespace {

cpu::ZeroTest zero_test(const LowerContext& ctx, DType dtype) {
  const int32_t bytes = dtype_size_in_bytes(dtype);
  if (dtype == DType::kFloat4E2M1Fn || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8))
    ctx.unsupported(dtype_name(dtype));
  // Both zeros of an IEEE-style float are zero; a "fnuz" float8 has only one (its 0x80 is NaN).
  const bool signed_zero = dtype_is_float(dtype) && dtype != DType::kFloat8E4M3Fnuz && dtype != DType::kFloat8E5M2Fnuz;
  const uint64_t all = bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
  return {bytes, signed_zero ? all >> 1 : all};
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
