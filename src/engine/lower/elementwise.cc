// Lowerings of the elementwise family (inventory §5.1-5.5, clamp, cast) and of the
// "fused_elementwise" nodes that compiler/fuse_elementwise.cc makes. Every one becomes an
// ElemProgram (kernels/cpu/elementwise.h): a single op is a one-step program, a fused node
// one step per fused op, a cast a program with no step at all (the store converts); a cast
// to or from float8, float4 or a sub-byte integer runs its own kernel
// (kernels/cpu/cast_minifloat.h, kernels/cpu/cast_packed_int.h).
//
// max and min are registered here for both forms: with two inputs they are elementwise,
// with one they are reductions and go to lower_reduce_max_min (reduction.cc).
#include <memory>
#include <optional>

#include "engine/lower/elementwise_spec.h"
#include "engine/lower/lower.h"
#include "engine/lower/reduce_max_min.h"
#include "engine/lowering.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/cast_packed_int.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/minifloat.h"

namespace maxc {
namespace {

using cpu::ElemProgram;
using cpu::ElemProgramSpec;


std::shared_ptr<const ElemProgram> make_program(const LowerContext& ctx, ElemProgramSpec spec) {
  return ctx.labeled([&] { return std::make_shared<const ElemProgram>(std::move(spec)); });
}

// Output 0 may take the buffer of an input with its dtype and shape when the program
// allows it (every use of that input is read before output 0 is written).
int32_t inplace_input_of(const LowerContext& ctx, const ElemProgram& program) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (ctx.inputs[i] != ctx.outputs[0]) continue;
    bool ok = true;
    for (size_t j = 0; j < ctx.inputs.size() && ok; ++j)
      if (ctx.node.inputs[j] == ctx.node.inputs[i]) ok = program.output0_may_overwrite(static_cast<int32_t>(j));
    if (ok) return static_cast<int32_t>(i);
  }
  return -1;
}

Lowered lowered_from(const LowerContext& ctx, ElemProgramSpec spec) {
  std::shared_ptr<const ElemProgram> program = make_program(ctx, std::move(spec));
  Lowered l{[program](const KernelArgs& a) { program->run(a.inputs, a.outputs); }};
  l.inplace_input = inplace_input_of(ctx, *program);
  return l;
}

// ---- a cast to or from float8 / float4 / a sub-byte integer --------------------------------

bool is_standalone_cast(const LowerContext& ctx) {
  if (ctx.node.op != "cast" || ctx.inputs.size() != 1) return false;
  for (DType d : {ctx.inputs[0].dtype, ctx.outputs[0].dtype})
    if (cpu::is_cast_minifloat(d) || dtype_is_packed_int(d)) return true;
  return false;
}

// No ElemProgram holds these dtypes (kernels/cpu/cast_minifloat.h, cast_packed_int.h): the
// cast runs alone. A packed-int side takes precedence, so int4 <-> float4 is its kernel's.
Lowered lower_standalone_cast(const LowerContext& ctx) {
  const DType src = ctx.inputs[0].dtype, dst = ctx.outputs[0].dtype;
  if (src == dst) return Lowered::alias_of_input();
  const bool packed = dtype_is_packed_int(src) || dtype_is_packed_int(dst);
  if (!(packed ? cpu::cast_packed_int_supports(src, dst) : cpu::cast_minifloat_supports(src, dst)))
    ctx.unsupported("a cast from ", dtype_label(src), " to ", dtype_label(dst));
  const auto kernel = packed ? cpu::cast_packed_int : cpu::cast_minifloat;
  const bool saturate = !ctx.attrs().has("saturate") || ctx.attr<bool>("saturate");
  const int64_t n = ctx.outputs[0].num_elements();
  return Lowered{[=](const KernelArgs& a) { kernel(src, dst, a.inputs[0], a.outputs[0], n, saturate); }};
}

// ---- a registry op or a fused node ---------------------------------------------------------

Lowered lower_program(const LowerContext& ctx) {
  if (is_standalone_cast(ctx)) return lower_standalone_cast(ctx);
  std::optional<ElemProgramSpec> spec = elementwise_spec(ctx);
  if (!spec) return Lowered::alias_of_input();
  return lowered_from(ctx, std::move(*spec));
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  register_elementwise_lowerings(t, lower_program, lower_reduce_max_min);
}

}  // namespace maxc
