// What each elementwise registry op computes, in the elementwise engine's terms: its ElemOp,
// its scalar parameters, and the compute type it runs in (kernels/cpu/elementwise.h). Shared
// by the lowering of single ops and of fused nodes so both read the graph the same way.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/program.h"
#include "kernels/cpu/elementwise.h"

namespace maxc {

struct ElemOpDesc {
  cpu::ElemOp op = cpu::ElemOp::kCopy;
  // The compute type; nullopt for ops on bool alone (logical ops), which fit any program.
  std::optional<cpu::ElemCompute> compute;
  double p0 = 0.0, p1 = 0.0;  // clamp bounds
  bool is_cast = false;       // no step: the program's store converts
};

// Every op name describe_elementwise knows ("abs" ... "cast"), for the kernel table.
const std::vector<std::string>& elementwise_op_names();

// The description of `node` (a registry op) with the given input and output dtypes.
// UNIMPLEMENTED naming `where` for an op or dtype the engine has no kernel for (float8, ...).
ElemOpDesc describe_elementwise(const Node& node, std::span<const DType> inputs, DType output,
                                const std::string& where);

}  // namespace maxc
