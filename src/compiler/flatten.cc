// Graph -> Program (program_from_graph). A `call` disappears here: its graph's ops join the
// caller's, on fresh value ids, so every later pass sees through it. cond and while_loop stay
// nodes, each subgraph becoming a region program of its own; the weights a region declares
// are the model's weights, so they are lifted into the enclosing program and handed to the
// node as inputs, which keeps a region a closed program the engine can plan by itself.
#include <algorithm>
#include <limits>

#include "compiler/program.h"

namespace maxc {

namespace {

constexpr ValueId kUnmapped = std::numeric_limits<ValueId>::max();

// g as a program: its values keep their ids, its weight names get `prefix` in front.
Program flatten(const Graph& g, const std::string& prefix);
// A subgraph as a closed program: its weights become inputs after its own.
Program region_program(const Graph& sub, const std::string& prefix);

bool is_control_flow(std::string_view op) { return op == "cond" || op == "while_loop"; }

// The subgraph attributes of a control-flow op, in region order.
std::vector<std::string_view> region_attrs(std::string_view op) {
  if (op == "cond") return {"then_graph", "else_graph"};
  return {"predicate", "body"};
}

const Graph& subgraph_of(const Graph& g, const Op& op, std::string_view attr) {
  const int64_t index = op.attrs.get<GraphRef>(attr).index;
  if (index < 0 || static_cast<uint64_t>(index) >= g.subgraphs().size())
    fail(Code::kInternal, op.schema->label(), ": attribute '", attr, "' refers to missing subgraph ", index);
  return g.subgraphs()[static_cast<size_t>(index)];
}

class Flattener {
 public:
  explicit Flattener(Program& p) : p_(p) {}

  // Adds g's ops to the program. map[v] is the program value of g's value v: the caller fills
  // in g's inputs. With keep_ids, g's other values keep their own ids (the program's types
  // are g's); otherwise each gets a fresh one. Weight names get `prefix` in front.
  void add_body(const Graph& g, std::vector<ValueId>& map, const std::string& prefix, bool keep_ids) {
    for (const Op& op : g.ops()) {
      const std::string& name = op.schema->name;
      if (name == "constant") {
        add_constant(g, op, define(g, op.outputs[0], map, keep_ids));
      } else if (name == "constant_external") {
        map[op.outputs[0]] = weight(prefix + op.attrs.get<std::string>("name"), g.type(op.outputs[0]),
                                    [&] { return define(g, op.outputs[0], map, keep_ids); });
      } else if (name == "call") {
        add_call(g, op, map, prefix);
      } else {
        Node n{name, remap(op.inputs, map), {}, is_control_flow(name) ? Attrs{} : op.attrs, {}, {}};
        for (ValueId v : op.outputs) n.outputs.push_back(define(g, v, map, keep_ids));
        if (is_control_flow(name)) add_regions(g, op, prefix, n);
        p_.nodes.push_back(std::move(n));
      }
    }
  }

 private:
  static std::vector<ValueId> remap(const std::vector<ValueId>& values, const std::vector<ValueId>& map) {
    std::vector<ValueId> out;
    for (ValueId v : values) {
      if (map[v] == kUnmapped) fail(Code::kInternal, "value %", v, " is used before it is defined");
      out.push_back(map[v]);
    }
    return out;
  }

  ValueId define(const Graph& g, ValueId v, std::vector<ValueId>& map, bool keep_ids) {
    map[v] = keep_ids ? v : p_.new_value(g.type(v));
    return map[v];
  }

  void add_constant(const Graph& g, const Op& op, ValueId v) {
    const int64_t index = op.attrs.get<int64_t>("index");
    if (index < 0 || static_cast<size_t>(index) >= g.constants().size())
      fail(Code::kInternal, "constant op refers to missing constant ", index);
    p_.constants.push_back({v, g.constants()[static_cast<size_t>(index)]});
  }

  // The program value of weight `name`: the one declared before (of the same type), or
  // make() declared now.
  template <typename Make>
  ValueId weight(const std::string& name, const TensorType& type, Make make) {
    auto same = std::find_if(p_.weights.begin(), p_.weights.end(), [&](const auto& w) { return w.name == name; });
    if (same == p_.weights.end()) {
      p_.weights.push_back({name, make()});
      return p_.weights.back().value;
    }
    if (!(p_.types[same->value] == type))
      fail(Code::kInvalidArgument, "weight '", name, "' is declared as ", p_.types[same->value], " and as ", type,
           " (by a called or control-flow subgraph)");
    return same->value;
  }

  void add_call(const Graph& g, const Op& op, std::vector<ValueId>& map, const std::string& prefix) {
    const Graph& callee = subgraph_of(g, op, "graph");
    std::vector<ValueId> inner(callee.num_values(), kUnmapped);
    for (size_t i = 0; i < callee.inputs().size(); ++i) inner[callee.inputs()[i].value] = map[op.inputs[i]];
    add_body(callee, inner, prefix + op.attrs.get<std::string>("prefix"), /*keep_ids=*/false);
    for (size_t j = 0; j < op.outputs.size(); ++j) map[op.outputs[j]] = inner[callee.outputs()[j].value];
  }

  // The region inputs past the operands are weights; each becomes a node input (once).
  void add_regions(const Graph& g, const Op& op, const std::string& prefix, Node& n) {
    const size_t first_operand = op.schema->name == "cond" ? 1 : 0;
    const size_t operands = n.inputs.size();
    for (std::string_view attr : region_attrs(op.schema->name)) {
      Region r{std::make_shared<Program>(region_program(subgraph_of(g, op, attr), prefix)), {}};
      for (size_t j = 0; j < r.program->inputs.size(); ++j) {
        const size_t operand = first_operand + j;
        if (operand < operands) {
          r.feeds.push_back(static_cast<uint32_t>(operand));
          continue;
        }
        const ProgramInput& in = r.program->inputs[j];
        const ValueId w = weight(in.name, r.program->types[in.value], [&] { return p_.new_value(r.program->types[in.value]); });
        auto at = std::find(n.inputs.begin() + static_cast<std::ptrdiff_t>(operands), n.inputs.end(), w);
        if (at == n.inputs.end()) at = n.inputs.insert(n.inputs.end(), w);
        r.feeds.push_back(static_cast<uint32_t>(at - n.inputs.begin()));
      }
      n.regions.push_back(std::move(r));
    }
  }

  Program& p_;
};

Program flatten(const Graph& g, const std::string& prefix) {
  Program p;
  p.types.reserve(g.num_values());
  for (ValueId v = 0; v < g.num_values(); ++v) p.types.push_back(g.type(v));
  std::vector<ValueId> map(g.num_values(), kUnmapped);
  for (const auto& in : g.inputs()) {
    p.inputs.push_back({in.name, in.value});
    map[in.value] = in.value;
  }
  Flattener(p).add_body(g, map, prefix, /*keep_ids=*/true);
  for (const auto& out : g.outputs()) p.outputs.push_back({out.name, map[out.value]});
  return p;
}

Program region_program(const Graph& sub, const std::string& prefix) {
  Program r = flatten(sub, prefix);
  for (const ProgramWeight& w : r.weights) r.inputs.push_back({w.name, w.value});
  r.weights.clear();
  return r;
}

}  // namespace

Program program_from_graph(const Graph& graph) {
  if (graph.outputs().empty())
    fail(Code::kInvalidArgument, "graph '", graph.name(), "' has no outputs: set them before compiling");
  return flatten(graph, "");
}

}  // namespace maxc
