// ElemProgram planning: checking a spec, collapsing its dims, classifying its leaves,
// assigning block registers and sizing the blocks (see elementwise_program.h).
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/elementwise_program.h"
#include "kernels/cpu/elementwise_steps.h"

namespace maxc::cpu {
namespace {

using elem::Params;

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
      fail(Code::kInvalidArgument, "elementwise program: leaf ", i, " has unsupported dtype ", dtype_label(leaf.dtype));
  }
  for (size_t k = 0; k < spec.steps.size(); ++k) {
    const ElemStep& s = spec.steps[k];
    if (!elem_op_known(s.op)) fail(Code::kInvalidArgument, "elementwise program: step ", k, " has an unknown op");
    const char* name = elem_op_name(s.op);
    if (!elem::elem_op_supports(s.op, spec.compute))
      fail(Code::kInvalidArgument, "elementwise program: step ", k, " (", name, ") is not defined in ",
           elem_compute_name(spec.compute));
    for (int a = 0; a < elem_op_arity(s.op); ++a) {
      const int32_t v = s.args[a];
      if (v < 0 || v >= num_leaves + static_cast<int32_t>(k))
        fail(Code::kInvalidArgument, "elementwise program: step ", k, " (", name, ") operand ", a,
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
      fail(Code::kInvalidArgument, "elementwise program: output ", j, " has unsupported dtype ", dtype_label(o.dtype));
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
    cost_per_element += elem_op_cost(s.op) + (st.narrow != DType::kInvalid ? 2 : 0);
  }
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

}  // namespace maxc::cpu
