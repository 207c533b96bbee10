#include "engine/captured_graph.h"

#include "driver/cuda/cuda_device.h"
#include "driver/device.h"
#include "engine/launch_trace.h"

namespace maxc {

CapturedGraph::CapturedGraph(PlanBinding binding, SymbolValues symbols)
    : binding_(std::move(binding)),
      symbols_(std::move(symbols)),
      workspace_(binding_.plan->workspaces->acquire()) {}

CapturedGraph::~CapturedGraph() {
  // The graph's work must be done before its arena goes back to the allocator.
  if (workspace_->stream) {
    try {
      workspace_->stream->synchronize();
    } catch (const Error&) {
      // A failed device: nothing waits on this graph's memory any more.
    }
  }
}

std::unique_ptr<CapturedGraph> CapturedGraph::capture(PlanBinding binding, SymbolValues symbols,
                                                      std::span<const Ref<Tensor>> inputs) {
  std::unique_ptr<CapturedGraph> g(new CapturedGraph(std::move(binding), std::move(symbols)));
  const ExecPlan& plan = *g->binding_.plan;
  const Program& p = g->binding_.compiled->program();
  g->outputs_ = make_outputs(plan, p);
  const cuda::CudaStream* stream = g->workspace_->stream.get();
  if (stream)
    for (const auto& t : inputs) g->inputs_.push_back(Tensor::create(plan.device, t->dtype(), t->dims(), false));
  const std::vector<const void*> in = g->input_addresses(inputs);
  LaunchTrace trace;
  if (stream) {
    g->copy_inputs(inputs);
    try {
      g->graph_ = cuda::CudaGraph::capture(
          *stream, [&] { enqueue_plan(plan, p, g->binding_.args(in), *g->workspace_, g->outputs_); });
    } catch (const Error& e) {
      fail(e.code(), "capturing the model's run on ", plan.device->name(), ": ", e.what());
    }
    g->graph_->launch(*stream);
  } else {
    enqueue_plan(plan, p, g->binding_.args(in), *g->workspace_, g->outputs_);
  }
  g->finish();
  g->trace_ = trace.entries();
  return g;
}

std::vector<const void*> CapturedGraph::input_addresses(std::span<const Ref<Tensor>> inputs) const {
  std::vector<const void*> addresses;
  for (size_t i = 0; i < inputs.size(); ++i)
    addresses.push_back(inputs_.empty() ? inputs[i]->data() : inputs_[i]->data());
  return addresses;
}

void CapturedGraph::copy_inputs(std::span<const Ref<Tensor>> inputs) const {
  const cuda::CudaDevice& device = *binding_.plan->device->cuda();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->byte_size() > 0)
      device.copy_within(inputs_[i]->data(), inputs[i]->data(), inputs[i]->byte_size(), workspace_->stream.get());
}

void CapturedGraph::finish() const {
  if (workspace_->stream) workspace_->stream->synchronize();
  check_step_errors(*binding_.plan, *workspace_);
}

void CapturedGraph::replay(std::span<const Ref<Tensor>> inputs) const {
  std::lock_guard lock(mu_);
  if (graph_) {
    copy_inputs(inputs);
    graph_->launch(*workspace_->stream);
  } else {
    const std::vector<const void*> in = input_addresses(inputs);
    enqueue_plan(*binding_.plan, binding_.compiled->program(), binding_.args(in), *workspace_, outputs_);
  }
  finish();
}

}  // namespace maxc
