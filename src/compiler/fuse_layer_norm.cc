// Pattern fusion of a residual add into the layer_norm that reads it (DESIGN §4): the
// transformer's `layer_norm(x + residual)` becomes one pass over each row.
//
// The fused node:
//   op      "add_layer_norm"
//   inputs  (x, residual, gamma, beta). x has the layer_norm input's type; residual has the
//           same type, or the same dtype with every dim 1 but the last, which equals x's
//           last dim (one row broadcast over all rows).
//   attrs   the layer_norm's (epsilon).
//   outputs (normalized) — the layer_norm's output value; or (normalized, sum) when the sum
//           x + residual is also read elsewhere, the add's output value, which the kernel
//           writes too. Value ids are kept, so no use needs rewriting.
// It sits where the layer_norm was, or where the add was when the sum has other readers
// (they may come before the layer_norm); then gamma and beta must already exist there, or
// the pattern is left alone.
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

// `t` is one row of `full` broadcast over the rest: same dtype, dims 1 except a last dim
// equal to full's.
bool is_row_of(const TensorType& t, const TensorType& full) {
  if (t.dtype != full.dtype || t.rank() < 1 || t.rank() > full.rank()) return false;
  if (!(t.dims.back() == full.dims.back())) return false;
  for (size_t i = 0; i + 1 < t.dims.size(); ++i)
    if (!(t.dims[i] == Dim(1))) return false;
  return true;
}

bool same_type(const TensorType& a, const TensorType& b) { return a.dtype == b.dtype && a.dims == b.dims; }

// The add's operands as (x, residual) in the fused node's order, or false when the add
// broadcasts in a way the kernel does not take.
bool order_operands(const Program& p, const Node& add, const TensorType& sum, ValueId& x, ValueId& residual) {
  const TensorType& a = p.types[add.inputs[0]];
  const TensorType& b = p.types[add.inputs[1]];
  if (same_type(a, sum) && (same_type(b, sum) || is_row_of(b, sum))) {
    x = add.inputs[0], residual = add.inputs[1];
    return true;
  }
  if (same_type(b, sum) && is_row_of(a, sum)) {
    x = add.inputs[1], residual = add.inputs[0];
    return true;
  }
  return false;
}

bool defined_before(const std::vector<int64_t>& producer, ValueId v, int64_t position) {
  return producer[v] < position;  // leaves are -1
}

}  // namespace

void fuse_add_layer_norm(Program& p) {
  const std::vector<int64_t> producer = producers(p);
  const std::vector<int32_t> uses = use_counts(p);
  std::vector<bool> removed(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& ln = p.nodes[i];
    if (ln.op != "layer_norm" || ln.inputs.size() != 3 || ln.outputs.size() != 1) continue;
    const ValueId sum = ln.inputs[0];
    const int64_t j = producer[sum];
    if (j < 0 || removed[static_cast<size_t>(j)]) continue;
    const Node& add = p.nodes[static_cast<size_t>(j)];
    if (add.op != "add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    ValueId x = 0, residual = 0;
    if (!order_operands(p, add, p.types[sum], x, residual)) continue;
    const bool keep_sum = uses[sum] > 1;
    // With other readers of the sum, the fused node takes the add's place, before them.
    const size_t at = keep_sum ? static_cast<size_t>(j) : i;
    if (keep_sum && !(defined_before(producer, ln.inputs[1], j) && defined_before(producer, ln.inputs[2], j))) continue;
    Node fused;
    fused.op = "add_layer_norm";
    fused.inputs = {x, residual, ln.inputs[1], ln.inputs[2]};
    fused.attrs = ln.attrs;
    fused.outputs = {ln.outputs[0]};
    if (keep_sum) fused.outputs.push_back(sum);
    const size_t other = at == i ? static_cast<size_t>(j) : i;
    p.nodes[at] = std::move(fused);
    removed[other] = true;
  }
  erase_nodes(p, removed);
}

}  // namespace maxc
