// masked_scatter on the host: one pass in row-major order, the mask read through broadcast
// strides.
#include "engine/lower/extents.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "kernels/cpu/masked_scatter.h"

namespace maxc {

namespace {

Lowered lower_masked_scatter(const LowerContext& ctx) {
  const std::vector<int64_t> dims = ctx.inputs[0].dims;
  const std::vector<int64_t> strides = broadcast_strides(ctx, ctx.inputs[1], dims, "mask", "the input");
  const int64_t bytes = dtype_size_in_bytes(ctx.inputs[0].dtype);
  const int64_t num_updates = ctx.inputs[2].num_elements();
  const std::string label = ctx.op_label();
  return {[=](const KernelArgs& a) {
    const int64_t taken = cpu::masked_scatter(a.inputs[0], static_cast<const uint8_t*>(a.inputs[1]), a.inputs[2],
                                              a.outputs[0], dims, strides, bytes, num_updates);
    if (taken > num_updates)
      fail(Code::kInvalidArgument, label, ": the mask holds at ", taken, " positions but updates has only ",
           num_updates, " elements");
  }};
}

}  // namespace

void register_masked_scatter_kernels(KernelTable& t) { t.add("masked_scatter", lower_masked_scatter); }

}  // namespace maxc
