// cond and while_loop on the host. Each region gets a plan of its own, built while the node is
// lowered: a region's inputs have its operands' types, so the node's concrete shapes fix the
// region's symbols too. The node's kernel then runs those plans through the executor, each in
// a workspace of its own, and copies the results into the node's outputs.
#include <cstring>

#include "engine/executor.h"
#include "engine/lower/lower.h"
#include "engine/lowering.h"

namespace maxc {

namespace {

struct RegionPlan {
  std::shared_ptr<const Program> program;
  std::vector<uint32_t> feeds;
  std::shared_ptr<const ExecPlan> plan;
  std::vector<const void*> constants;
};

// The values of every symbol the region's input types mention, as the enclosing plan has them.
SymbolValues region_symbols(const LowerContext& ctx, const Program& r) {
  SymbolValues symbols;
  for (const auto& in : r.inputs)
    for (const Dim& d : r.types[in.value].dims)
      for (const std::string& s : d.symbols()) symbols.emplace(s, ctx.eval_dim(Dim(std::string_view(s))));
  return symbols;
}

RegionPlan plan_region(const LowerContext& ctx, const Region& region) {
  RegionPlan r{region.program, region.feeds, nullptr, {}};
  r.plan = ctx.labeled([&] { return build_plan(*r.program, region_symbols(ctx, *r.program), ctx.num_threads, Device::cpu()); });
  for (const auto& c : r.program->constants) r.constants.push_back(c.data.data.get());
  return r;
}

std::vector<RegionPlan> plan_regions(const LowerContext& ctx) {
  std::vector<RegionPlan> plans;
  for (const Region& region : ctx.node.regions) plans.push_back(plan_region(ctx, region));
  return plans;
}

// Runs a region on the node's inputs, with `values` in place of the node's first inputs
// (a while_loop's current loop values).
std::vector<Ref<Tensor>> run_region(const RegionPlan& r, const KernelArgs& args, std::span<const void* const> values,
                                    int32_t num_threads) {
  std::vector<const void*> inputs;
  inputs.reserve(r.feeds.size());
  for (uint32_t feed : r.feeds) inputs.push_back(feed < values.size() ? values[feed] : args.inputs[feed]);
  return run_plan(*r.plan, *r.program, ExecuteArgs{inputs, {}, r.constants, {}, num_threads});
}

// Region results into the node's outputs (an empty tensor may have no address at all).
void copy_results(const KernelArgs& args, std::span<const void* const> results, const std::vector<Shape>& shapes) {
  for (size_t j = 0; j < shapes.size(); ++j)
    if (const uint64_t bytes = shapes[j].byte_size()) std::memcpy(args.outputs[j], results[j], bytes);
}

// A bool element is one byte, nonzero for true.
bool holds(const void* pred) { return *static_cast<const uint8_t*>(pred) != 0; }

std::vector<const void*> addresses(const std::vector<Ref<Tensor>>& tensors) {
  std::vector<const void*> out;
  for (const auto& t : tensors) out.push_back(t->data());
  return out;
}

Lowered lower_cond(const LowerContext& ctx) {
  std::vector<RegionPlan> branches = plan_regions(ctx);
  std::vector<Shape> outputs(ctx.outputs.begin(), ctx.outputs.end());
  const int32_t threads = ctx.num_threads;
  return {[branches = std::move(branches), outputs = std::move(outputs), threads](const KernelArgs& args) {
    const bool pred = holds(args.inputs[0]);
    copy_results(args, addresses(run_region(branches[pred ? 0 : 1], args, {}, threads)), outputs);
  }};
}

Lowered lower_while_loop(const LowerContext& ctx) {
  std::vector<RegionPlan> regions = plan_regions(ctx);
  std::vector<Shape> values(ctx.outputs.begin(), ctx.outputs.end());
  const int32_t threads = ctx.num_threads;
  return {[regions = std::move(regions), values = std::move(values), threads](const KernelArgs& args) {
    const RegionPlan& predicate = regions[0];
    const RegionPlan& body = regions[1];
    std::vector<const void*> current(args.inputs, args.inputs + values.size());
    std::vector<Ref<Tensor>> held;  // the tensors `current` points into, past the first iteration
    while (holds(run_region(predicate, args, current, threads)[0]->data())) {
      held = run_region(body, args, current, threads);
      current = addresses(held);
    }
    copy_results(args, current, values);
  }};
}

}  // namespace

void register_control_flow_kernels(KernelTable& t) {
  t.add("cond", lower_cond);
  t.add("while_loop", lower_while_loop);
}

}  // namespace maxc
