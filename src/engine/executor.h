// Runs an ExecPlan: binds every value to its bytes, calls the kernels in order in a workspace
// of its own (an arena, and on a GPU a stream), and returns the outputs as new tensors on the
// plan's device, their values final. Many threads may run one plan at once, each in its own
// workspace.
#pragma once

#include <span>
#include <vector>

#include "compiler/program.h"
#include "driver/tensor.h"
#include "engine/exec_plan.h"
#include "kernels/cpu/thread_pool.h"

namespace maxc {

// Every address is in the memory of the plan's device.
struct ExecuteArgs {
  std::span<const void* const> inputs;     // dense row-major, in the program's input order
  std::span<const void* const> weights;    // dense row-major, in the program's weight order
  std::span<const void* const> constants;  // in the program's constant order
  std::span<const void* const> packed;     // by ExecPlan::prepacks slot
  int32_t num_threads = 1;
  // The pool the plan's kernels run on (the context's), current on the calling thread while
  // the plan runs; nullptr keeps the thread's current one (a region plan run by a step).
  cpu::ThreadPool* pool = nullptr;
};

// Runs the plan and waits for it: the outputs are new tensors. Fails naming the op whose
// kernel reported an error (on a GPU, found once the stream is done). Before each step it
// checks the calling thread's run limits (engine/run_limits.h).
std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args);
// As above, on input tensors (dense, on the plan's device, in program order) in place of
// args.inputs: their addresses go into the call's workspace, not a list of the call's own.
std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, ExecuteArgs args,
                                  std::span<const Ref<Tensor>> inputs);

// The pieces of run_plan, for a graph that is captured once and replayed into the same
// buffers (engine/captured_graph.h).
//
// Uninitialized output tensors of the plan's shapes, on its device.
std::vector<Ref<Tensor>> make_outputs(const ExecPlan& plan, const Program& p);
// Queues every step, and the copies of the outputs no step writes in place, in `workspace`
// (on a GPU, on its stream: nothing waits). On the host each step is recorded in this
// thread's open LaunchTrace, if any; a GPU's kernels record themselves.
void enqueue_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args, Workspace& workspace,
                  std::span<const Ref<Tensor>> outputs);
// Once the workspace's work is done: fails naming the first step whose kernel set its error
// word. Nothing on the host, where kernels throw.
void check_step_errors(const ExecPlan& plan, const Workspace& workspace);

}  // namespace maxc
