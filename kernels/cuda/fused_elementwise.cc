#include "kernels/cuda/fused_elementwise.h"

#include <cmath>
#include <sstream>

#include "base/error.h"
#include "base/str_cat.h"
#include "driver/cuda/sha256.h"
#include "kernels/cuda/common/cast.cuh"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc::gpu {
namespace {

using cpu::ElemCompute;
using cpu::ElemOp;
using cpu::ElemProgramSpec;

const char* compute_type(ElemCompute c) {
  switch (c) {
    case ElemCompute::kFloat32: return "float";
    case ElemCompute::kFloat64: return "double";
    case ElemCompute::kInt64: return "i64";
    case ElemCompute::kUInt64: return "u64";
  }
  return "?";
}

// The storage type, qualified even where `using namespace maxc::gpu` holds: HIP's headers
// declare a global `half`, which a bare one would be ambiguous with.
std::string storage_type(DType d, const std::string& what) {
  const char* name = storage_type_name(d);
  if (!name) fail(Code::kInvalidArgument, "fused elementwise kernel: ", what, " has dtype ",
                  dtype_label(d), ", which the GPU kernels do not handle");
  return name;
}

bool is_float(ElemCompute c) { return c == ElemCompute::kFloat32 || c == ElemCompute::kFloat64; }

// The ops whose functors exist for floats only (libm functions and IEEE predicates).
bool needs_float(ElemOp op) {
  using enum ElemOp;
  switch (op) {
    case kSqrt: case kRsqrt: case kAcos: case kSin: case kCos: case kExp: case kLog: case kLog1p: case kTanh:
    case kErf: case kAtanh: case kSigmoid: case kSilu: case kGeluErf: case kGeluTanh: case kGeluQuick:
      return true;
    default:
      return false;
  }
}

// The ops whose functors exist for integers only (bitwise_not: the graph gives bools to
// logical_not instead).
bool needs_integer(ElemOp op) { return op == ElemOp::kBitwiseNot; }

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// kClamp's bounds as exact literals of the compute type, rounded as the CPU engine rounds
// them (kernels/cpu/elementwise_plan.cc): integers clamp to [ceil(lo), floor(hi)], saturated.
std::string clamp_functor(ElemCompute c, double lo, double hi) {
  switch (c) {
    case ElemCompute::kFloat32:
      return str_cat("op::Clamp<float>{f32_from_bits(", hex(f32_bits(static_cast<float>(lo))), "u), f32_from_bits(",
                     hex(f32_bits(static_cast<float>(hi))), "u)}");
    case ElemCompute::kFloat64:
      return str_cat("op::Clamp<double>{f64_from_bits(", hex(f64_bits(lo)), "ull), f64_from_bits(", hex(f64_bits(hi)),
                     "ull)}");
    case ElemCompute::kInt64:
      return str_cat("op::Clamp<i64>{static_cast<i64>(", hex(static_cast<uint64_t>(saturate_to_i64(std::ceil(lo)))),
                     "ull), static_cast<i64>(", hex(static_cast<uint64_t>(saturate_to_i64(std::floor(hi)))), "ull)}");
    case ElemCompute::kUInt64:
      return str_cat("op::Clamp<u64>{", hex(lo <= 0.0 ? 0 : saturate_to_u64(std::ceil(lo))), "ull, ",
                     hex(hi < 0.0 ? 0 : saturate_to_u64(std::floor(hi))), "ull}");
  }
  return "";
}

std::string functor(const cpu::ElemStep& s, ElemCompute c) {
  if (s.op == ElemOp::kClamp) return clamp_functor(c, s.p0, s.p1);
  std::string name = elementwise_op_name(s.op, DType::kFloat32);
  return name.substr(std::string("maxc::gpu::").size()) + "()";
}

std::vector<int64_t> aligned_leaf_dims(const std::vector<int64_t>& leaf, const std::vector<int64_t>& out,
                                       const std::string& what) {
  if (leaf.size() > out.size())
    fail(Code::kInvalidArgument, "fused elementwise kernel: ", what, " has rank ", leaf.size(), ", above the output's ",
         out.size());
  std::vector<int64_t> dims(out.size() - leaf.size(), 1);
  dims.insert(dims.end(), leaf.begin(), leaf.end());
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != out[d] && dims[d] != 1)
      fail(Code::kInvalidArgument, "fused elementwise kernel: ", what, " has dim ", dims[d], " where the output has ",
           out[d], "; it does not broadcast");
  return dims;
}

FusedKernel::LeafKind leaf_kind(const std::vector<int64_t>& leaf, const std::vector<int64_t>& out,
                                const std::string& what) {
  const std::vector<int64_t> dims = aligned_leaf_dims(leaf, out, what);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (dims == out) return FusedKernel::LeafKind::kDense;
  return n == 1 ? FusedKernel::LeafKind::kScalar : FusedKernel::LeafKind::kBroadcast;
}

void check_steps(const ElemProgramSpec& spec) {
  const size_t leaves = spec.leaves.size();
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const cpu::ElemStep& s = spec.steps[k];
    if (cpu::elem_op_arity(s.op) == 0)
      fail(Code::kInvalidArgument, "fused elementwise kernel: step ", k, " has an unknown op ",
           static_cast<int>(s.op));
    if (needs_float(s.op) && !is_float(spec.compute))
      fail(Code::kInvalidArgument, "fused elementwise kernel: step ", k, " (", cpu::elem_op_name(s.op),
           ") needs a float compute type, not ", cpu::elem_compute_name(spec.compute));
    if (needs_integer(s.op) && is_float(spec.compute))
      fail(Code::kInvalidArgument, "fused elementwise kernel: step ", k, " (", cpu::elem_op_name(s.op),
           ") needs an integer compute type, not ", cpu::elem_compute_name(spec.compute));
    for (int a = 0; a < cpu::elem_op_arity(s.op); ++a)
      if (s.args[a] < 0 || static_cast<size_t>(s.args[a]) >= leaves + k)
        fail(Code::kInvalidArgument, "fused elementwise kernel: step ", k, " reads value ", s.args[a], "; only 0..",
             leaves + k - 1, " exist before it");
  }
  if (spec.outputs.empty()) fail(Code::kInvalidArgument, "fused elementwise kernel: no outputs");
  for (size_t j = 0; j < spec.outputs.size(); ++j)
    if (spec.outputs[j].value < 0 || static_cast<size_t>(spec.outputs[j].value) >= leaves + spec.steps.size())
      fail(Code::kInvalidArgument, "fused elementwise kernel: output ", j, " is value ", spec.outputs[j].value,
           ", which does not exist");
}

// "float32: v2 = add(v0, v1); v3 = exp(v2) -> out0 = v3 float16", for the generated file's
// reader. No sizes: they are launch parameters, and the source (so the kernel's name and its
// cache entry) must not change with them.
std::string describe(const ElemProgramSpec& spec) {
  std::string s = str_cat(cpu::elem_compute_name(spec.compute), ":");
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const cpu::ElemStep& st = spec.steps[k];
    s += str_cat(k ? "; v" : " v", spec.leaves.size() + k, " = ", cpu::elem_op_name(st.op), "(");
    for (int a = 0; a < cpu::elem_op_arity(st.op); ++a) s += str_cat(a ? ", v" : "v", st.args[a]);
    s += ")";
  }
  for (size_t j = 0; j < spec.outputs.size(); ++j)
    s += str_cat(j ? ", out" : " -> out", j, " = v", spec.outputs[j].value, " ", dtype_name(spec.outputs[j].dtype));
  return s;
}

// The pieces of the kernel's text, filled leaf by leaf, step by step, output by output.
struct KernelText {
  std::ostringstream params;  // after "(Shape shape"
  std::ostringstream before;  // before the element loop: scalar leaves
  std::ostringstream loop;    // the body of the element loop
};

void emit_leaves(const ElemProgramSpec& spec, FusedKernel& k, KernelText& t) {
  for (size_t l = 0; l < spec.leaves.size(); ++l) {
    const std::string what = str_cat("leaf ", l);
    const std::string type = storage_type(spec.leaves[l].dtype, what);
    const FusedKernel::LeafKind kind = leaf_kind(spec.leaves[l].dims, spec.dims, what);
    k.leaf_kinds.push_back(kind);
    t.params << ", const " << type << "* in" << l;
    k.params.push_back({FusedKernel::ParamKind::kLeaf, static_cast<int32_t>(l)});
    if (kind == FusedKernel::LeafKind::kScalar) {
      t.before << "  const C v" << l << " = load_as<C>(in" << l << "[0]);\n";
    } else if (kind == FusedKernel::LeafKind::kDense) {
      t.loop << "    const C v" << l << " = load_as<C>(in" << l << "[i]);\n";
    } else {
      t.params << ", Layout layout" << l;
      k.params.push_back({FusedKernel::ParamKind::kLeafLayout, static_cast<int32_t>(l)});
      t.loop << "    const C v" << l << " = load_as<C>(in" << l << "[strided_offset(i, shape, layout" << l
             << ".strides)]);\n";
    }
  }
}

void emit_steps(const ElemProgramSpec& spec, KernelText& t) {
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const cpu::ElemStep& s = spec.steps[k];
    std::string call = functor(s, spec.compute) + "(";
    for (int a = 0; a < cpu::elem_op_arity(s.op); ++a) call += str_cat(a ? ", " : "", "v", s.args[a]);
    call += ")";
    if (s.narrow != DType::kInvalid)
      call = str_cat("narrow_to<", storage_type(s.narrow, str_cat("the narrowing of step ", k)), ">(", call, ")");
    t.loop << "    const C v" << spec.leaves.size() + k << " = " << call << ";  // " << cpu::elem_op_name(s.op) << "\n";
  }
}

void emit_outputs(const ElemProgramSpec& spec, FusedKernel& k, KernelText& t) {
  for (size_t j = 0; j < spec.outputs.size(); ++j) {
    const std::string type = storage_type(spec.outputs[j].dtype, str_cat("output ", j));
    // No __restrict__: an output may be written over a leaf's buffer (in place).
    t.params << ", " << type << "* out" << j;
    k.params.push_back({FusedKernel::ParamKind::kOutput, static_cast<int32_t>(j)});
    t.loop << "    out" << j << "[i] = store_as<" << type << ">(v" << spec.outputs[j].value << ");\n";
  }
}

// The kernel's text after its name: parameters and body.
std::string kernel_body(const ElemProgramSpec& spec, FusedKernel& k) {
  KernelText t;
  k.params.push_back({FusedKernel::ParamKind::kShape, 0});
  emit_leaves(spec, k, t);
  emit_steps(spec, t);
  emit_outputs(spec, k, t);
  std::ostringstream body;
  body << "(Shape shape" << t.params.str() << ") {\n  typedef " << compute_type(spec.compute) << " C;\n"
       << t.before.str() << "  for (i64 i = first_index(); i < shape.numel; i += index_step()) {\n"
       << t.loop.str() << "  }\n}\n";
  return body.str();
}

}  // namespace

FusedKernel generate_fused_elementwise(const ElemProgramSpec& spec) {
  if (spec.dims.size() > static_cast<size_t>(kMaxRank))
    fail(Code::kInvalidArgument, "fused elementwise kernel: output rank ", spec.dims.size(), " is above ", kMaxRank,
         "; collapse contiguous dims first");
  check_steps(spec);
  FusedKernel k;
  const std::string body = kernel_body(spec, k);
  const std::string head =
      "// Generated by max_c (kernels/cuda/fused_elementwise.cc) for the elementwise program\n"
      "//   " + describe(spec) + "\n"
      "#include \"common/cast.cuh\"\n"
      "#include \"common/elementwise_ops.cuh\"\n"
      "#include \"common/indexing.cuh\"\n"
      "#include \"common/launch.cuh\"\n\n"
      "using namespace maxc::gpu;\n\n";
  cuda::Sha256 h;
  h.update(head);
  h.update(body);
  k.name = "maxc_fused_" + h.hex_digest().substr(0, 16);
  k.source = head + "extern \"C\" __global__ void " + k.name + body;
  return k;
}

Shape fused_shape(const std::vector<int64_t>& out_dims) {
  if (out_dims.size() > static_cast<size_t>(kMaxRank))
    fail(Code::kInvalidArgument, "elementwise kernel shape of rank ", out_dims.size(), " is above ", kMaxRank);
  Shape s{};
  s.rank = static_cast<i32>(out_dims.size());
  s.numel = 1;
  for (size_t d = 0; d < out_dims.size(); ++d) {
    s.dims[d] = out_dims[d];
    s.numel *= out_dims[d];
  }
  return s;
}

Layout broadcast_layout(const std::vector<int64_t>& leaf_dims, const std::vector<int64_t>& out_dims) {
  const std::vector<int64_t> dims = aligned_leaf_dims(leaf_dims, out_dims, "a leaf");
  Layout l{};
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    l.strides[d] = dims[d] == 1 ? 0 : stride;
    stride *= dims[d];
  }
  return l;
}

}  // namespace maxc::gpu
