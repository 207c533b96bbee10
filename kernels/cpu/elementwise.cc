// ElemProgram: the op table, and running a planned program block by block over the output
// (the planning is in elementwise_plan.cc, the shared inside in elementwise_program.h).
#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "base/error.h"
#include "kernels/cpu/elementwise_io.h"
#include "kernels/cpu/elementwise_program.h"
#include "kernels/cpu/elementwise_steps.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

using elem::Params;

struct OpInfo {
  ElemOp op;
  const char* name;
  int arity;
  int cost;  // scalar operations per element, for the parallel split
};

constexpr OpInfo kOps[] = {
    {ElemOp::kCopy, "copy", 1, 1},          {ElemOp::kAbs, "abs", 1, 1},
    {ElemOp::kAcos, "acos", 1, 30},         {ElemOp::kAtanh, "atanh", 1, 30},
    {ElemOp::kCos, "cos", 1, 25},           {ElemOp::kErf, "erf", 1, 40},
    {ElemOp::kExp, "exp", 1, 15},           {ElemOp::kFloor, "floor", 1, 1},
    {ElemOp::kLog, "log", 1, 20},           {ElemOp::kLog1p, "log1p", 1, 25},
    {ElemOp::kNegate, "negate", 1, 1},      {ElemOp::kRelu, "relu", 1, 1},
    {ElemOp::kRound, "round", 1, 1},        {ElemOp::kRsqrt, "rsqrt", 1, 4},
    {ElemOp::kSigmoid, "sigmoid", 1, 20},   {ElemOp::kSilu, "silu", 1, 20},
    {ElemOp::kSin, "sin", 1, 25},           {ElemOp::kSqrt, "sqrt", 1, 4},
    {ElemOp::kTanh, "tanh", 1, 25},         {ElemOp::kTrunc, "trunc", 1, 1},
    {ElemOp::kGeluErf, "gelu", 1, 45},      {ElemOp::kGeluTanh, "gelu_tanh", 1, 25},
    {ElemOp::kGeluQuick, "gelu_quick", 1, 20}, {ElemOp::kLogicalNot, "logical_not", 1, 1},
    {ElemOp::kIsInf, "is_inf", 1, 1},       {ElemOp::kIsNan, "is_nan", 1, 1},
    {ElemOp::kClamp, "clamp", 1, 1},        {ElemOp::kSquare, "square", 1, 1},
    {ElemOp::kCube, "cube", 1, 2},          {ElemOp::kReciprocal, "reciprocal", 1, 2},
    {ElemOp::kOne, "one", 1, 1},            {ElemOp::kAdd, "add", 2, 1},
    {ElemOp::kSub, "sub", 2, 1},            {ElemOp::kMul, "mul", 2, 1},
    {ElemOp::kDiv, "div", 2, 2},            {ElemOp::kMod, "mod", 2, 20},
    {ElemOp::kPow, "pow", 2, 40},           {ElemOp::kMax, "max", 2, 1},
    {ElemOp::kMin, "min", 2, 1},            {ElemOp::kEqual, "equal", 2, 1},
    {ElemOp::kNotEqual, "not_equal", 2, 1}, {ElemOp::kGreater, "greater", 2, 1},
    {ElemOp::kGreaterEqual, "greater_equal", 2, 1}, {ElemOp::kLess, "less", 2, 1},
    {ElemOp::kLessEqual, "less_equal", 2, 1}, {ElemOp::kLogicalAnd, "logical_and", 2, 1},
    {ElemOp::kLogicalOr, "logical_or", 2, 1}, {ElemOp::kLogicalXor, "logical_xor", 2, 1},
    {ElemOp::kBitwiseNot, "bitwise_not", 1, 1}, {ElemOp::kBitwiseAnd, "bitwise_and", 2, 1},
    {ElemOp::kBitwiseOr, "bitwise_or", 2, 1}, {ElemOp::kBitwiseXor, "bitwise_xor", 2, 1},
    {ElemOp::kWhere, "where", 3, 1},
};

const OpInfo* op_info(ElemOp op) {
  for (const OpInfo& info : kOps)
    if (info.op == op) return &info;
  return nullptr;
}


}  // namespace

int elem_op_cost(ElemOp op) {
  const OpInfo* info = op_info(op);
  return info ? info->cost : 1;
}

bool elem_op_known(ElemOp op) { return op_info(op) != nullptr; }

int elem_op_arity(ElemOp op) {
  const OpInfo* info = op_info(op);
  return info ? info->arity : 0;
}

const char* elem_op_name(ElemOp op) {
  const OpInfo* info = op_info(op);
  return info ? info->name : "unknown";
}

const char* elem_compute_name(ElemCompute c) {
  switch (c) {
    case ElemCompute::kFloat32: return "float32";
    case ElemCompute::kFloat64: return "float64";
    case ElemCompute::kInt64: return "int64";
    case ElemCompute::kUInt64: return "uint64";
  }
  return "unknown";
}

std::optional<ElemCompute> elem_compute_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32: return ElemCompute::kFloat32;
    case DType::kFloat64: return ElemCompute::kFloat64;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32: return ElemCompute::kInt64;
    case DType::kUInt64: return ElemCompute::kUInt64;
    default: return std::nullopt;
  }
}

DType elem_compute_storage(ElemCompute c) {
  switch (c) {
    case ElemCompute::kFloat32: return DType::kFloat32;
    case ElemCompute::kFloat64: return DType::kFloat64;
    case ElemCompute::kInt64: return DType::kInt64;
    case ElemCompute::kUInt64: return DType::kUInt64;
  }
  return DType::kInvalid;
}

template <typename T>
void ElemProgram::Impl::load_strided(const Leaf& leaf, const void* base, int64_t start, int64_t n, T* dst) const {
  std::array<int64_t, kMaxRank> idx{};
  int64_t rest = start;
  for (int32_t k = rank; k-- > 0;) {
    idx[static_cast<size_t>(k)] = rest % dims[static_cast<size_t>(k)];
    rest /= dims[static_cast<size_t>(k)];
  }
  const int32_t inner = rank - 1;
  int64_t pos = 0;
  while (pos < n) {
    int64_t offset = 0;
    for (int32_t k = 0; k < rank; ++k) offset += idx[static_cast<size_t>(k)] * leaf.strides[static_cast<size_t>(k)];
    const int64_t run = std::min(n - pos, dims[static_cast<size_t>(inner)] - idx[static_cast<size_t>(inner)]);
    elem::load_run(leaf.dtype, base, offset, leaf.strides[static_cast<size_t>(inner)], run, dst + pos);
    pos += run;
    idx[static_cast<size_t>(inner)] += run;
    for (int32_t k = inner; k > 0 && idx[static_cast<size_t>(k)] == dims[static_cast<size_t>(k)]; --k) {
      idx[static_cast<size_t>(k)] = 0;
      ++idx[static_cast<size_t>(k - 1)];
    }
  }
}

// The leaf's elements for [start, start + n) when they are one contiguous run of it, else null.
template <typename T>
const T* ElemProgram::Impl::row_in_place(const Leaf& leaf, const void* base, int64_t start, int64_t n) const {
  if (!leaf.rows_in_place) return nullptr;
  const int64_t row = dims[static_cast<size_t>(rank - 1)];
  const int64_t col = start % row;
  if (col + n > row) return nullptr;
  int64_t offset = col, rest = start / row;
  for (int32_t k = rank - 1; k-- > 0;) {
    offset += (rest % dims[static_cast<size_t>(k)]) * leaf.strides[static_cast<size_t>(k)];
    rest /= dims[static_cast<size_t>(k)];
  }
  return static_cast<const T*>(base) + offset;
}

template <typename T>
Params<T> params_of(const ElemProgram::Impl::Step& s) {
  if constexpr (std::is_same_v<T, float>) return s.pf;
  else if constexpr (std::is_same_v<T, double>) return s.pd;
  else if constexpr (std::is_same_v<T, int64_t>) return s.pi;
  else return s.pu;
}

template <typename T>
void ElemProgram::Impl::run_blocks(int64_t first, int64_t last, const void* const* inputs, void* const* out) const {
  alignas(64) unsigned char storage[kRegisterBytes];
  T* regs = reinterpret_cast<T*>(storage);
  const T* values[kMaxValues];
  const int32_t num_leaves = static_cast<int32_t>(leaves.size());

  for (int32_t l = 0; l < num_leaves; ++l) {
    const Leaf& leaf = leaves[static_cast<size_t>(l)];
    if (leaf.kind == LeafKind::kScalar)
      elem::load_run(leaf.dtype, inputs[l], 0, 0, block, regs + locs[static_cast<size_t>(l)].index * block);
  }

  for (int64_t b = first; b < last; ++b) {
    const int64_t start = b * block;
    const int64_t n = std::min(block, num_elements - start);
    for (int32_t l = 0; l < num_leaves; ++l) {
      const Leaf& leaf = leaves[static_cast<size_t>(l)];
      const Loc& loc = locs[static_cast<size_t>(l)];
      if (loc.where == Where::kLeafInPlace) {
        values[l] = static_cast<const T*>(inputs[l]) + start;
        continue;
      }
      T* reg = regs + loc.index * block;
      values[l] = reg;
      if (leaf.kind == LeafKind::kDense) {
        elem::load_run(leaf.dtype, inputs[l], start, 1, n, reg);
      } else if (leaf.kind == LeafKind::kStrided) {
        if (const T* row = row_in_place<T>(leaf, inputs[l], start, n)) {
          values[l] = row;
        } else {
          load_strided(leaf, inputs[l], start, n, reg);
        }
      }
    }
    for (size_t k = 0; k < steps.size(); ++k) {
      const Step& s = steps[k];
      const Loc& loc = locs[static_cast<size_t>(num_leaves) + k];
      T* dst = loc.where == Where::kOutput ? static_cast<T*>(out[loc.index]) + start : regs + loc.index * block;
      const T* args[3] = {values[s.args[0]], values[s.args[1]], values[s.args[2]]};
      elem::eval_step(s.op, args, dst, n, params_of<T>(s));
      if (s.narrow != DType::kInvalid) elem::narrow_run(s.narrow, dst, n);
      values[static_cast<size_t>(num_leaves) + k] = dst;
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      const Output& o = outputs[j];
      if (!o.direct) elem::store_run(o.dtype, out[j], start, values[o.value], n);
    }
  }
}

template <typename T>
void ElemProgram::Impl::run(const void* const* inputs, void* const* out) const {
  if (num_elements == 0) return;
  const int64_t num_blocks = (num_elements + block - 1) / block;
  parallel_for(num_blocks, block * cost_per_element,
               [&](int64_t first, int64_t last) { run_blocks<T>(first, last, inputs, out); });
}

ElemProgram::ElemProgram(ElemProgramSpec spec) {
  auto impl = std::make_unique<Impl>();
  impl->spec = std::move(spec);
  impl->check_spec();
  impl->collapse_dims();
  impl->plan_steps();
  impl->plan_locations();
  impl_ = std::move(impl);
}

ElemProgram::~ElemProgram() = default;

void ElemProgram::run(const void* const* inputs, void* const* outputs) const {
  switch (impl_->spec.compute) {
    case ElemCompute::kFloat32: impl_->run<float>(inputs, outputs); return;
    case ElemCompute::kFloat64: impl_->run<double>(inputs, outputs); return;
    case ElemCompute::kInt64: impl_->run<int64_t>(inputs, outputs); return;
    case ElemCompute::kUInt64: impl_->run<uint64_t>(inputs, outputs); return;
  }
}

bool ElemProgram::output0_may_overwrite(int32_t leaf) const {
  const Impl& im = *impl_;
  if (leaf < 0 || static_cast<size_t>(leaf) >= im.leaves.size()) return false;
  const Impl::Leaf& l = im.leaves[static_cast<size_t>(leaf)];
  const Impl::Output& o = im.outputs[0];
  if (l.kind != Impl::LeafKind::kDense || l.dtype != o.dtype) return false;
  // Leaves copied into registers are read before anything is written; an in-place leaf
  // must not be read after output 0's step has overwritten it.
  if (im.locs[static_cast<size_t>(leaf)].where != Impl::Where::kLeafInPlace || !o.direct) return true;
  const int32_t producer = o.value - static_cast<int32_t>(im.leaves.size());
  return im.last_read[static_cast<size_t>(leaf)] <= producer;
}

const ElemProgramSpec& ElemProgram::spec() const { return impl_->spec; }
int64_t ElemProgram::num_elements() const { return impl_->num_elements; }

std::string ElemProgram::to_string() const {
  const Impl& im = *impl_;
  std::ostringstream s;
  s << elem_compute_name(im.spec.compute) << "[";
  for (size_t i = 0; i < im.spec.dims.size(); ++i) s << (i ? ", " : "") << im.spec.dims[i];
  s << "]:";
  const size_t num_leaves = im.spec.leaves.size();
  for (size_t k = 0; k < im.spec.steps.size(); ++k) {
    const ElemStep& st = im.spec.steps[k];
    s << " v" << num_leaves + k << " = " << elem_op_name(st.op) << "(";
    for (int a = 0; a < elem_op_arity(st.op); ++a) s << (a ? ", " : "") << "v" << st.args[a];
    s << ")";
    if (st.narrow != DType::kInvalid) s << " as " << dtype_name(st.narrow);
    s << ";";
  }
  for (size_t j = 0; j < im.spec.outputs.size(); ++j)
    s << " out" << j << " = v" << im.spec.outputs[j].value << " " << dtype_name(im.spec.outputs[j].dtype) << ";";
  return s.str();
}

}  // namespace maxc::cpu
