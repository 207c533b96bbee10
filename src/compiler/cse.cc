// Common-subexpression elimination: two nodes with the same op, inputs and attributes
// compute the same values, so the later one's uses move to the earlier one. Every op we run
// is a pure function of its inputs (there are no side-effecting ops in the engine yet).
#include <map>
#include <string>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {

namespace {

using Key = std::pair<std::string, std::vector<ValueId>>;

}  // namespace

void eliminate_common_subexpressions(Program& p) {
  std::vector<ValueId> replace = identity_map(p);
  std::map<Key, std::vector<size_t>> seen;  // -> indices of kept nodes with that key
  std::vector<Node> kept;
  kept.reserve(p.nodes.size());
  for (Node& n : p.nodes) {
    for (ValueId& v : n.inputs) v = replace[v];
    auto& candidates = seen[{n.op, n.inputs}];
    const Node* twin = nullptr;
    for (size_t k : candidates)
      if (kept[k].steps.empty() && n.steps.empty() && n.regions.empty() && kept[k].attrs == n.attrs) twin = &kept[k];
    if (twin) {
      for (size_t i = 0; i < n.outputs.size(); ++i) replace[n.outputs[i]] = twin->outputs[i];
      continue;
    }
    candidates.push_back(kept.size());
    kept.push_back(std::move(n));
  }
  p.nodes = std::move(kept);
  apply_replacements(p, replace);
}

}  // namespace maxc
