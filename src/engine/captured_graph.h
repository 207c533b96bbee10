// A model's run captured once, for one set of input shapes, and replayed into the same
// output buffers: MAX's Model.capture / replay / debug_verify_replay.
//
// On a GPU the run's kernels and copies are recorded as a CUDA graph (driver/cuda/
// cuda_graph.h), so one launch replays them all. Every address is fixed at capture, so the
// graph owns buffers for the inputs (a replay copies the caller's into them first), its own
// arena, and the outputs that capture returned, which every replay rewrites. On the host
// there is no device graph: a replay runs the captured plan into those same outputs, so the
// contract, and a program written against it, holds on either device.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "driver/cuda/cuda_graph.h"
#include "engine/plan_binding.h"

namespace maxc {

class CapturedGraph {
 public:
  // Runs `binding`'s plan once on `inputs` (dense, on the plan's device, checked), recording
  // it, and waits for it: outputs() then hold the results. FAILED_PRECONDITION when the work
  // cannot be captured (an op that waits on the host mid-run); kernel errors as execute's.
  static std::unique_ptr<CapturedGraph> capture(PlanBinding binding, SymbolValues symbols,
                                                std::span<const Ref<Tensor>> inputs);
  ~CapturedGraph();

  // Runs the graph again on `inputs` (checked, with the shapes it was captured with) into
  // outputs(), and waits for it. Replays of one graph take turns; thread-safe.
  void replay(std::span<const Ref<Tensor>> inputs) const;

  const std::vector<Ref<Tensor>>& outputs() const { return outputs_; }
  // The symbols the inputs bound at capture: a replay's inputs must bind the same.
  const SymbolValues& symbols() const { return symbols_; }
  // What the capture launched, in order (see engine/launch_trace.h).
  const std::vector<std::string>& trace() const { return trace_; }
  const PlanBinding& binding() const { return binding_; }

 private:
  CapturedGraph(PlanBinding binding, SymbolValues symbols);
  // The addresses a run reads its inputs from: the graph's own buffers on a GPU, the
  // caller's on the host.
  std::vector<const void*> input_addresses(std::span<const Ref<Tensor>> inputs) const;
  void copy_inputs(std::span<const Ref<Tensor>> inputs) const;
  void finish() const;  // waits for the stream and reports kernel errors

  PlanBinding binding_;
  SymbolValues symbols_;
  std::unique_ptr<Workspace> workspace_;  // the graph's own: its arena's addresses are baked in
  std::vector<Ref<Tensor>> inputs_;       // GPU: what the graph reads
  std::vector<Ref<Tensor>> outputs_;
  std::unique_ptr<cuda::CudaGraph> graph_;  // GPU only
  std::vector<std::string> trace_;
  mutable std::mutex mu_;
};

}  // namespace maxc
