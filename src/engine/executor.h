// Runs an ExecPlan: binds every value to its bytes, calls the kernels in order in a workspace
// of its own (an arena, and on a GPU a stream), and returns the outputs as new tensors on the
// plan's device, their values final. Many threads may run one plan at once.
#pragma once

#include <span>
#include <vector>

#include "compiler/program.h"
#include "driver/tensor.h"
#include "engine/exec_plan.h"

namespace maxc {

// Every address is in the memory of the plan's device.
struct ExecuteArgs {
  std::span<const void* const> inputs;     // dense row-major, in the program's input order
  std::span<const void* const> weights;    // dense row-major, in the program's weight order
  std::span<const void* const> constants;  // in the program's constant order
  std::span<const void* const> packed;     // by ExecPlan::prepacks slot
  int32_t num_threads = 1;
};

std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args);

}  // namespace maxc
