// The elementwise program of a node, in the terms of kernels/cpu/elementwise.h
// (ElemProgramSpec): leaves broadcast into one output shape, steps in one compute type,
// outputs. Built once from the graph and handed to whichever device runs it: the CPU engine
// makes an ElemProgram of it, the GPU engine generates one kernel from it
// (kernels/cuda/fused_elementwise.h), so both compute the same thing.
#pragma once

#include <optional>

#include "engine/lowering.h"
#include "kernels/cpu/elementwise.h"

namespace maxc {

// The program of an elementwise registry op or a "fused_elementwise" node; nullopt when the
// node moves nothing (a cast to its input's own dtype: the output is the input's bytes).
// INTERNAL for a fused node the fusion pass should not have made; UNIMPLEMENTED for an op or
// dtype the elementwise engine has no step for. Casts to and from float8/float4 are not
// programs (their lowerings handle them before asking).
std::optional<cpu::ElemProgramSpec> elementwise_spec(const LowerContext& ctx);

// Adds `program` for every elementwise op and for fused_elementwise, but max and min with one
// input, which are reductions, go to `reduce_max_min`: one op table layout for every device.
void register_elementwise_lowerings(KernelTable& t, LowerFn program, LowerFn reduce_max_min);

}  // namespace maxc
