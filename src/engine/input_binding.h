// The checks every execute runs before any kernel (DESIGN §4): the inputs' count, dtype,
// rank, device and dims against the model's input types, binding each symbolic dim to one
// value across all inputs.
#pragma once

#include <span>

#include "compiler/program.h"
#include "driver/tensor.h"
#include "engine/exec_plan.h"

namespace maxc {

// INVALID_ARGUMENT naming the input (position and name) and the mismatch; an input must be on
// `device`, the model's (it is never copied behind the caller's back).
SymbolValues bind_inputs(const Program& p, std::span<const Ref<Tensor>> inputs, const Device& device);

}  // namespace maxc
