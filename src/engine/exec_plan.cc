#include "engine/exec_plan.h"

#include <algorithm>

#include "base/checked_math.h"
#include "driver/device.h"
#include "engine/batch_loop.h"
#include "engine/memory_plan.h"

namespace maxc {

// ---- arenas ----------------------------------------------------------------------------------

std::unique_ptr<Workspace> WorkspacePool::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      auto w = std::move(free_.back());
      free_.pop_back();
      return w;
    }
  }
  auto w = std::make_unique<Workspace>();
  const uint64_t bytes = std::max<uint64_t>(bytes_, kArenaAlignment);
  void* p = device_->allocate(bytes, /*zero=*/false);
  Ref<Device> device = device_;
  w->arena = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [device](uint8_t* q) { device->deallocate(q); });
  if (device_->cuda()) w->stream = std::make_unique<cuda::CudaStream>(*device_->cuda());
  if (error_words_ > 0) {
    void* words = device_->allocate(error_words_ * sizeof(int32_t), /*zero=*/false);
    w->error_words = std::shared_ptr<int32_t>(static_cast<int32_t*>(words), [device](int32_t* q) { device->deallocate(q); });
  }
  return w;
}

void WorkspacePool::release(std::unique_ptr<Workspace> workspace) {
  std::lock_guard lock(mu_);
  free_.push_back(std::move(workspace));
}

// ---- building a plan -------------------------------------------------------------------------

namespace {

Shape concrete(const TensorType& t, const SymbolValues& symbols, ValueId v) {
  Shape s{t.dtype, {}};
  s.dims.reserve(t.dims.size());
  for (const Dim& d : t.dims) {
    const int64_t n = d.is_static() ? d.static_value() : d.evaluate(symbols);
    if (n < 0)
      fail(Code::kInvalidArgument, "value %", v, " of type ", t, " gets dim ", d, " = ", n,
           " for these inputs; a dim cannot be negative");
    s.dims.push_back(n);
  }
  // The symbols' values may make a shape no tensor can have: refused before anything sizes
  // a buffer or a loop from it.
  if (!checked_product(s.dims))
    fail(Code::kInvalidArgument, "value %", v, " of type ", t, " gets shape ", s.to_string(),
         " for these inputs, more than ", kMaxElements, " elements");
  return s;
}

class PlanBuilder {
 public:
  PlanBuilder(const Program& p, const SymbolValues& symbols, int32_t num_threads, const Ref<Device>& device)
      : p_(p),
        symbols_(symbols),
        num_threads_(num_threads),
        table_(KernelTable::for_device(*device)),
        plan_(std::make_unique<ExecPlan>()) {
    plan_->device = device;
  }

  std::unique_ptr<ExecPlan> build() {
    const size_t n = p_.types.size();
    plan_->shapes.resize(n);
    plan_->homes.resize(n);
    root_.resize(n);
    for (ValueId v = 0; v < n; ++v) root_[v] = v;
    place_leaves();
    for (const Node& node : p_.nodes) shape_outputs(node);
    if (plan_->device->is_host()) batch_loops_ = find_batch_loops(p_, plan_->shapes);
    for (size_t k = 0; k < p_.nodes.size(); ++k) lower(k);
    place_outputs();
    place_in_arena();
    mark_weight_reads();
    return std::move(plan_);
  }

 private:
  void shape(ValueId v) { plan_->shapes[v] = concrete(p_.types[v], symbols_, v); }

  void place_leaves() {
    using K = Home::Kind;
    for (size_t i = 0; i < p_.inputs.size(); ++i) leaf(p_.inputs[i].value, K::kInput, i);
    for (size_t i = 0; i < p_.weights.size(); ++i) leaf(p_.weights[i].value, K::kWeight, i);
    for (size_t i = 0; i < p_.constants.size(); ++i) {
      leaf(p_.constants[i].value, K::kConstant, i);
      constant_of_[p_.constants[i].value] = &p_.constants[i].data;
    }
  }

  void leaf(ValueId v, Home::Kind kind, size_t index) {
    shape(v);
    plan_->homes[v] = {kind, static_cast<uint32_t>(index), 0};
  }

  // The node's outputs and its fused steps' values.
  void shape_outputs(const Node& n) {
    for (ValueId v : n.outputs) shape(v);
    for (const Node& s : n.steps) shape_outputs(s);
  }

  // The batch loop node k is in, or null.
  const BatchLoop* batch_loop_of(size_t k) const {
    for (const BatchLoop& l : batch_loops_)
      if (k >= l.first && k < l.end) return &l;
    return nullptr;
  }

  void lower(size_t k) {
    const Node& node = p_.nodes[k];
    // In a batch loop the kernel is made for one slice of the batch (engine/batch_loop.h).
    const BatchLoop* loop = batch_loop_of(k);
    const std::vector<bool> cut = loop ? batch_cut_inputs(node, plan_->shapes, loop->batch) : std::vector<bool>{};
    const size_t rank = node.outputs.empty() ? 0 : plan_->shapes[node.outputs[0]].dims.size();
    auto shape_in_loop = [this, loop, rank](ValueId v) {
      return loop ? batch_slice_of(plan_->shapes.at(v), rank, loop->batch, loop->slice) : plan_->shapes.at(v);
    };
    std::vector<Shape> ins, outs;
    std::vector<const Constant*> consts;
    std::vector<int32_t> weights;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      ins.push_back(loop && cut[i] ? shape_in_loop(v) : plan_->shapes[v]);
      auto it = constant_of_.find(v);
      consts.push_back(it == constant_of_.end() ? nullptr : it->second);
      const Home& home = plan_->homes[root_[v]];
      weights.push_back(home.kind == Home::Kind::kWeight ? static_cast<int32_t>(home.index) : -1);
    }
    for (ValueId v : node.outputs) outs.push_back(shape_in_loop(v));
    const LowerFn* fn = table_.find(node.op);
    if (!fn)
      fail(Code::kUnimplemented, "op '", node.op, "': the ", plan_->device->is_host() ? "CPU" : "GPU",
           " engine has no kernel for it");
    LowerContext ctx{node, ins, outs, consts, shape_in_loop, num_threads_,
                     [this](const Dim& d) { return d.is_static() ? d.static_value() : d.evaluate(symbols_); },
                     weights, plan_->device.get()};
    Lowered lowered = (*fn)(ctx);
    if (lowered.alias) {
      root_[node.outputs.at(0)] = root_[node.inputs.at(0)];
      return;
    }
    inplace_.push_back(lowered.inplace_input);
    scratch_.push_back(lowered.scratch_bytes);
    join_step_loop(loop);
    step_cut_.push_back(cut);
    plan_->steps.push_back(
        Step{std::move(lowered.run), node.inputs, node.outputs, -1, node.op, -1, 0, std::move(lowered.error), {}, {}});
    if (!plan_->steps.back().error.empty()) {
      if (plan_->device->is_host())
        fail(Code::kInternal, "op '", node.op, "': a CPU kernel asked for an error word; CPU kernels throw");
      plan_->reports_errors = true;
    }
    if (lowered.prepack.input >= 0) use_packed(plan_->steps.back(), weights, std::move(lowered.prepack));
  }

  // Points the step's input at a packed copy of its weight, one slot per weight and layout.
  void use_packed(Step& step, const std::vector<int32_t>& weights, Prepack prepack) {
    const auto i = static_cast<size_t>(prepack.input);
    if (i >= weights.size() || weights[i] < 0)
      fail(Code::kInternal, "op '", step.op, "' asked to prepack input ", i, ", which is not a weight");
    const auto weight = static_cast<uint32_t>(weights[i]);
    auto& slots = plan_->prepacks;
    size_t slot = 0;
    while (slot < slots.size() && !(slots[slot].weight == weight && slots[slot].layout == prepack.layout)) ++slot;
    if (slot == slots.size())
      slots.push_back({weight, std::move(prepack.layout), prepack.bytes, std::move(prepack.pack)});
    step.packed_input = prepack.input;
    step.packed_slot = static_cast<uint32_t>(slot);
  }

  // Puts the step about to be added into the StepLoop of its node's batch loop, opening it
  // with the loop's first step (an alias makes no step, so that need not be the loop's first
  // node). A loop's nodes are contiguous, so the open StepLoop is the last one.
  void join_step_loop(const BatchLoop* loop) {
    if (!loop) {
      step_loop_.push_back(-1);
      return;
    }
    const size_t k = plan_->steps.size();
    if (loop != open_loop_) {
      plan_->loops.push_back({k, k, loop->passes()});
      open_loop_ = loop;
    }
    plan_->loops.back().end = k + 1;
    step_loop_.push_back(static_cast<int32_t>(plan_->loops.size() - 1));
  }

  const StepLoop* loop_of_step(int64_t k) const {
    const int32_t l = step_loop_[static_cast<size_t>(k)];
    return l < 0 ? nullptr : &plan_->loops[static_cast<size_t>(l)];
  }

  void place_outputs() {
    plan_->direct_outputs.assign(p_.outputs.size(), false);
    std::vector<bool> produced(p_.types.size(), false);
    for (const Step& s : plan_->steps)
      for (ValueId v : s.outputs) produced[v] = true;
    for (size_t j = 0; j < p_.outputs.size(); ++j) {
      const ValueId v = p_.outputs[j].value;
      if (!produced[v] || root_[v] != v || plan_->homes[v].kind == Home::Kind::kOutput) continue;
      plan_->homes[v] = {Home::Kind::kOutput, static_cast<uint32_t>(j), 0};
      plan_->direct_outputs[j] = true;
    }
  }

  void mark_weight_reads() {
    plan_->reads_weight.assign(p_.weights.size(), false);
    auto mark = [this](ValueId v) {
      const Home& home = plan_->homes[v];
      if (home.kind == Home::Kind::kWeight) plan_->reads_weight[home.index] = true;
    };
    for (const Step& step : plan_->steps)
      for (size_t i = 0; i < step.inputs.size(); ++i)
        if (static_cast<int64_t>(i) != step.packed_input) mark(step.inputs[i]);
    for (size_t j = 0; j < p_.outputs.size(); ++j)
      if (!plan_->direct_outputs[j]) mark(p_.outputs[j].value);
  }

  // Buffers for every step output that is not an output tensor, merged in place where the
  // kernel allows it and the input dies at that step; one scratch buffer per step that asks.
  void place_in_arena() {
    const int64_t num_steps = static_cast<int64_t>(plan_->steps.size());
    std::vector<int64_t> last_use(p_.types.size(), -1), producer(p_.types.size(), -1);
    for (int64_t k = 0; k < num_steps; ++k) {
      for (ValueId v : plan_->steps[k].inputs) last_use[root_[v]] = k;
      for (ValueId v : plan_->steps[k].outputs) producer[v] = k;
    }
    for (size_t j = 0; j < p_.outputs.size(); ++j)
      if (!plan_->direct_outputs[j]) last_use[root_[p_.outputs[j].value]] = num_steps;
    place_loop_values(last_use, producer);

    std::vector<BufferLife> buffers;
    std::vector<int64_t> buffer_of(p_.types.size(), -1);
    for (int64_t k = 0; k < num_steps; ++k) {
      const Step& step = plan_->steps[k];
      for (size_t o = 0; o < step.outputs.size(); ++o) {
        const ValueId v = step.outputs[o];
        if (plan_->homes[v].kind == Home::Kind::kOutput) continue;
        const int64_t life_end = std::max(last_use[v], k);
        const int64_t reuse = o == 0 ? inplace_buffer(k, v, last_use, buffer_of, buffers) : -1;
        if (reuse >= 0) {
          buffer_of[v] = reuse;
          buffers[reuse].last = std::max(buffers[reuse].last, life_end);
          continue;
        }
        buffer_of[v] = static_cast<int64_t>(buffers.size());
        const StepLoop* loop = loop_of_step(k);
        if (loop && in_slice_[v]) {
          buffers.push_back({plan_->shapes[v].byte_size() / static_cast<uint64_t>(loop->passes), k, life_end});
        } else {
          // Written a slice per pass, from the loop's first step on.
          buffers.push_back({plan_->shapes[v].byte_size(), loop ? static_cast<int64_t>(loop->first) : k, life_end});
        }
      }
    }
    std::vector<int64_t> scratch_buffer(num_steps, -1);
    for (int64_t k = 0; k < num_steps; ++k) {
      if (scratch_[k] == 0) continue;
      scratch_buffer[k] = static_cast<int64_t>(buffers.size());
      buffers.push_back({scratch_[k], k, k});
    }

    const ArenaLayout layout = plan_arena(buffers);
    plan_->arena_bytes = layout.arena_bytes;
    plan_->intermediate_bytes = layout.total_bytes;
    plan_->workspaces = std::make_unique<WorkspacePool>(layout.arena_bytes, plan_->device,
                                                        plan_->reports_errors ? plan_->steps.size() : 0);
    for (ValueId v = 0; v < p_.types.size(); ++v)
      if (buffer_of[v] >= 0) plan_->homes[v] = {Home::Kind::kArena, 0, layout.offsets[buffer_of[v]]};
    for (ValueId v = 0; v < p_.types.size(); ++v)
      if (root_[v] != v) plan_->homes[v] = plan_->homes[root_[v]];
    for (int64_t k = 0; k < num_steps; ++k)
      if (scratch_buffer[k] >= 0) plan_->steps[k].scratch_offset = static_cast<int64_t>(layout.offsets[scratch_buffer[k]]);
  }

  // The buffer step k's output `v` may share with the input its kernel may overwrite, or -1.
  int64_t inplace_buffer(int64_t k, ValueId v, const std::vector<int64_t>& last_use,
                         const std::vector<int64_t>& buffer_of, const std::vector<BufferLife>& buffers) const {
    const int32_t i = inplace_[k];
    const Step& step = plan_->steps[k];
    if (i < 0 || static_cast<size_t>(i) >= step.inputs.size()) return -1;
    const ValueId in = step.inputs[i];
    const ValueId r = root_[in];
    if (buffer_of[r] < 0 || last_use[r] != k || buffers[buffer_of[r]].last > k) return -1;
    // Another input of this step reading the same buffer would see it overwritten.
    for (size_t j = 0; j < step.inputs.size(); ++j)
      if (static_cast<int32_t>(j) != i && root_[step.inputs[j]] == r) return -1;
    if (plan_->shapes[in].byte_size() != plan_->shapes[v].byte_size()) return -1;
    if (in_slice_[r] != in_slice_[v]) return -1;
    return buffer_of[r];
  }

  // Batch loops (engine/batch_loop.h): a value a loop reads but made before it is read on
  // every pass, so it lives to the loop's end; a value a loop makes and only it reads lives in
  // one slice's buffer (in_slice_), the others whole. Sets every loop step's strides.
  void place_loop_values(std::vector<int64_t>& last_use, const std::vector<int64_t>& producer) {
    in_slice_.assign(p_.types.size(), false);
    for (size_t k = 0; k < plan_->steps.size(); ++k) {
      const StepLoop* loop = loop_of_step(static_cast<int64_t>(k));
      if (!loop) continue;
      for (ValueId v : plan_->steps[k].inputs) {
        const ValueId r = root_[v];
        if (producer[r] < static_cast<int64_t>(loop->first))
          last_use[r] = std::max(last_use[r], static_cast<int64_t>(loop->end) - 1);
      }
      for (ValueId v : plan_->steps[k].outputs)
        in_slice_[v] = plan_->homes[v].kind != Home::Kind::kOutput && last_use[v] < static_cast<int64_t>(loop->end);
    }
    for (size_t k = 0; k < plan_->steps.size(); ++k) {
      const StepLoop* loop = loop_of_step(static_cast<int64_t>(k));
      if (!loop) continue;
      Step& step = plan_->steps[k];
      auto stride = [&](ValueId v) {
        return in_slice_[root_[v]] ? 0 : plan_->shapes[v].byte_size() / static_cast<uint64_t>(loop->passes);
      };
      for (size_t i = 0; i < step.inputs.size(); ++i)
        step.input_strides.push_back(step_cut_[k][i] ? stride(step.inputs[i]) : 0);
      for (ValueId v : step.outputs) step.output_strides.push_back(stride(v));
    }
  }

  const Program& p_;
  const SymbolValues& symbols_;
  int32_t num_threads_;
  const KernelTable& table_;
  std::unique_ptr<ExecPlan> plan_;
  std::vector<ValueId> root_;  // an alias's value is its root's bytes
  std::map<ValueId, const Constant*> constant_of_;
  std::vector<int32_t> inplace_;
  std::vector<uint64_t> scratch_;
  std::vector<BatchLoop> batch_loops_;       // by node
  const BatchLoop* open_loop_ = nullptr;     // the batch loop of plan_->loops.back()
  std::vector<std::vector<bool>> step_cut_;  // per step: batch_cut_inputs of its node in a loop
  std::vector<int32_t> step_loop_;           // per step: its ExecPlan::loops entry, or -1
  std::vector<bool> in_slice_;               // by ValueId: lives in one slice's buffer
};

}  // namespace

std::unique_ptr<ExecPlan> build_plan(const Program& p, const SymbolValues& symbols, int32_t num_threads,
                                     const Ref<Device>& device) {
  // oneDNN primitives are created for one thread (dnnl_engine.h): kernels that use them
  // split the work over the pool themselves, sized by num_threads.
  return PlanBuilder(p, symbols, num_threads, device).build();
}

}  // namespace maxc
