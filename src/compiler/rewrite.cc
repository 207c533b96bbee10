#include "compiler/rewrite.h"

#include <numeric>

namespace maxc {

namespace {

ValueId resolve(const std::vector<ValueId>& replace, ValueId v) {
  // Chains (a -> b -> c) arise when a pass replaces a value that replaced another.
  while (replace[v] != v) v = replace[v];
  return v;
}

void rewrite_inputs(Node& n, const std::vector<ValueId>& replace) {
  for (ValueId& v : n.inputs) v = resolve(replace, v);
  for (Node& step : n.steps) rewrite_inputs(step, replace);
}

}  // namespace

std::vector<ValueId> identity_map(const Program& p) {
  std::vector<ValueId> map(p.types.size());
  std::iota(map.begin(), map.end(), ValueId{0});
  return map;
}

void apply_replacements(Program& p, const std::vector<ValueId>& replace) {
  for (Node& n : p.nodes) rewrite_inputs(n, replace);
  for (auto& out : p.outputs) out.value = resolve(replace, out.value);
}

}  // namespace maxc
