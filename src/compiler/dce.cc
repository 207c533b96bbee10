// Dead-code elimination: a node lives when a program output depends on it. Constants no
// live node reads are dropped too; weights stay, since they are the model's signature.
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {

void eliminate_dead_code(Program& p) {
  std::vector<bool> live(p.types.size(), false);
  for (const auto& out : p.outputs) live[out.value] = true;
  for (const auto& source : p.symbol_sources) live[source.value] = true;
  std::vector<bool> keep(p.nodes.size(), false);
  for (size_t k = p.nodes.size(); k-- > 0;) {
    const Node& n = p.nodes[k];
    for (ValueId v : n.outputs) keep[k] = keep[k] || live[v];
    if (!keep[k]) continue;
    for (ValueId v : n.inputs) live[v] = true;
  }
  keep.flip();
  erase_nodes(p, keep);
  std::erase_if(p.constants, [&](const ProgramConstant& c) { return !live[c.value]; });
}

}  // namespace maxc
