// An ExecPlan: a Program specialized for one set of concrete input shapes (DESIGN §4). Every
// node is lowered to a kernel, every value has a home (an input, a weight, a constant, an
// output tensor, or an offset in the arena), and `execute` only walks the steps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "compiler/program.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/device.h"
#include "engine/lowering.h"

namespace maxc {

struct Home {
  enum class Kind : uint8_t { kInput, kWeight, kConstant, kOutput, kArena };
  Kind kind = Kind::kArena;
  uint32_t index = 0;   // input, weight, constant or output number
  uint64_t offset = 0;  // kArena: bytes into the arena
};

struct Step {
  Kernel run;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  int64_t scratch_offset = -1;  // bytes into the arena, or -1 for none
  std::string op;               // for logs and profiles
  int32_t packed_input = -1;    // this input reads ExecPlan::prepacks[packed_slot] instead
  uint32_t packed_slot = 0;
  std::string error;            // Lowered::error: the step has an error word when not empty
  // In a StepLoop: the bytes each pass moves input i's (output j's) address on; empty outside.
  std::vector<uint64_t> input_strides;
  std::vector<uint64_t> output_strides;
};

// Steps [first, end) run `passes` times over slices of the batch (engine/batch_loop.h), each
// pass with its operands moved on by the steps' strides.
struct StepLoop {
  size_t first = 0, end = 0;
  int64_t passes = 1;
};

// A packed copy of weight `weight` that some step reads (see Prepack in lowering.h).
struct PrepackSlot {
  uint32_t weight = 0;
  std::string layout;
  uint64_t bytes = 0;
  std::function<void(const void*, void*)> pack;
};

// What one call runs in: its arena in the plan device's memory and, on a GPU, the stream its
// kernels and copies queue on (a call's work is ordered on one stream; calls overlap).
struct Workspace {
  std::shared_ptr<uint8_t> arena;
  std::unique_ptr<cuda::CudaStream> stream;  // null on the host
  std::shared_ptr<int32_t> error_words;      // GPU: one per step, when a step reports errors
  // The addresses a call hands its kernels. Kept here rather than made per call: only the
  // call holding the workspace touches them, and each call reuses the capacity the earlier
  // ones grew, so a warm workspace runs a plan without allocating.
  std::vector<const void*> input_addresses;  // the plan's inputs
  std::vector<void*> step_inputs, step_outputs;  // the step being run's operands
};

// Workspaces of one arena size on one device, handed to concurrent calls; a call that finds
// none free makes one. A workspace comes back only once its call's work is done.
class WorkspacePool {
 public:
  WorkspacePool(uint64_t arena_bytes, Ref<Device> device, size_t error_words)
      : bytes_(arena_bytes), device_(std::move(device)), error_words_(error_words) {}
  std::unique_ptr<Workspace> acquire();
  void release(std::unique_ptr<Workspace> workspace);

 private:
  uint64_t bytes_;
  Ref<Device> device_;
  size_t error_words_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Workspace>> free_;
};

struct ExecPlan {
  Ref<Device> device;         // where every home and kernel is
  std::vector<Shape> shapes;  // by ValueId
  std::vector<Home> homes;    // by ValueId
  std::vector<Step> steps;
  std::vector<StepLoop> loops;  // in step order, disjoint
  std::vector<PrepackSlot> prepacks;
  // By weight number: some step or output reads the weight as it is bound (not only its
  // packed copies), so a run needs its address.
  std::vector<bool> reads_weight;
  // Output j is written in place by its producer when direct[j]; otherwise it is copied
  // from its value's home after the steps ran (an input, a weight, an alias, a repeat).
  std::vector<bool> direct_outputs;
  bool reports_errors = false;  // some step has an error word (GPU only)
  uint64_t arena_bytes = 0;
  uint64_t intermediate_bytes = 0;  // the sum of the arena's buffers, were none shared
  std::unique_ptr<WorkspacePool> workspaces;
};

// Symbol -> value, as fixed by the inputs of one call.
using SymbolValues = std::map<std::string, int64_t, std::less<>>;

// Builds the plan for `p` on `device` with the symbols bound to `symbols`. UNIMPLEMENTED when
// a node has no kernel on that device for its shapes and dtypes; INVALID_ARGUMENT when a
// value's dims come out negative for these symbols.
std::unique_ptr<ExecPlan> build_plan(const Program& p, const SymbolValues& symbols, int32_t num_threads,
                                     const Ref<Device>& device);

}  // namespace maxc
