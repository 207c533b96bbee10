// Everything one run of a plan reads besides its inputs: the plan, the weights snapshot it
// runs with and their packed copies, and the compiled model that owns its constants. Made
// once per plan and snapshot and shared by the calls that run them (Model::binding_for), so
// an execute resolves no weight; or held, for as long as it may replay, by a captured graph.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "base/object.h"
#include "engine/bound_weights.h"
#include "engine/compiled_model.h"
#include "engine/exec_plan.h"
#include "engine/executor.h"

namespace maxc {

struct PlanBinding {
  Ref<CompiledModel> compiled;
  std::shared_ptr<ExecPlan> plan;
  std::shared_ptr<const BoundWeights> weights;
  std::vector<const void*> weight_addresses;  // in the program's weight order; null if read only packed
  std::vector<const void*> packed;            // by plan->prepacks slot

  // Packs what the plan asks of the weights (on the compiled model's thread team).
  PlanBinding(Ref<CompiledModel> compiled, std::shared_ptr<ExecPlan> plan, std::shared_ptr<const BoundWeights> weights);

  // The arguments of a run on `inputs` (dense, on the plan's device, in program order).
  ExecuteArgs args(std::span<const void* const> inputs) const;
};

}  // namespace maxc
