#include "engine/executor.h"

#include <chrono>
#include <cstring>
#include <optional>

#include "base/log.h"
#include "base/str_cat.h"
#include "driver/cuda/cuda_device.h"
#include "driver/device.h"
#include "engine/launch_trace.h"
#include "engine/run_limits.h"
#include "kernels/cpu/thread_pool.h"

namespace maxc {

namespace {

// Returns a workspace to its pool however the call ends, once the work queued on its stream
// is done: the next call may write its arena at once.
class WorkspaceLease {
 public:
  explicit WorkspaceLease(WorkspacePool& pool) : pool_(pool), workspace_(pool.acquire()) {}
  ~WorkspaceLease() {
    if (workspace_->stream) {
      try {
        workspace_->stream->synchronize();
      } catch (const Error& e) {
        // The device failed under this call (the call reports it): its workspace is not reused.
        MAXC_LOG(kWarning, "dropping a workspace whose stream failed: ", e.what());
        return;
      }
    }
    pool_.release(std::move(workspace_));
  }
  Workspace& get() const { return *workspace_; }

 private:
  WorkspacePool& pool_;
  std::unique_ptr<Workspace> workspace_;
};

void* address(const Home& home, const ExecuteArgs& args, uint8_t* arena, std::span<const Ref<Tensor>> outputs) {
  switch (home.kind) {
    case Home::Kind::kInput: return const_cast<void*>(args.inputs[home.index]);
    case Home::Kind::kWeight: return const_cast<void*>(args.weights[home.index]);
    case Home::Kind::kConstant: return const_cast<void*>(args.constants[home.index]);
    case Home::Kind::kOutput: return outputs[home.index]->data();
    case Home::Kind::kArena: return arena + home.offset;
  }
  return nullptr;
}

void copy_bytes(const Device& device, void* dst, const void* src, size_t bytes, const cuda::CudaStream* stream) {
  if (bytes == 0) return;
  if (device.cuda()) {
    device.cuda()->copy_within(dst, src, bytes, stream);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

// `p` moved on `pass` times `stride` bytes: a loop step's operand in that pass.
void* advanced(void* p, int64_t pass, uint64_t stride) {
  return static_cast<uint8_t*>(p) + static_cast<uint64_t>(pass) * stride;
}

std::string step_shape(const Step& step, const ExecPlan& plan) {
  return step.outputs.empty() ? "" : plan.shapes[step.outputs[0]].to_string();
}

// A profile without a rebuild: at trace level (MAX_C_LOG_LEVEL=trace) every step logs its
// time and its output's shape.
void run_traced(const Step& step, const KernelArgs& args, const ExecPlan& plan) {
  const auto t0 = std::chrono::steady_clock::now();
  step.run(args);
  const auto t1 = std::chrono::steady_clock::now();
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  MAXC_LOG(kTrace, "step ", step.op, " ", step_shape(step, plan), " ", us, " us");
}

void run_step(const Step& step, const KernelArgs& args, const ExecPlan& plan) {
  if (!plan.device->cuda() && LaunchTrace::open()) LaunchTrace::record(str_cat(step.op, " ", step_shape(step, plan)));
  if (log_enabled(LogLevel::kTrace)) {
    run_traced(step, args, plan);
  } else {
    step.run(args);
  }
}

}  // namespace

std::vector<Ref<Tensor>> make_outputs(const ExecPlan& plan, const Program& p) {
  std::vector<Ref<Tensor>> outputs;
  outputs.reserve(p.outputs.size());
  for (const auto& out : p.outputs) {
    const Shape& s = plan.shapes[out.value];
    outputs.push_back(Tensor::create(plan.device, s.dtype, s.dims, /*zero=*/false));
  }
  return outputs;
}

void enqueue_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args, Workspace& workspace,
                  std::span<const Ref<Tensor>> outputs) {
  uint8_t* arena = workspace.arena.get();
  const cuda::CudaStream* stream = workspace.stream.get();
  std::optional<cpu::PoolScope> pool;
  if (args.pool) pool.emplace(args.pool);
  int32_t* error_words = plan.reports_errors ? workspace.error_words.get() : nullptr;
  if (error_words) plan.device->cuda()->fill_zero(error_words, plan.steps.size() * sizeof(int32_t), stream);
  std::vector<void*>& in_ptrs = workspace.step_inputs;
  std::vector<void*>& out_ptrs = workspace.step_outputs;
  // Step k in pass `pass` of its loop (0 outside loops).
  auto run = [&](size_t k, int64_t pass) {
    const Step& step = plan.steps[k];
    check_run_limits(step.op, "step", static_cast<int64_t>(k));
    in_ptrs.clear();
    out_ptrs.clear();
    for (ValueId v : step.inputs) in_ptrs.push_back(address(plan.homes[v], args, arena, outputs));
    for (ValueId v : step.outputs) out_ptrs.push_back(address(plan.homes[v], args, arena, outputs));
    if (step.packed_input >= 0) in_ptrs[step.packed_input] = const_cast<void*>(args.packed[step.packed_slot]);
    if (pass > 0) {
      for (size_t i = 0; i < in_ptrs.size(); ++i) in_ptrs[i] = advanced(in_ptrs[i], pass, step.input_strides[i]);
      for (size_t j = 0; j < out_ptrs.size(); ++j) out_ptrs[j] = advanced(out_ptrs[j], pass, step.output_strides[j]);
    }
    void* scratch = step.scratch_offset >= 0 ? arena + step.scratch_offset : nullptr;
    int32_t* error_word = error_words && !step.error.empty() ? error_words + k : nullptr;
    run_step(step, KernelArgs{const_cast<const void* const*>(in_ptrs.data()), out_ptrs.data(), scratch, stream, error_word},
             plan);
  };
  size_t k = 0;
  for (const StepLoop& loop : plan.loops) {
    for (; k < loop.first; ++k) run(k, 0);
    for (int64_t pass = 0; pass < loop.passes; ++pass)
      for (k = loop.first; k < loop.end; ++k) run(k, pass);
  }
  for (; k < plan.steps.size(); ++k) run(k, 0);
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    if (plan.direct_outputs[j]) continue;
    const void* src = address(plan.homes[p.outputs[j].value], args, arena, outputs);
    copy_bytes(*plan.device, outputs[j]->data(), src, outputs[j]->byte_size(), stream);
  }
}

// A step's error with the value its kernel wrote in place of "{}".
std::string step_error(const std::string& error, int32_t word) {
  const size_t at = error.find("{}");
  return at == std::string::npos ? error : error.substr(0, at) + std::to_string(word) + error.substr(at + 2);
}

void check_step_errors(const ExecPlan& plan, const Workspace& workspace) {
  if (!plan.reports_errors) return;
  std::vector<int32_t> words(plan.steps.size());
  plan.device->cuda()->copy_to_host(words.data(), workspace.error_words.get(), words.size() * sizeof(int32_t));
  for (size_t k = 0; k < words.size(); ++k)
    if (words[k] != 0)
      fail(Code::kInvalidArgument, "op '", plan.steps[k].op, "': ", step_error(plan.steps[k].error, words[k]));
}

namespace {

std::vector<Ref<Tensor>> run_in(const ExecPlan& plan, const Program& p, const ExecuteArgs& args,
                                Workspace& workspace) {
  std::vector<Ref<Tensor>> outputs = make_outputs(plan, p);
  enqueue_plan(plan, p, args, workspace, outputs);
  if (workspace.stream) workspace.stream->synchronize();
  check_step_errors(plan, workspace);
  return outputs;
}

}  // namespace

std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args) {
  WorkspaceLease workspace(*plan.workspaces);
  return run_in(plan, p, args, workspace.get());
}

std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, ExecuteArgs args,
                                  std::span<const Ref<Tensor>> inputs) {
  WorkspaceLease workspace(*plan.workspaces);
  std::vector<const void*>& addresses = workspace.get().input_addresses;
  addresses.clear();
  for (const Ref<Tensor>& t : inputs) addresses.push_back(t->data());
  args.inputs = addresses;
  return run_in(plan, p, args, workspace.get());
}

}  // namespace maxc
