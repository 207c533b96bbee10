#include "compiler/program.h"

#include <sstream>

namespace maxc {

namespace {

bool is_leaf_op(const Op& op) {
  return op.schema->name == "constant" || op.schema->name == "constant_external";
}

void add_leaf(Program& p, const Graph& graph, const Op& op) {
  const ValueId v = op.outputs.at(0);
  if (op.schema->name == "constant_external") {
    p.weights.push_back({op.attrs.get<std::string>("name"), v});
    return;
  }
  const Constant* data = nullptr;
  const int64_t index = op.attrs.get<int64_t>("index");
  if (index >= 0 && static_cast<size_t>(index) < graph.constants().size())
    data = &graph.constants()[static_cast<size_t>(index)];
  if (!data) fail(Code::kInternal, "constant op refers to missing constant ", index);
  p.constants.push_back({v, *data});
}

}  // namespace

Program program_from_graph(const Graph& graph) {
  if (!graph.subgraphs().empty())
    fail(Code::kUnimplemented, "graph '", graph.name(),
         "' has subgraphs (control flow, call): the CPU engine does not run them yet");
  if (graph.outputs().empty())
    fail(Code::kInvalidArgument, "graph '", graph.name(), "' has no outputs: set them before compiling");
  Program p;
  p.types.reserve(graph.num_values());
  for (ValueId v = 0; v < graph.num_values(); ++v) p.types.push_back(graph.type(v));
  for (const auto& in : graph.inputs()) p.inputs.push_back({in.name, in.value});
  for (const Op& op : graph.ops()) {
    if (is_leaf_op(op)) {
      add_leaf(p, graph, op);
      continue;
    }
    p.nodes.push_back(Node{op.schema->name, op.inputs, op.outputs, op.attrs, {}});
  }
  p.outputs = graph.outputs();
  return p;
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
  os << ")\n}\n";
  return os.str();
}

}  // namespace maxc
