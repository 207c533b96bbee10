// Lowerings of the elementwise family (inventory §5.1-5.5, clamp, cast) and of the
// "fused_elementwise" nodes that compiler/fuse_elementwise.cc makes. Every one becomes an
// ElemProgram (kernels/cpu/elementwise.h): a single op is a one-step program, a fused node
// one step per fused op, a cast a program with no step at all (the store converts); a cast
// to or from float8 or float4 runs its own kernel (kernels/cpu/cast_minifloat.h).
//
// max and min are registered here for both forms: with two inputs they are elementwise,
// with one they are reductions and go to lower_reduce_max_min (reduction.cc).
#include <map>
#include <memory>
#include <optional>

#include "engine/lower/elementwise_op.h"
#include "engine/lower/lower.h"
#include "engine/lower/reduce_max_min.h"
#include "engine/lowering.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/minifloat.h"

namespace maxc {
namespace {

using cpu::ElemCompute;
using cpu::ElemOp;
using cpu::ElemProgram;
using cpu::ElemProgramSpec;

std::string dtype_label(DType d) { return dtype_name(d) ? dtype_name(d) : "invalid"; }

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

std::shared_ptr<const ElemProgram> make_program(const LowerContext& ctx, ElemProgramSpec spec) {
  try {
    return std::make_shared<const ElemProgram>(std::move(spec));
  } catch (const Error& e) {
    fail(e.code(), ctx.op_label(), ": ", e.what());
  }
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

void add_leaves(const LowerContext& ctx, ElemProgramSpec& spec) {
  for (const Shape& in : ctx.inputs) spec.leaves.push_back({in.dtype, in.dims});
}

void check_outputs_share_dims(const LowerContext& ctx) {
  for (size_t j = 1; j < ctx.outputs.size(); ++j)
    if (ctx.outputs[j].dims != ctx.outputs[0].dims)
      fail(Code::kInternal, ctx.op_label(), ": output ", j, " is ", ctx.outputs[j].to_string(), " but output 0 is ",
           ctx.outputs[0].to_string(), "; an elementwise node's outputs share one shape");
}

// ---- a cast to or from float8 / float4 ---------------------------------------------------

bool is_minifloat_cast(const LowerContext& ctx) {
  return ctx.node.op == "cast" && ctx.inputs.size() == 1 &&
         (cpu::is_minifloat(ctx.inputs[0].dtype) || cpu::is_minifloat(ctx.outputs[0].dtype));
}

// No ElemProgram holds these dtypes (kernels/cpu/cast_minifloat.h): the cast runs alone.
Lowered lower_minifloat_cast(const LowerContext& ctx) {
  const DType src = ctx.inputs[0].dtype, dst = ctx.outputs[0].dtype;
  if (src == dst) return Lowered::alias_of_input();
  if (!cpu::cast_minifloat_supports(src, dst)) ctx.unsupported("a cast from ", dtype_label(src), " to ", dtype_label(dst));
  const bool saturate = !ctx.attrs().has("saturate") || ctx.attr<bool>("saturate");
  const int64_t n = ctx.outputs[0].num_elements();
  return Lowered{[=](const KernelArgs& a) { cpu::cast_minifloat(src, dst, a.inputs[0], a.outputs[0], n, saturate); }};
}

// ---- one registry op ---------------------------------------------------------------------

Lowered lower_single(const LowerContext& ctx) {
  if (ctx.outputs.size() != 1)
    fail(Code::kInternal, ctx.op_label(), ": expected 1 output, got ", ctx.outputs.size());
  if (is_minifloat_cast(ctx)) return lower_minifloat_cast(ctx);
  std::vector<DType> in_dtypes;
  for (const Shape& s : ctx.inputs) in_dtypes.push_back(s.dtype);
  const ElemOpDesc d = describe_elementwise(ctx.node, in_dtypes, ctx.outputs[0].dtype, ctx.op_label());

  ElemProgramSpec spec;
  spec.compute = d.compute.value_or(ElemCompute::kFloat32);
  spec.dims = ctx.outputs[0].dims;
  add_leaves(ctx, spec);
  if (d.is_cast) {
    // A cast to the input's own dtype moves nothing: the output is the input's bytes.
    if (ctx.inputs[0] == ctx.outputs[0]) return Lowered::alias_of_input();
    spec.outputs.push_back({0, ctx.outputs[0].dtype});
    return lowered_from(ctx, std::move(spec));
  }
  cpu::ElemStep step{d.op, {0, 1, 2}, d.p0, d.p1, DType::kInvalid};
  if (d.op == ElemOp::kPow) {
    if (std::optional<ElemOp> special = pow_by_constant(ctx.input_constant(1))) step = {*special, {0, -1, -1}};
  }
  spec.steps.push_back(step);
  spec.outputs.push_back({static_cast<int32_t>(ctx.inputs.size()), ctx.outputs[0].dtype});
  return lowered_from(ctx, std::move(spec));
}

// ---- a fused node --------------------------------------------------------------------------

// Steps read the node's inputs (leaves, in the node's order) and earlier steps' values; the
// node's outputs are step values. Every step value has the node's output shape.
Lowered lower_fused(const LowerContext& ctx) {
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
  return lowered_from(ctx, std::move(spec));
}

Lowered lower_max_min(const LowerContext& ctx) {
  if (ctx.inputs.size() == 1) return lower_reduce_max_min(ctx);
  return lower_single(ctx);
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  for (const std::string& op : elementwise_op_names()) {
    if (op == "max" || op == "min") {
      t.add(op, lower_max_min);
    } else {
      t.add(op, lower_single);
    }
  }
  t.add("fused_elementwise", lower_fused);
}

}  // namespace maxc
