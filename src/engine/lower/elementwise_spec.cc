#include "engine/lower/elementwise_spec.h"

#include <map>

#include "engine/lower/elementwise_op.h"

namespace maxc {
namespace {

using cpu::ElemCompute;
using cpu::ElemOp;
using cpu::ElemProgramSpec;


// x ** c for a constant scalar c, as cheaper exact ops (x*x is what pow(x, 2) rounds to).
std::optional<ElemOp> pow_by_constant(const Constant* c) {
  if (!c) return std::nullopt;
  std::optional<double> e = c->scalar_float();
  if (!e) {
    std::optional<int64_t> i = c->scalar_int();
    if (i) e = static_cast<double>(*i);
  }
  if (!e) return std::nullopt;
  if (*e == 0.0) return ElemOp::kOne;
  if (*e == 1.0) return ElemOp::kCopy;
  if (*e == 2.0) return ElemOp::kSquare;
  if (*e == 3.0) return ElemOp::kCube;
  if (*e == -1.0) return ElemOp::kReciprocal;
  return std::nullopt;
}

// Picks the compute type of a program from its ops' compute dtypes: they must agree, ops on
// bool alone (logical ops) join any; a program of bool ops only computes in float32.
class ComputeChoice {
 public:
  void add(const ElemOpDesc& d, const std::string& where) {
    if (!d.compute) return;
    if (chosen_ && *chosen_ != *d.compute)
      fail(Code::kInternal, where, " computes in ", cpu::elem_compute_name(*d.compute), " but the program in ",
           cpu::elem_compute_name(*chosen_), " (the fusion pass grouped ops it must not)");
    chosen_ = d.compute;
  }
  ElemCompute get() const { return chosen_.value_or(ElemCompute::kFloat32); }

 private:
  std::optional<ElemCompute> chosen_;
};

void add_leaves(const LowerContext& ctx, ElemProgramSpec& spec) {
  for (const Shape& in : ctx.inputs) spec.leaves.push_back({in.dtype, in.dims});
}

void check_outputs_share_dims(const LowerContext& ctx) {
  for (size_t j = 1; j < ctx.outputs.size(); ++j)
    if (ctx.outputs[j].dims != ctx.outputs[0].dims)
      fail(Code::kInternal, ctx.op_label(), ": output ", j, " is ", ctx.outputs[j].to_string(), " but output 0 is ",
           ctx.outputs[0].to_string(), "; an elementwise node's outputs share one shape");
}

// ---- one registry op ---------------------------------------------------------------------

std::optional<ElemProgramSpec> single_spec(const LowerContext& ctx) {
  if (ctx.outputs.size() != 1)
    fail(Code::kInternal, ctx.op_label(), ": expected 1 output, got ", ctx.outputs.size());
  std::vector<DType> in_dtypes;
  for (const Shape& s : ctx.inputs) in_dtypes.push_back(s.dtype);
  const ElemOpDesc d = describe_elementwise(ctx.node, in_dtypes, ctx.outputs[0].dtype, ctx.op_label());

  ElemProgramSpec spec;
  spec.compute = d.compute.value_or(ElemCompute::kFloat32);
  spec.dims = ctx.outputs[0].dims;
  add_leaves(ctx, spec);
  if (d.is_cast) {
    // A cast to the input's own dtype moves nothing: the output is the input's bytes.
    if (ctx.inputs[0] == ctx.outputs[0]) return std::nullopt;
    spec.outputs.push_back({0, ctx.outputs[0].dtype});
    return spec;
  }
  cpu::ElemStep step{d.op, {0, 1, 2}, d.p0, d.p1, DType::kInvalid};
  if (d.op == ElemOp::kPow) {
    if (std::optional<ElemOp> special = pow_by_constant(ctx.input_constant(1))) step = {*special, {0, -1, -1}};
  }
  spec.steps.push_back(step);
  spec.outputs.push_back({static_cast<int32_t>(ctx.inputs.size()), ctx.outputs[0].dtype});
  return spec;
}

// ---- a fused node --------------------------------------------------------------------------

// Steps read the node's inputs (leaves, in the node's order) and earlier steps' values; the
// node's outputs are step values. Every step value has the node's output shape.
ElemProgramSpec fused_spec(const LowerContext& ctx) {
  if (ctx.node.steps.empty()) fail(Code::kInternal, ctx.op_label(), ": no steps");
  if (ctx.outputs.empty()) fail(Code::kInternal, ctx.op_label(), ": no outputs");
  check_outputs_share_dims(ctx);
  const std::vector<int64_t>& dims = ctx.outputs[0].dims;

  std::map<ValueId, int32_t> value_of;  // graph value -> program value
  std::map<ValueId, DType> dtype_of;
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i) {
    value_of.emplace(ctx.node.inputs[i], static_cast<int32_t>(i));
    dtype_of.emplace(ctx.node.inputs[i], ctx.inputs[i].dtype);
  }
  const int32_t num_leaves = static_cast<int32_t>(ctx.node.inputs.size());

  // Which step values later steps read: only those need narrowing to their dtype (a value
  // only stored is converted by the store anyway).
  std::map<ValueId, bool> read_by_step;
  for (const Node& s : ctx.node.steps)
    for (ValueId v : s.inputs) read_by_step[v] = true;

  ElemProgramSpec spec;
  spec.dims = dims;
  add_leaves(ctx, spec);
  ComputeChoice compute;
  for (size_t k = 0; k < ctx.node.steps.size(); ++k) {
    const Node& s = ctx.node.steps[k];
    const std::string where = str_cat(ctx.op_label(), " step ", k, " '", s.op, "'");
    if (s.outputs.size() != 1 || !s.steps.empty())
      fail(Code::kInternal, where, ": a fused step must be one plain op with one output");
    std::vector<DType> in_dtypes;
    cpu::ElemStep step;
    for (size_t a = 0; a < s.inputs.size(); ++a) {
      auto it = value_of.find(s.inputs[a]);
      if (it == value_of.end())
        fail(Code::kInternal, where, ": input ", a, " (%", s.inputs[a], ") is neither a node input nor an earlier step");
      if (a < 3) step.args[a] = it->second;
      in_dtypes.push_back(dtype_of.at(s.inputs[a]));
    }
    const Shape value = ctx.shape_of(s.outputs[0]);
    if (value.dims != dims)
      fail(Code::kInternal, where, ": its value is ", value.to_string(), " but the node's output is ",
           ctx.outputs[0].to_string(), "; every fused value must have the output's shape");
    ElemOpDesc d = describe_elementwise(s, in_dtypes, value.dtype, where);
    if (d.is_cast) {
      // A cast between compute types opens the program (its source is a node input, which
      // the load converts) or closes it (nothing reads its value; the store converts).
      const std::optional<ElemCompute> from = cpu::elem_compute_of(in_dtypes[0]), to = cpu::elem_compute_of(value.dtype);
      if (from && to && *from != *to) {
        if (step.args[0] < num_leaves) {
          d.compute = to;
        } else if (read_by_step.contains(s.outputs[0])) {
          fail(Code::kInternal, where, ": casts ", dtype_label(in_dtypes[0]), " to ", dtype_label(value.dtype),
               " inside the program and a later step reads it (the fusion pass grouped ops it must not)");
        }
      }
    }
    compute.add(d, where);
    step.op = d.is_cast ? ElemOp::kCopy : d.op;
    step.p0 = d.p0;
    step.p1 = d.p1;
    if (step.op == ElemOp::kPow) {
      auto leaf = value_of.at(s.inputs[1]);
      const Constant* c = leaf < num_leaves ? ctx.input_constant(static_cast<size_t>(leaf)) : nullptr;
      if (std::optional<ElemOp> special = pow_by_constant(c)) step.op = *special;
    }
    if (read_by_step.contains(s.outputs[0])) step.narrow = value.dtype;
    value_of.emplace(s.outputs[0], num_leaves + static_cast<int32_t>(k));
    dtype_of.emplace(s.outputs[0], value.dtype);
    spec.steps.push_back(step);
  }
  spec.compute = compute.get();
  for (size_t j = 0; j < ctx.node.outputs.size(); ++j) {
    auto it = value_of.find(ctx.node.outputs[j]);
    if (it == value_of.end() || it->second < num_leaves)
      fail(Code::kInternal, ctx.op_label(), ": output ", j, " (%", ctx.node.outputs[j], ") is not a step's value");
    spec.outputs.push_back({it->second, ctx.outputs[j].dtype});
  }
  return spec;
}

}  // namespace

std::optional<ElemProgramSpec> elementwise_spec(const LowerContext& ctx) {
  if (ctx.node.op == "fused_elementwise") return fused_spec(ctx);
  return single_spec(ctx);
}

void register_elementwise_lowerings(KernelTable& t, LowerFn program, LowerFn reduce_max_min) {
  for (const std::string& op : elementwise_op_names()) {
    if (op == "max" || op == "min") {
      t.add(op, [program, reduce_max_min](const LowerContext& ctx) {
        return ctx.inputs.size() == 1 ? reduce_max_min(ctx) : program(ctx);
      });
    } else {
      t.add(op, program);
    }
  }
  t.add("fused_elementwise", program);
}

}  // namespace maxc
