// cond and while_loop, on the host and on a GPU alike. Each region gets a plan of its own,
// built while the node is lowered: a region's inputs have its operands' types, so the node's
// concrete shapes fix the region's symbols too. The node's kernel runs those plans through
// the executor, each in a workspace of its own, and copies the results into its outputs.
//
// On a GPU the predicate has to reach the host before the next region can be chosen, so the
// kernel waits for the call's stream there (as ONNX Runtime's If and Loop do): the region's
// plan runs on a stream of its own, after everything the node's inputs depend on.
#include <cstring>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_stream.h"
#include "engine/executor.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"
#include "engine/program_constants.h"
#include "engine/run_limits.h"

namespace maxc {

namespace {

struct RegionPlan {
  std::shared_ptr<const Program> program;
  std::vector<uint32_t> feeds;
  std::shared_ptr<const ExecPlan> plan;
  ProgramConstants constants;
};

// What every call of the node shares: the device, the region plans, the output shapes.
struct ControlFlow {
  Ref<Device> device;
  std::vector<RegionPlan> regions;
  std::vector<Shape> outputs;
  int32_t num_threads = 1;

  // A region run on the node's inputs, with `values` in place of the node's first inputs
  // (a while_loop's current loop values). Its outputs are final when it returns.
  std::vector<Ref<Tensor>> run(size_t region, const KernelArgs& args, std::span<const void* const> values) const {
    const RegionPlan& r = regions[region];
    std::vector<const void*> inputs;
    inputs.reserve(r.feeds.size());
    for (uint32_t feed : r.feeds) inputs.push_back(feed < values.size() ? values[feed] : args.inputs[feed]);
    return run_plan(*r.plan, *r.program, ExecuteArgs{inputs, {}, r.constants.addresses, {}, num_threads});
  }

  // A bool element is one byte, nonzero for true. Read once the work queued before it is done.
  bool holds(const void* pred) const {
    uint8_t b = 0;
    if (device->cuda()) {
      device->cuda()->copy_to_host(&b, pred, 1);
    } else {
      b = *static_cast<const uint8_t*>(pred);
    }
    return b != 0;
  }

  // The results into the node's outputs; on a GPU on the call's stream, waited for, since the
  // results go when the caller drops them.
  void copy_out(const KernelArgs& args, std::span<const void* const> results) const {
    for (size_t j = 0; j < outputs.size(); ++j) {
      const uint64_t bytes = outputs[j].byte_size();
      if (bytes == 0) continue;  // an empty tensor may have no address at all
      if (device->cuda()) {
        device->cuda()->copy_within(args.outputs[j], results[j], bytes, args.stream);
      } else {
        std::memcpy(args.outputs[j], results[j], bytes);
      }
    }
    if (args.stream) args.stream->synchronize();
  }
};

// The values of every symbol the region's input types mention, as the enclosing plan has them.
SymbolValues region_symbols(const LowerContext& ctx, const Program& r) {
  SymbolValues symbols;
  for (const auto& in : r.inputs)
    for (const Dim& d : r.types[in.value].dims)
      for (const std::string& s : d.symbols()) symbols.emplace(s, ctx.eval_dim(Dim(std::string_view(s))));
  return symbols;
}

ControlFlow plan_control_flow(const LowerContext& ctx) {
  // Devices are reference counted through const methods; the plan keeps this one alive.
  ControlFlow cf{ctx.on_host() ? Device::cpu() : Ref<Device>::share(const_cast<Device*>(ctx.device)), {},
                 {ctx.outputs.begin(), ctx.outputs.end()}, ctx.num_threads};
  for (const Region& region : ctx.node.regions) {
    RegionPlan r{region.program, region.feeds, nullptr, {}};
    r.plan = ctx.labeled([&] { return build_plan(*r.program, region_symbols(ctx, *r.program), ctx.num_threads, cf.device); });
    r.constants = place_constants(*r.program, cf.device);
    cf.regions.push_back(std::move(r));
  }
  return cf;
}

std::vector<const void*> addresses(const std::vector<Ref<Tensor>>& tensors) {
  std::vector<const void*> out;
  for (const auto& t : tensors) out.push_back(t->data());
  return out;
}

void wait_for_inputs(const KernelArgs& args) {
  if (args.stream) args.stream->synchronize();
}

Lowered lower_cond(const LowerContext& ctx) {
  return {[cf = plan_control_flow(ctx)](const KernelArgs& args) {
    wait_for_inputs(args);
    const size_t branch = cf.holds(args.inputs[0]) ? 0 : 1;
    cf.copy_out(args, addresses(cf.run(branch, args, {})));
  }};
}

// A region's run in iteration `i`: a deadline or a cancellation inside it names the loop and
// the iteration, not only the body's op.
std::vector<Ref<Tensor>> run_iteration(const ControlFlow& cf, size_t region, const KernelArgs& args,
                                       std::span<const void* const> values, int64_t i) {
  try {
    return cf.run(region, args, values);
  } catch (const Error& e) {
    if (e.code() != Code::kDeadlineExceeded && e.code() != Code::kCancelled) throw;
    fail(e.code(), "op 'while_loop' (iteration ", i, "): ", e.what());
  }
}

// The run limits are checked before every iteration: nothing else bounds a loop whose trip
// count a file gives (an ONNX Loop of 2^52 iterations).
Lowered lower_while_loop(const LowerContext& ctx) {
  return {[cf = plan_control_flow(ctx)](const KernelArgs& args) {
    wait_for_inputs(args);
    std::vector<const void*> current(args.inputs, args.inputs + cf.outputs.size());
    std::vector<Ref<Tensor>> held;  // what `current` points into, past the first iteration
    for (int64_t i = 0;; ++i) {
      check_run_limits("while_loop", "iteration", i);
      if (!cf.holds(run_iteration(cf, 0, args, current, i)[0]->data())) break;
      held = run_iteration(cf, 1, args, current, i);
      current = addresses(held);
    }
    cf.copy_out(args, current);
  }};
}

}  // namespace

void register_control_flow_kernels(KernelTable& t) {
  t.add("cond", lower_cond);
  t.add("while_loop", lower_while_loop);
}

}  // namespace maxc
