#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>

#include "base/error.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise_io.h"
#include "kernels/cpu/elementwise_steps.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

using elem::Params;

// Limits that keep a run free of heap allocation: value pointers and registers live on the
// stack of each thread. The fusion pass keeps programs well inside them.
constexpr int32_t kMaxValues = 512;
constexpr int32_t kMaxRank = 16;
constexpr int64_t kRegisterBytes = 64 * 1024;  // per thread: L1 and a bit of L2
constexpr int64_t kMaxBlock = 4096;            // with registers
constexpr int64_t kMaxDirectBlock = 16384;     // without: only the per-block dispatch to amortize
constexpr int64_t kMinBlock = 16;
constexpr int64_t kMinRowBlock = 512;          // a block this long pays for its dispatch

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
    {ElemOp::kWhere, "where", 3, 1},
};

const OpInfo* op_info(ElemOp op) {
  for (const OpInfo& info : kOps)
    if (info.op == op) return &info;
  return nullptr;
}

template <typename T>
size_t compute_size() {
  return sizeof(T);
}

size_t compute_bytes(ElemCompute c) {
  return c == ElemCompute::kFloat32 ? 4 : 8;
}

// Clamp bounds in the compute type. For integers the bounds move inward to the nearest
// integers (x >= 1.5 is x >= 2) and saturate at the type's range.
template <typename T>
Params<T> clamp_params(double lo, double hi) {
  if constexpr (std::is_floating_point_v<T>) {
    return {static_cast<T>(lo), static_cast<T>(hi)};
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return {saturate_to_int64(std::ceil(lo)), saturate_to_int64(std::floor(hi))};
  } else {
    return {lo <= 0.0 ? 0 : saturate_to_uint64(std::ceil(lo)), hi < 0.0 ? 0 : saturate_to_uint64(std::floor(hi))};
  }
}

}  // namespace

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

// ---- the prepared program --------------------------------------------------------------------

struct ElemProgram::Impl {
  enum class LeafKind : uint8_t { kScalar, kDense, kStrided };
  // Where a value lives during a block: read in place from a leaf, in a register, or
  // written straight into an output.
  enum class Where : uint8_t { kLeafInPlace, kRegister, kOutput };

  struct Leaf {
    LeafKind kind = LeafKind::kDense;
    DType dtype = DType::kInvalid;
    std::array<int64_t, kMaxRank> strides{};
    // Broadcast over outer dims, contiguous along the inner one and stored as the compute
    // type (a bias): a block within one inner row reads it in place.
    bool rows_in_place = false;
  };
  struct Loc {
    Where where = Where::kRegister;
    int32_t index = 0;  // leaf, register or output number
  };
  struct Step {
    ElemOp op;
    int32_t args[3];
    int32_t arity;
    DType narrow;  // kInvalid: none
    Params<float> pf;
    Params<double> pd;
    Params<int64_t> pi;
    Params<uint64_t> pu;
  };
  struct Output {
    int32_t value;
    DType dtype;
    bool direct;  // the producing step writes into it
  };

  ElemProgramSpec spec;
  int32_t rank = 1;
  std::array<int64_t, kMaxRank> dims{};
  int64_t num_elements = 0;
  std::vector<Leaf> leaves;
  std::vector<Step> steps;
  std::vector<Output> outputs;
  std::vector<Loc> locs;            // per value
  std::vector<int32_t> last_read;   // per value: the last step reading it, -1 if none
  int32_t num_registers = 0;
  int64_t block = kMaxBlock;
  int64_t cost_per_element = 1;

  void check_spec() const;
  void collapse_dims();
  void plan_steps();
  void plan_locations();
  void plan_block();

  template <typename T>
  void run(const void* const* inputs, void* const* out) const;
  template <typename T>
  void run_blocks(int64_t first, int64_t last, const void* const* inputs, void* const* out) const;
  template <typename T>
  void load_strided(const Leaf& leaf, const void* base, int64_t start, int64_t n, T* dst) const;
  template <typename T>
  const T* row_in_place(const Leaf& leaf, const void* base, int64_t start, int64_t n) const;
};

void ElemProgram::Impl::check_spec() const {
  const int32_t num_leaves = static_cast<int32_t>(spec.leaves.size());
  const int32_t num_values = num_leaves + static_cast<int32_t>(spec.steps.size());
  if (num_values > kMaxValues)
    fail(Code::kInvalidArgument, "elementwise program: ", num_values, " values; at most ", kMaxValues);
  if (spec.outputs.empty()) fail(Code::kInvalidArgument, "elementwise program: no outputs");
  for (int64_t d : spec.dims)
    if (d < 0) fail(Code::kInvalidArgument, "elementwise program: negative output dim ", d);
  for (int32_t i = 0; i < num_leaves; ++i) {
    const ElemLeaf& leaf = spec.leaves[static_cast<size_t>(i)];
    if (!is_storage_supported(leaf.dtype))
      fail(Code::kInvalidArgument, "elementwise program: leaf ", i, " has unsupported dtype ",
           dtype_name(leaf.dtype) ? dtype_name(leaf.dtype) : "invalid");
  }
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const ElemStep& s = spec.steps[k];
    const OpInfo* info = op_info(s.op);
    if (!info) fail(Code::kInvalidArgument, "elementwise program: step ", k, " has an unknown op");
    if (!elem::elem_op_supports(s.op, spec.compute))
      fail(Code::kInvalidArgument, "elementwise program: step ", k, " (", info->name, ") is not defined in ",
           elem_compute_name(spec.compute));
    for (int a = 0; a < info->arity; ++a) {
      const int32_t v = s.args[a];
      if (v < 0 || v >= num_leaves + static_cast<int32_t>(k))
        fail(Code::kInvalidArgument, "elementwise program: step ", k, " (", info->name, ") operand ", a,
             " is value ", v, "; expected a leaf or an earlier step (< ", num_leaves + static_cast<int32_t>(k), ")");
    }
    if (s.narrow != DType::kInvalid && !is_storage_supported(s.narrow))
      fail(Code::kInvalidArgument, "elementwise program: step ", k, " narrows to an unsupported dtype");
  }
  for (size_t j = 0; j < spec.outputs.size(); ++j) {
    const ElemOutput& o = spec.outputs[j];
    if (o.value < 0 || o.value >= num_values)
      fail(Code::kInvalidArgument, "elementwise program: output ", j, " is value ", o.value, "; the program has ",
           num_values);
    if (!is_storage_supported(o.dtype))
      fail(Code::kInvalidArgument, "elementwise program: output ", j, " has unsupported dtype ",
           dtype_name(o.dtype) ? dtype_name(o.dtype) : "invalid");
  }
}

// Right-aligns every leaf on the output, gives broadcast dims stride 0, drops size-1 dims and
// merges neighbours that every leaf walks contiguously (or not at all), so that a bias
// [768] over [128, 768] is a 2-d walk and a dense add of any rank is a 1-d one.
void ElemProgram::Impl::collapse_dims() {
  const std::vector<int64_t>& out = spec.dims;
  const size_t out_rank = out.size();
  num_elements = 1;
  for (int64_t d : out) num_elements *= d;

  std::vector<std::vector<int64_t>> strides(spec.leaves.size());
  for (size_t l = 0; l < spec.leaves.size(); ++l) {
    const std::vector<int64_t>& ld = spec.leaves[l].dims;
    if (ld.size() > out_rank)
      fail(Code::kInvalidArgument, "elementwise program: leaf ", l, " has rank ", ld.size(),
           ", more than the output's ", out_rank);
    strides[l].assign(out_rank, 0);
    int64_t stride = 1;
    for (size_t k = ld.size(); k-- > 0;) {
      const size_t od = k + out_rank - ld.size();
      if (ld[k] != 1 && ld[k] != out[od])
        fail(Code::kInvalidArgument, "elementwise program: leaf ", l, " dim ", k, " is ", ld[k],
             "; it must be 1 or the output's ", out[od]);
      strides[l][od] = ld[k] == 1 ? 0 : stride;
      stride *= ld[k];
    }
  }

  std::vector<int64_t> kept_dims;
  std::vector<std::vector<int64_t>> kept(spec.leaves.size());
  for (size_t i = 0; i < out_rank; ++i) {
    if (out[i] == 1) continue;
    bool merge = !kept_dims.empty();
    for (size_t l = 0; l < spec.leaves.size() && merge; ++l)
      merge = kept[l].back() == strides[l][i] * out[i];
    if (merge) {
      kept_dims.back() *= out[i];
      for (size_t l = 0; l < spec.leaves.size(); ++l) kept[l].back() = strides[l][i];
    } else {
      kept_dims.push_back(out[i]);
      for (size_t l = 0; l < spec.leaves.size(); ++l) kept[l].push_back(strides[l][i]);
    }
  }
  if (kept_dims.empty()) {
    kept_dims.push_back(1);
    for (auto& k : kept) k.push_back(0);
  }
  if (kept_dims.size() > static_cast<size_t>(kMaxRank))
    fail(Code::kUnimplemented, "elementwise program: the broadcast needs ", kept_dims.size(),
         " dims after collapsing; at most ", kMaxRank, " are supported");

  rank = static_cast<int32_t>(kept_dims.size());
  std::copy(kept_dims.begin(), kept_dims.end(), dims.begin());
  leaves.resize(spec.leaves.size());
  for (size_t l = 0; l < spec.leaves.size(); ++l) {
    Leaf& leaf = leaves[l];
    leaf.dtype = spec.leaves[l].dtype;
    std::copy(kept[l].begin(), kept[l].end(), leaf.strides.begin());
    bool all_zero = true, dense = true;
    int64_t expect = 1;
    for (int32_t k = rank; k-- > 0;) {
      all_zero = all_zero && leaf.strides[k] == 0;
      dense = dense && leaf.strides[k] == expect;
      expect *= dims[k];
    }
    leaf.kind = all_zero ? LeafKind::kScalar : dense ? LeafKind::kDense : LeafKind::kStrided;
    leaf.rows_in_place = leaf.kind == LeafKind::kStrided && leaf.strides[static_cast<size_t>(rank - 1)] == 1 &&
                         leaf.dtype == elem_compute_storage(spec.compute);
  }
}

void ElemProgram::Impl::plan_steps() {
  const int32_t num_leaves = static_cast<int32_t>(spec.leaves.size());
  last_read.assign(spec.leaves.size() + spec.steps.size(), -1);
  cost_per_element = 0;
  for (const Leaf& leaf : leaves) cost_per_element += leaf.kind == LeafKind::kScalar ? 0 : 1;
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const ElemStep& s = spec.steps[k];
    Step st{};
    st.op = s.op;
    st.arity = elem_op_arity(s.op);
    for (int a = 0; a < 3; ++a) st.args[a] = a < st.arity ? s.args[a] : s.args[0];
    for (int a = 0; a < st.arity; ++a) last_read[static_cast<size_t>(s.args[a])] = static_cast<int32_t>(k);
    // A narrow to the compute type's own storage changes nothing.
    st.narrow = s.narrow == elem_compute_storage(spec.compute) ? DType::kInvalid : s.narrow;
    st.pf = clamp_params<float>(s.p0, s.p1);
    st.pd = clamp_params<double>(s.p0, s.p1);
    st.pi = clamp_params<int64_t>(s.p0, s.p1);
    st.pu = clamp_params<uint64_t>(s.p0, s.p1);
    steps.push_back(st);
    cost_per_element += op_info(s.op)->cost + (st.narrow != DType::kInvalid ? 2 : 0);
  }
  (void)num_leaves;
  for (const ElemOutput& o : spec.outputs) cost_per_element += o.dtype == elem_compute_storage(spec.compute) ? 1 : 2;
}

// Linear scan over the steps: a register is taken when a value is made and given back after
// its last reader, so a long chain needs only a few. Leaves stored as the compute type and
// dense are read in place; a step whose output is stored as the compute type writes there.
void ElemProgram::Impl::plan_locations() {
  const int32_t num_leaves = static_cast<int32_t>(spec.leaves.size());
  const int32_t num_values = num_leaves + static_cast<int32_t>(spec.steps.size());
  const DType storage = elem_compute_storage(spec.compute);
  const int32_t kEnd = static_cast<int32_t>(spec.steps.size());  // "read by the output stores"

  std::vector<int32_t> release_after(static_cast<size_t>(num_values));
  for (int32_t v = 0; v < num_values; ++v) release_after[static_cast<size_t>(v)] = last_read[static_cast<size_t>(v)];
  outputs.clear();
  std::vector<bool> direct_output(static_cast<size_t>(num_values), false);
  std::vector<int32_t> output_of(static_cast<size_t>(num_values), -1);
  for (size_t j = 0; j < spec.outputs.size(); ++j) {
    const ElemOutput& o = spec.outputs[j];
    const bool direct = o.value >= num_leaves && o.dtype == storage && !direct_output[static_cast<size_t>(o.value)];
    if (direct) {
      direct_output[static_cast<size_t>(o.value)] = true;
      output_of[static_cast<size_t>(o.value)] = static_cast<int32_t>(j);
    } else {
      release_after[static_cast<size_t>(o.value)] = kEnd;
    }
    outputs.push_back({o.value, o.dtype, direct});
  }

  locs.assign(static_cast<size_t>(num_values), Loc{});
  std::vector<int32_t> free_regs;
  int32_t next_reg = 0;
  auto take = [&] {
    if (!free_regs.empty()) {
      const int32_t r = free_regs.back();
      free_regs.pop_back();
      return r;
    }
    return next_reg++;
  };
  std::vector<std::vector<int32_t>> frees(spec.steps.size() + 1);
  auto schedule_free = [&](int32_t v) {
    const int32_t at = release_after[static_cast<size_t>(v)];
    frees[static_cast<size_t>(at < 0 ? 0 : at)].push_back(locs[static_cast<size_t>(v)].index);
  };

  for (int32_t l = 0; l < num_leaves; ++l) {
    const Leaf& leaf = leaves[static_cast<size_t>(l)];
    if (leaf.kind == LeafKind::kDense && leaf.dtype == storage) {
      locs[static_cast<size_t>(l)] = {Where::kLeafInPlace, l};
      continue;
    }
    locs[static_cast<size_t>(l)] = {Where::kRegister, take()};
    // Scalar leaves are filled once per thread, so their registers are never reused.
    if (leaf.kind != LeafKind::kScalar) schedule_free(l);
  }
  for (int32_t k = 0; k < static_cast<int32_t>(spec.steps.size()); ++k) {
    // Operands read for the last time here may hand their register to this step's result:
    // every op reads element i before it writes element i.
    for (int32_t r : frees[static_cast<size_t>(k)]) free_regs.push_back(r);
    frees[static_cast<size_t>(k)].clear();
    const int32_t v = num_leaves + k;
    if (direct_output[static_cast<size_t>(v)]) {
      locs[static_cast<size_t>(v)] = {Where::kOutput, output_of[static_cast<size_t>(v)]};
      continue;
    }
    locs[static_cast<size_t>(v)] = {Where::kRegister, take()};
    if (release_after[static_cast<size_t>(v)] < 0) {
      free_regs.push_back(locs[static_cast<size_t>(v)].index);  // nobody reads it
    } else {
      schedule_free(v);
    }
  }
  num_registers = next_reg;
  plan_block();
}

// Blocks as long as the registers allow; when a leaf is a broadcast row (a bias), a length
// that tiles the row so that every block reads the row in place instead of copying it.
void ElemProgram::Impl::plan_block() {
  const int64_t bytes = static_cast<int64_t>(compute_bytes(spec.compute));
  if (num_registers == 0) {
    block = kMaxDirectBlock;
    return;
  }
  block = std::min(kMaxBlock, kRegisterBytes / (num_registers * bytes) / kMinBlock * kMinBlock);
  if (block < kMinBlock)
    fail(Code::kInvalidArgument, "elementwise program: needs ", num_registers, " registers; at most ",
         kRegisterBytes / (kMinBlock * bytes), " fit");
  const int64_t row = dims[static_cast<size_t>(rank - 1)];
  const bool has_row_leaf = std::any_of(leaves.begin(), leaves.end(), [](const Leaf& l) { return l.rows_in_place; });
  if (!has_row_leaf || row < kMinRowBlock) return;
  for (int64_t b = std::min(block, row) / kMinBlock * kMinBlock; b >= kMinRowBlock; b -= kMinBlock) {
    if (row % b == 0) {
      block = b;
      return;
    }
  }
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
