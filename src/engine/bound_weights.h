// The weights a Model has bound, as one immutable snapshot, and the packed copies its
// kernels asked for (Prepack in lowering.h). A copy is made the first time a plan needs it
// and kept as long as the snapshot: a reload makes a new snapshot, so a packed copy never
// outlives the weight it came from, and calls still running on the old one keep theirs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "driver/tensor.h"
#include "engine/exec_plan.h"

namespace maxc {

class BoundWeights {
 public:
  explicit BoundWeights(std::vector<Ref<Tensor>> tensors) : tensors_(std::move(tensors)) {}

  const std::vector<Ref<Tensor>>& tensors() const { return tensors_; }
  // One address per plan.prepacks slot, packing what is missing. Thread-safe. Called when a
  // plan is bound to the snapshot (PlanBinding), not per execute.
  std::vector<const void*> packed_for(const ExecPlan& plan) const;

 private:
  using Key = std::pair<uint32_t, std::string>;  // weight number, layout
  std::vector<Ref<Tensor>> tensors_;
  mutable std::mutex mu_;
  mutable std::map<Key, std::shared_ptr<uint8_t>> packed_;
};

}  // namespace maxc
