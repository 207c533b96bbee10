// Runs an ExecPlan: binds every value to its bytes, calls the kernels in order on an arena
// of its own, and returns the outputs as new tensors. Many threads may run one plan at once.
#pragma once

#include <span>
#include <vector>

#include "compiler/program.h"
#include "driver/tensor.h"
#include "engine/exec_plan.h"

namespace maxc {

struct ExecuteArgs {
  std::span<const void* const> inputs;   // dense row-major, in the program's input order
  std::span<const void* const> weights;  // dense row-major, in the program's weight order
  std::span<const void* const> packed;   // by ExecPlan::prepacks slot
  int32_t num_threads = 1;
};

std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args);

}  // namespace maxc
