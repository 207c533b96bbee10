// The ops that only re-read their input's bytes with other dims (or, for bitcast, as another
// dtype of the same width). No kernel runs and no memory is planned for them, so the same
// lowerings serve every device's table.
#include "engine/lower/lower.h"
#include "engine/lowering.h"

namespace maxc {

// The planner trusts an alias to have its input's bytes: check the element count and dtype.
Lowered lower_alias(const LowerContext& ctx) {
  if (ctx.inputs[0].num_elements() != ctx.outputs[0].num_elements() || ctx.inputs[0].dtype != ctx.outputs[0].dtype)
    fail(Code::kInternal, ctx.op_label(), ": cannot alias ", ctx.inputs[0].to_string(), " as ",
         ctx.outputs[0].to_string());
  return Lowered::alias_of_input();
}

namespace {

// bitcast reads the same bytes as another dtype: only the element width must agree.
Lowered lower_bitcast(const LowerContext& ctx) {
  const Shape& in = ctx.inputs[0];
  const Shape& out = ctx.outputs[0];
  if (in.num_elements() != out.num_elements() || dtype_size_in_bits(in.dtype) != dtype_size_in_bits(out.dtype))
    fail(Code::kInternal, ctx.op_label(), ": cannot reinterpret ", in.to_string(), " as ", out.to_string());
  return Lowered::alias_of_input();
}

// rebind asserts at run time that x has the attribute's shape: the engine evaluated that shape
// for this call as output 0's dims, so a difference is the caller's broken promise. It is
// reported when the rebind runs, not when it is planned: a cond plans both branches, and the
// one this input does not take may assert what only the other branch's inputs satisfy (a
// model's 8 kHz branch planned for a 16 kHz input). Until then the output has the asserted
// shape, so what follows it plans consistently, and no step after it runs.
Lowered lower_rebind(const LowerContext& ctx) {
  if (ctx.inputs[0].dims == ctx.outputs[0].dims) return lower_alias(ctx);
  const std::string& message = ctx.attr<std::string>("message");
  std::string error = str_cat(ctx.op_label(), ": input 0 'x' is ", ctx.inputs[0].to_string(),
                              " but the graph asserted the shape ", ctx.outputs[0].to_string(),
                              message.empty() ? "" : ": ", message);
  Lowered broken;
  broken.run = [error = std::move(error)](const KernelArgs&) { fail(Code::kInvalidArgument, error); };
  return broken;
}

}  // namespace

void register_alias_kernels(KernelTable& t) {
  for (const char* op : {"reshape", "squeeze", "unsqueeze", "flatten", "as_interleaved_complex"}) t.add(op, lower_alias);
  t.add("rebind", lower_rebind);
  t.add("bitcast", lower_bitcast);
}

}  // namespace maxc
