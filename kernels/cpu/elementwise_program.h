// The inside of an ElemProgram, shared by its planning (elementwise_plan.cc: checking the
// spec, collapsing dims, classifying leaves, assigning registers, sizing blocks) and its
// running (elementwise.cc). Not for use outside the elementwise engine.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/elementwise_ops.h"

namespace maxc::cpu {

// Limits that keep a run free of heap allocation: value pointers and registers live on the
// stack of each thread. The fusion pass keeps programs well inside them.
constexpr int32_t kMaxValues = 512;
constexpr int32_t kMaxRank = 16;
constexpr int64_t kRegisterBytes = 64 * 1024;  // per thread: L1 and a bit of L2
constexpr int64_t kMaxBlock = 4096;            // with registers
constexpr int64_t kMaxDirectBlock = 16384;     // without: only the per-block dispatch to amortize
constexpr int64_t kMinBlock = 16;
constexpr int64_t kMinRowBlock = 512;          // a block this long pays for its dispatch

// Scalar operations per element of an op, for the parallel split; whether the op exists.
int elem_op_cost(ElemOp op);
bool elem_op_known(ElemOp op);

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
    elem::Params<float> pf;
    elem::Params<double> pd;
    elem::Params<int64_t> pi;
    elem::Params<uint64_t> pu;
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

}  // namespace maxc::cpu
