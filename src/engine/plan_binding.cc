#include "engine/plan_binding.h"

#include "engine/context.h"
#include "kernels/cpu/thread_pool.h"

namespace maxc {

PlanBinding::PlanBinding(Ref<CompiledModel> c, std::shared_ptr<ExecPlan> p, std::shared_ptr<const BoundWeights> w)
    : compiled(std::move(c)), plan(std::move(p)), weights(std::move(w)) {
  // Only the weights the plan reads in place: asking a deferred weight for its address
  // makes its copy (Storage::deferred), which a weight read only packed never needs.
  const auto& tensors = weights->tensors();
  weight_addresses.assign(tensors.size(), nullptr);
  for (size_t i = 0; i < tensors.size(); ++i)
    if (plan->reads_weight[i]) weight_addresses[i] = tensors[i]->data();
  cpu::PoolScope pool(compiled->context()->pool());  // packing runs on the pool too
  packed = weights->packed_for(*plan);
}

ExecuteArgs PlanBinding::args(std::span<const void* const> inputs) const {
  return ExecuteArgs{inputs, weight_addresses, compiled->constant_addresses(), packed,
                     compiled->context()->num_threads(), compiled->context()->pool()};
}

}  // namespace maxc
