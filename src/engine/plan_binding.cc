#include "engine/plan_binding.h"

#include "kernels/cpu/parallel.h"

namespace maxc {

PlanBinding::PlanBinding(Ref<CompiledModel> c, std::shared_ptr<ExecPlan> p, std::shared_ptr<const BoundWeights> w)
    : compiled(std::move(c)), plan(std::move(p)), weights(std::move(w)) {
  for (const auto& t : weights->tensors()) weight_addresses.push_back(t->data());
  cpu::size_team(compiled->context()->num_threads());  // packing runs on the team too
  packed = weights->packed_for(*plan);
}

ExecuteArgs PlanBinding::args(std::span<const void* const> inputs) const {
  return ExecuteArgs{inputs, weight_addresses, compiled->constant_addresses(), packed,
                     compiled->context()->num_threads()};
}

}  // namespace maxc
