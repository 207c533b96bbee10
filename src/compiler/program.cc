#include "compiler/program.h"

#include <sstream>

namespace maxc {

void for_each_region(Program& p, const std::function<void(Program&)>& fn) {
  for (Node& n : p.nodes)
    for (Region& r : n.regions) fn(*r.program);
}

std::vector<int64_t> producers(const Program& p) {
  std::vector<int64_t> result(p.types.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k)
    for (ValueId v : p.nodes[k].outputs) result[v] = static_cast<int64_t>(k);
  return result;
}

std::vector<int32_t> use_counts(const Program& p) {
  std::vector<int32_t> uses(p.types.size(), 0);
  for (const Node& n : p.nodes)
    for (ValueId v : n.inputs) ++uses[v];
  for (const auto& out : p.outputs) ++uses[out.value];
  for (const auto& source : p.symbol_sources) ++uses[source.value];
  return uses;
}

namespace {

void print_node(std::ostream& os, const Program& p, const Node& n, const std::string& indent) {
  os << indent;
  for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", %" : "%") << n.outputs[i];
  os << " = " << n.op << "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", %" : "%") << n.inputs[i];
  os << ")";
  if (n.attrs.size()) os << " " << n.attrs.to_string();
  if (!n.outputs.empty()) os << " : " << p.types[n.outputs[0]];
  os << "\n";
  for (const Node& step : n.steps) print_node(os, p, step, indent + "    ");
  for (const Region& r : n.regions) {
    std::istringstream lines(r.program->to_string());
    for (std::string line; std::getline(lines, line);) os << indent << "    " << line << "\n";
  }
}

}  // namespace

std::string Program::to_string() const {
  std::ostringstream os;
  os << "program {\n";
  for (const auto& in : inputs) os << "  %" << in.value << " = input " << in.name << " : " << types[in.value] << "\n";
  for (const auto& w : weights) os << "  %" << w.value << " = weight " << w.name << " : " << types[w.value] << "\n";
  for (const auto& c : constants) os << "  %" << c.value << " = constant : " << types[c.value] << "\n";
  for (const Node& n : nodes) print_node(os, *this, n, "  ");
  os << "  output(";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << outputs[i].name << " = %" << outputs[i].value;
  os << ")\n";
  for (const auto& s : symbol_sources) os << "  symbol " << s.symbol << " = %" << s.value << "\n";
  os << "}\n";
  return os.str();
}

}  // namespace maxc
