// One step of an elementwise program applied to a block, per compute type. Each is compiled
// twice (AVX2+FMA and portable, MAXC_SIMD_CLONES) with every op's loop inlined into it.
// `args` holds the step's operands (as many as the op's arity); `out` may be one of them.
#pragma once

#include <cstdint>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/elementwise_ops.h"

namespace maxc::cpu::elem {

void eval_step(ElemOp op, const float* const* args, float* out, int64_t n, Params<float> p);
void eval_step(ElemOp op, const double* const* args, double* out, int64_t n, Params<double> p);
void eval_step(ElemOp op, const int64_t* const* args, int64_t* out, int64_t n, Params<int64_t> p);
void eval_step(ElemOp op, const uint64_t* const* args, uint64_t* out, int64_t n, Params<uint64_t> p);

// Whether `op` is defined for compute type `c` (transcendentals and division need floats).
bool elem_op_supports(ElemOp op, ElemCompute c);

}  // namespace maxc::cpu::elem
