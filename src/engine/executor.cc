#include "engine/executor.h"

#include <chrono>
#include <cstring>

#include "base/log.h"
#include "driver/device.h"
#include "kernels/cpu/parallel.h"

namespace maxc {

namespace {

// Returns an arena to its pool however the call ends.
class ArenaLease {
 public:
  explicit ArenaLease(ArenaPool& pool) : pool_(pool), arena_(pool.acquire()) {}
  ~ArenaLease() { pool_.release(std::move(arena_)); }
  uint8_t* data() const { return arena_.get(); }

 private:
  ArenaPool& pool_;
  std::shared_ptr<uint8_t> arena_;
};

std::vector<Ref<Tensor>> make_outputs(const ExecPlan& plan, const Program& p) {
  std::vector<Ref<Tensor>> outputs;
  outputs.reserve(p.outputs.size());
  for (const auto& out : p.outputs) {
    const Shape& s = plan.shapes[out.value];
    outputs.push_back(Tensor::create(Device::cpu(), s.dtype, s.dims, /*zero=*/false));
  }
  return outputs;
}

void* address(const Home& home, const ExecuteArgs& args, const Program& p, uint8_t* arena,
              const std::vector<Ref<Tensor>>& outputs) {
  switch (home.kind) {
    case Home::Kind::kInput: return const_cast<void*>(args.inputs[home.index]);
    case Home::Kind::kWeight: return const_cast<void*>(args.weights[home.index]);
    case Home::Kind::kConstant: return const_cast<uint8_t*>(p.constants[home.index].data.data.get());
    case Home::Kind::kOutput: return outputs[home.index]->data();
    case Home::Kind::kArena: return arena + home.offset;
  }
  return nullptr;
}

// A profile without a rebuild: at trace level (MAX_C_LOG_LEVEL=trace) every step logs its
// time and its output's shape.
void run_traced(const Step& step, const KernelArgs& args, const ExecPlan& plan) {
  const auto t0 = std::chrono::steady_clock::now();
  step.run(args);
  const auto t1 = std::chrono::steady_clock::now();
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  const std::string shape = step.outputs.empty() ? "" : plan.shapes[step.outputs[0]].to_string();
  MAXC_LOG(kTrace, "step ", step.op, " ", shape, " ", us, " us");
}

}  // namespace

std::vector<Ref<Tensor>> run_plan(const ExecPlan& plan, const Program& p, const ExecuteArgs& args) {
  std::vector<Ref<Tensor>> outputs = make_outputs(plan, p);
  ArenaLease arena(*plan.arenas);
  cpu::size_team(args.num_threads);
  std::vector<void*> in_ptrs, out_ptrs;
  for (const Step& step : plan.steps) {
    in_ptrs.clear();
    out_ptrs.clear();
    for (ValueId v : step.inputs) in_ptrs.push_back(address(plan.homes[v], args, p, arena.data(), outputs));
    for (ValueId v : step.outputs) out_ptrs.push_back(address(plan.homes[v], args, p, arena.data(), outputs));
    if (step.packed_input >= 0) in_ptrs[step.packed_input] = const_cast<void*>(args.packed[step.packed_slot]);
    void* scratch = step.scratch_offset >= 0 ? arena.data() + step.scratch_offset : nullptr;
    const KernelArgs kernel_args{const_cast<const void* const*>(in_ptrs.data()), out_ptrs.data(), scratch};
    if (log_enabled(LogLevel::kTrace)) {
      run_traced(step, kernel_args, plan);
    } else {
      step.run(kernel_args);
    }
  }
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    if (plan.direct_outputs[j]) continue;
    const ValueId v = p.outputs[j].value;
    const void* src = address(plan.homes[v], args, p, arena.data(), outputs);
    if (outputs[j]->byte_size() > 0) std::memcpy(outputs[j]->data(), src, outputs[j]->byte_size());
  }
  return outputs;
}

}  // namespace maxc
