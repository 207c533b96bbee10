#include "engine/batch_loop.h"

#include <algorithm>
#include <set>

#include "compiler/rewrite.h"

namespace maxc {

namespace {

bool is_batch_operand(const Shape& s, size_t rank, int64_t batch) {
  return s.dims.size() == rank && rank > 0 && s.dims[0] == batch && s.byte_size() % static_cast<uint64_t>(batch) == 0;
}

// Read whole by every item: aligned to the trailing dims only, or of extent 1 in dim 0.
bool is_broadcast_operand(const Shape& s, size_t rank) {
  return s.dims.size() < rank || (s.dims.size() == rank && s.dims[0] == 1);
}

enum class Family { kNone, kConv, kPool, kElementwise, kPermute };

Family family_of(const Node& n) {
  if (n.op == "conv2d" || n.op == "fused_conv2d") return Family::kConv;
  if (n.op == "max_pool2d" || n.op == "avg_pool2d") return Family::kPool;
  if (n.op == "fused_elementwise" || is_elementwise_op(n.op, n.inputs.size())) return Family::kElementwise;
  if (n.op == "permute") {
    const AttrValue* dims = n.attrs.find("dims");
    const auto* perm = dims ? std::get_if<std::vector<int64_t>>(dims) : nullptr;
    if (perm && !perm->empty() && perm->front() == 0) return Family::kPermute;
  }
  return Family::kNone;
}

uint64_t largest_output_bytes(const Node& n, std::span<const Shape> shapes) {
  uint64_t bytes = 0;
  for (ValueId v : n.outputs) bytes = std::max(bytes, shapes[v].byte_size());
  return bytes;
}

// The most items per slice that keep the loop's largest value under kBatchLoopSliceBytes,
// dividing the batch (every pass runs the same kernels), and smaller than the batch. The
// search counts down from the largest slice that fits, so it takes at most
// kBatchLoopSliceBytes / item_bytes steps (and fewer than the batch), whatever the batch: a
// file's static batch of 2^40 once made compile count up to it.
int64_t slice_for(const Program& p, const BatchLoop& loop, std::span<const Shape> shapes) {
  uint64_t item_bytes = 1;
  for (size_t k = loop.first; k < loop.end; ++k)
    item_bytes = std::max(item_bytes, largest_output_bytes(p.nodes[k], shapes) / static_cast<uint64_t>(loop.batch));
  const uint64_t fits = kBatchLoopSliceBytes / item_bytes;
  const int64_t largest = static_cast<int64_t>(std::min<uint64_t>(fits, static_cast<uint64_t>(loop.batch - 1)));
  for (int64_t d = largest; d >= 2; --d)
    if (loop.batch % d == 0) return d;
  return 1;
}

// A stretch of nodes being gathered into a loop.
struct Run {
  BatchLoop loop;
  size_t large_end = 0;        // one past the last node with an output of kBatchLoopMinBytes
  std::set<ValueId> produced;  // by the run's nodes

  bool empty() const { return loop.end == loop.first; }

  // Whether node k may join: a batch node for this batch whose whole-read inputs (broadcast,
  // filters) are made outside the run, where they exist whole.
  bool accepts(const Node& n, std::span<const Shape> shapes) const {
    const std::vector<bool> cut = batch_cut_inputs(n, shapes, loop.batch);
    if (cut.empty()) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!cut[i] && produced.contains(n.inputs[i])) return false;
    return true;
  }

  void add(size_t k, const Node& n, std::span<const Shape> shapes) {
    loop.end = k + 1;
    produced.insert(n.outputs.begin(), n.outputs.end());
    if (largest_output_bytes(n, shapes) >= kBatchLoopMinBytes) large_end = k + 1;
  }

  void start(size_t k, int64_t batch) {
    loop = {k, k, batch, 1};
    large_end = k;
    produced.clear();
  }
};

int64_t leading_dim(const Node& n, std::span<const Shape> shapes) {
  if (n.outputs.empty() || shapes[n.outputs[0]].dims.empty()) return 0;
  return shapes[n.outputs[0]].dims[0];
}

}  // namespace

std::vector<bool> batch_cut_inputs(const Node& node, std::span<const Shape> shapes, int64_t batch) {
  const Family family = family_of(node);
  if (batch < 2 || node.outputs.empty() || family == Family::kNone) return {};
  const size_t rank = shapes[node.outputs[0]].dims.size();
  for (ValueId v : node.outputs)
    if (!is_batch_operand(shapes[v], rank, batch)) return {};
  std::vector<bool> cut(node.inputs.size(), false);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Shape& s = shapes[node.inputs[i]];
    if (family == Family::kConv && i == 1) continue;  // the filter, whatever its dim 0
    if (family == Family::kPool && i > 0) return {};
    if (is_batch_operand(s, rank, batch)) {
      cut[i] = true;
    } else if (!is_broadcast_operand(s, rank)) {
      return {};
    }
  }
  if (family != Family::kElementwise && (cut.empty() || !cut[0])) return {};
  return cut;
}

std::vector<BatchLoop> find_batch_loops(const Program& p, std::span<const Shape> shapes) {
  std::vector<BatchLoop> loops;
  Run run;
  auto close = [&] {
    if (run.large_end >= run.loop.first + 2) {
      BatchLoop loop = run.loop;
      loop.end = run.large_end;
      loop.slice = slice_for(p, loop, shapes);
      loops.push_back(loop);
    }
    run = Run{};
  };
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node& n = p.nodes[k];
    if (run.empty() || !run.accepts(n, shapes)) {
      close();
      const int64_t batch = leading_dim(n, shapes);
      if (batch_cut_inputs(n, shapes, batch).empty()) continue;
      run.start(k, batch);
    }
    run.add(k, n, shapes);
  }
  close();
  return loops;
}

Shape batch_slice_of(const Shape& s, size_t rank, int64_t batch, int64_t slice) {
  if (s.dims.size() != rank || rank == 0 || s.dims[0] != batch) return s;
  Shape sliced = s;
  sliced.dims[0] = slice;
  return sliced;
}

}  // namespace maxc
