#include "engine/lower/attention_shape.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/lower/extents.h"
#include "kernels/cpu/copy.h"

namespace maxc {
namespace {

// An operand as the kernels index it: its dims as the graph's matmuls see them,
// [batch..., rows, cols], and their element strides in the stored tensor.
struct OperandView {
  std::vector<int64_t> dims, strides;
};

// Layout "bshd": the operand is stored with the two dims before its last swapped, [..., L, H, D]
// for [..., H, L, D]: the heads of a projection, read where they lie.
OperandView view_of(const LowerContext& ctx, const Shape& stored, bool bshd, const char* name) {
  const size_t rank = stored.dims.size();
  OperandView v{stored.dims, cpu::dense_strides(stored.dims)};
  if (!bshd) return v;
  if (rank < 3)
    fail(Code::kInternal, ctx.op_label(), ": layout \"bshd\" needs rank 3 or more, ", name, " is ", stored.to_string());
  std::swap(v.dims[rank - 3], v.dims[rank - 2]);
  std::swap(v.strides[rank - 3], v.strides[rank - 2]);
  return v;
}

bool is_bshd(const LowerContext& ctx) {
  if (!ctx.attrs().has("layout")) return false;
  const std::string& layout = ctx.attr<std::string>("layout");
  if (layout != "bshd") fail(Code::kInternal, ctx.op_label(), ": unknown layout \"", layout, "\"");
  return true;
}

// The strides along the batch dims and the rows: all but the last dim's, which is 1.
std::vector<int64_t> row_strides(const OperandView& v) { return {v.strides.begin(), v.strides.end() - 1}; }

}  // namespace

cpu::AttentionShape attention_shape(const LowerContext& ctx) {
  if (ctx.inputs.size() != 3 && ctx.inputs.size() != 4)
    fail(Code::kInternal, ctx.op_label(), ": ", ctx.inputs.size(), " inputs (q, k, v and an optional mask)");
  const bool bshd = is_bshd(ctx);
  const OperandView q = view_of(ctx, ctx.inputs[0], bshd, "q"), k = view_of(ctx, ctx.inputs[1], bshd, "k"),
                    v = view_of(ctx, ctx.inputs[2], bshd, "v"), out = view_of(ctx, ctx.outputs[0], bshd, "out");
  const auto stored = [&ctx] {
    return str_cat("q ", ctx.inputs[0].to_string(), ", k ", ctx.inputs[1].to_string(), " and v ",
                   ctx.inputs[2].to_string());
  };
  const size_t rank = q.dims.size();
  if (rank < 2 || k.dims.size() != rank || v.dims.size() != rank ||
      !std::equal(q.dims.begin(), q.dims.end() - 2, k.dims.begin()) ||
      !std::equal(q.dims.begin(), q.dims.end() - 2, v.dims.begin()))
    fail(Code::kInternal, ctx.op_label(), ": ", stored(), " do not share their batch dims");
  cpu::AttentionShape s;
  s.batch_dims.assign(q.dims.begin(), q.dims.end() - 2);
  s.k_transposed = ctx.attrs().has("k_transposed") && ctx.attr<bool>("k_transposed");
  s.q_len = q.dims[rank - 2];
  s.head_dim = q.dims[rank - 1];
  s.kv_len = s.k_transposed ? k.dims[rank - 1] : k.dims[rank - 2];
  s.v_dim = v.dims[rank - 1];
  if ((s.k_transposed ? k.dims[rank - 2] : k.dims[rank - 1]) != s.head_dim || v.dims[rank - 2] != s.kv_len)
    fail(Code::kInternal, ctx.op_label(), ": ", stored(), " do not fit (k_transposed = ", s.k_transposed, ")");
  std::vector<int64_t> out_dims = s.batch_dims;
  out_dims.push_back(s.q_len);
  out_dims.push_back(s.v_dim);
  if (out.dims != out_dims)
    fail(Code::kInternal, ctx.op_label(), ": output ", ctx.outputs[0].to_string(), " does not fit ", stored(),
         bshd ? " (layout \"bshd\")" : "");
  s.q_strides = row_strides(q);
  s.k_strides = row_strides(k);
  s.v_strides = row_strides(v);
  s.out_strides = row_strides(out);
  s.has_mask = ctx.inputs.size() == 4;
  if (s.has_mask) {
    std::vector<int64_t> scores = s.batch_dims;
    scores.push_back(s.q_len);
    scores.push_back(s.kv_len);
    s.mask_strides = broadcast_strides(ctx, ctx.inputs[3], scores, "mask", "the scores");
    s.mask_selects = ctx.inputs[3].dtype == DType::kBool;
    if (s.mask_selects != ctx.attrs().has("mask_fill"))
      fail(Code::kInternal, ctx.op_label(), ": a ", dtype_label(ctx.inputs[3].dtype), " mask ",
           s.mask_selects ? "without" : "with", " attribute 'mask_fill' (only a bool mask selects)");
    if (s.mask_selects) s.mask_fill = static_cast<float>(ctx.attr<double>("mask_fill"));
  }
  return s;
}

}  // namespace maxc
