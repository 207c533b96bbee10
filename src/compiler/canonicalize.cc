// Canonicalization of layout ops: a reshape of a reshape reads the original directly (only
// the element count matters), and a transpose undone by the same transpose disappears.
// DCE then drops whatever became unused.
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {

namespace {

bool same_transpose(const Node& a, const Node& b) {
  return a.op == "transpose" && b.op == "transpose" && a.attrs == b.attrs;
}

}  // namespace

void fold_reshapes(Program& p) {
  const std::vector<int64_t> producer = producers(p);
  std::vector<ValueId> replace = identity_map(p);
  for (Node& n : p.nodes) {
    if (n.inputs.empty()) continue;
    const int64_t k = producer[n.inputs[0]];
    if (k < 0) continue;
    const Node& source = p.nodes[static_cast<size_t>(k)];
    if (n.op == "reshape" && source.op == "reshape") {
      n.inputs[0] = source.inputs[0];
    } else if (same_transpose(n, source) && p.types[source.inputs[0]] == p.types[n.outputs[0]]) {
      replace[n.outputs[0]] = source.inputs[0];
    }
  }
  apply_replacements(p, replace);
}

}  // namespace maxc
