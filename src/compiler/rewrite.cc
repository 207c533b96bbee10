#include "compiler/rewrite.h"

#include <numeric>
#include <variant>

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

void erase_nodes(Program& p, const std::vector<bool>& removed) {
  std::vector<Node> kept;
  kept.reserve(p.nodes.size());
  for (size_t k = 0; k < p.nodes.size(); ++k)
    if (!removed[k]) kept.push_back(std::move(p.nodes[k]));
  p.nodes = std::move(kept);
}

const std::string* string_attr(const Node& n, std::string_view name) {
  const AttrValue* v = n.attrs.find(name);
  return v ? std::get_if<std::string>(v) : nullptr;
}

bool is_permute(const Program& p, const Node& n, const std::vector<int64_t>& dims) {
  if (n.op != "permute" || !n.steps.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  const AttrValue* a = n.attrs.find("dims");
  const auto* got = a ? std::get_if<std::vector<int64_t>>(a) : nullptr;
  const int64_t rank = p.types[n.inputs[0]].rank();
  if (!got || got->size() != dims.size() || rank != static_cast<int64_t>(dims.size())) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (((*got)[i] < 0 ? (*got)[i] + rank : (*got)[i]) != dims[i]) return false;
  return true;
}

std::vector<ValueId> identity_map(const Program& p) {
  std::vector<ValueId> map(p.types.size());
  std::iota(map.begin(), map.end(), ValueId{0});
  return map;
}

void apply_replacements(Program& p, const std::vector<ValueId>& replace) {
  for (Node& n : p.nodes) rewrite_inputs(n, replace);
  for (auto& out : p.outputs) out.value = resolve(replace, out.value);
  for (auto& source : p.symbol_sources) source.value = resolve(replace, source.value);
}

}  // namespace maxc
