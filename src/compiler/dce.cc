// Dead-code elimination: a node lives when a program output depends on it, or (a nonzero,
// a repeat_interleave by a tensor) when a live node or output uses the count it learns: the
// shape of a nonzero's result may be all that is read of it. Constants no live node reads
// are dropped too; weights stay, since they are the model's signature.
#include <set>
#include <string>
#include <vector>

#include "compiler/passes.h"
#include "compiler/rewrite.h"
#include "compiler/stages.h"

namespace maxc {

void eliminate_dead_code(Program& p) {
  std::vector<bool> live(p.types.size(), false);
  for (const auto& out : p.outputs) live[out.value] = true;
  for (const auto& source : p.symbol_sources) live[source.value] = true;
  std::set<std::string> used;  // the symbols of live types and attributes
  for (const auto& out : p.outputs)
    for (const Dim& d : p.types[out.value].dims) used.merge(d.symbols());
  std::vector<bool> keep(p.nodes.size(), false);
  for (size_t k = p.nodes.size(); k-- > 0;) {
    const Node& n = p.nodes[k];
    for (ValueId v : n.outputs) keep[k] = keep[k] || live[v];
    if (!keep[k] && counts_data(n) && n.attrs.has("out_dim"))
      for (const Dim& d : n.attrs.get<std::vector<Dim>>("out_dim"))
        for (const std::string& s : d.symbols()) keep[k] = keep[k] || used.contains(s);
    if (!keep[k]) continue;
    for (ValueId v : n.inputs) live[v] = true;
    used.merge(symbols_of(p, n));
  }
  keep.flip();
  erase_nodes(p, keep);
  std::erase_if(p.constants, [&](const ProgramConstant& c) { return !live[c.value]; });
}

}  // namespace maxc
