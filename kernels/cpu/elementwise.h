// The one elementwise engine (DESIGN §5): a small program of steps evaluated block by block
// over the output, so that an unfused `add` and a fused chain of twenty ops run the same
// loop. A program reads leaves (the kernel's inputs, each broadcast numpy-style into the
// output shape, of any storage dtype), computes every step in one compute type, and writes
// any of its values to outputs (each of the output shape, of any storage dtype).
//
// Compute types: float for float32/float16/bfloat16, double for float64, int64_t for the
// signed integers and the unsigned ones up to 32 bits, uint64_t for uint64. Booleans are
// 0/1 in whatever the program computes in. A step may narrow its result to a storage dtype
// (round a float to float16, wrap an int64 to int8) so that a fused chain gives bit for bit
// what the unfused ops give.
//
// The engine knows nothing of graphs: the lowering (src/engine/lower/elementwise.cc) turns
// ops and fused nodes into a spec.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"

namespace maxc::cpu {

enum class ElemOp : uint8_t {
  // unary
  kCopy,
  kAbs,
  kAcos,  // clamps its input to [-1, 1] first, as MAX does
  kAtanh,
  kCos,
  kErf,
  kExp,
  kFloor,
  kLog,
  kLog1p,
  kNegate,
  kRelu,
  kRound,  // half to even
  kRsqrt,
  kSigmoid,
  kSilu,
  kSin,
  kSqrt,
  kTanh,
  kTrunc,
  kGeluErf,
  kGeluTanh,
  kGeluQuick,
  kLogicalNot,
  kIsInf,
  kIsNan,
  kClamp,  // to [p0, p1]; NaN stays NaN
  kSquare,
  kCube,
  kReciprocal,
  kOne,  // x^0
  kBitwiseNot,  // two's complement on the wide integer; narrowing keeps the low bits right
  // binary
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,  // Python/numpy sign: the result has the divisor's sign; x mod 0 is NaN (0 for ints)
  kPow,
  kMax,  // NaN-propagating, like numpy.maximum
  kMin,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLess,
  kLessEqual,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  // Integers: on the wide value, whose low bits are the narrow value's. Bools (0/1 in any
  // compute type, floats too): the logical op.
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  // ternary
  kWhere,  // a != 0 ? b : c
};

int elem_op_arity(ElemOp op);
const char* elem_op_name(ElemOp op);

enum class ElemCompute : uint8_t { kFloat32, kFloat64, kInt64, kUInt64 };

const char* elem_compute_name(ElemCompute c);
// The compute type of values of `dtype`; nullopt for bool (0/1 in any compute type) and for
// dtypes no kernel computes on (float8, float4).
std::optional<ElemCompute> elem_compute_of(DType dtype);
// The storage dtype a compute type keeps in memory (float32, float64, int64, uint64).
DType elem_compute_storage(ElemCompute c);

struct ElemLeaf {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;  // broadcasts into the output dims (right-aligned, numpy rules)
};

// A value of the program: leaves are 0..L-1, step k's result is L+k.
struct ElemStep {
  ElemOp op = ElemOp::kCopy;
  int32_t args[3] = {-1, -1, -1};
  double p0 = 0.0, p1 = 0.0;           // kClamp's bounds (±inf for none)
  DType narrow = DType::kInvalid;      // round/wrap the result to this dtype, if set
};

struct ElemOutput {
  int32_t value = 0;
  DType dtype = DType::kInvalid;
};

struct ElemProgramSpec {
  ElemCompute compute = ElemCompute::kFloat32;
  std::vector<int64_t> dims;  // the output shape, shared by every output
  std::vector<ElemLeaf> leaves;
  std::vector<ElemStep> steps;
  std::vector<ElemOutput> outputs;
};

// A spec checked and prepared for execution: dims collapsed, each leaf classified (scalar,
// dense, broadcast), values assigned to block registers. Immutable, so one program serves
// concurrent executions. Construction throws maxc::Error (INVALID_ARGUMENT) on a malformed
// spec: bad value references, shapes that do not broadcast, unsupported dtypes.
class ElemProgram {
 public:
  explicit ElemProgram(ElemProgramSpec spec);
  ~ElemProgram();

  // inputs[i] points at leaf i's dense row-major data; outputs[j] at output j's.
  void run(const void* const* inputs, void* const* outputs) const;

  // Whether output 0 may be written over leaf `leaf`'s buffer: same dtype, same layout, and
  // no step reads the leaf after output 0's bytes are written.
  bool output0_may_overwrite(int32_t leaf) const;

  const ElemProgramSpec& spec() const;
  int64_t num_elements() const;
  std::string to_string() const;  // for debugging: "f32[6]: v2 = add(v0, v1) -> out0 float32"

  struct Impl;

 private:
  std::unique_ptr<const Impl> impl_;
};

}  // namespace maxc::cpu
