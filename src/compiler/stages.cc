#include "compiler/stages.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/rewrite.h"

namespace maxc {

bool counts_data(const Node& n) {
  return n.op == "nonzero" || n.op == "bind_dims" || (n.op == "repeat_interleave" && n.inputs.size() == 2);
}

std::set<std::string> symbols_of(const Program& p, const Node& n) {
  std::set<std::string> out;
  auto add = [&](const std::vector<Dim>& dims) {
    for (const Dim& d : dims)
      for (const std::string& symbol : d.symbols()) out.insert(symbol);
  };
  for (ValueId v : n.inputs) add(p.types[v].dims);
  for (ValueId v : n.outputs) add(p.types[v].dims);
  for (const auto& [name, value] : n.attrs)
    if (const auto* dims = std::get_if<std::vector<Dim>>(&value)) add(*dims);
  return out;
}

namespace {

std::set<std::string> input_symbols(const Program& p) {
  std::set<std::string> symbols;
  for (const auto& in : p.inputs)
    for (const Dim& d : p.types[in.value].dims)
      for (const std::string& s : d.symbols()) symbols.insert(s);
  return symbols;
}

const Dim& out_dim(const Node& n) { return n.attrs.get<std::vector<Dim>>("out_dim").at(0); }

// The node that computes the value of n's out_dim into `count`, from n's own inputs.
Node count_node(const Node& n, ValueId count) {
  if (n.op == "nonzero") return Node{"count_nonzero", {n.inputs[0]}, {count}, {}, {}, {}};
  Attrs attrs;
  if (n.attrs.has("axis")) attrs.set("axis", n.attrs.get<int64_t>("axis"));
  return Node{"count_repeats", n.inputs, {count}, std::move(attrs), {}, {}};
}

// The symbols of n's out_dim that `bound` lacks (none when n's output length is no data's).
std::vector<std::string> unbound(const Node& n, const std::set<std::string>& bound) {
  std::vector<std::string> missing;
  if (!counts_data(n)) return missing;
  for (const std::string& s : out_dim(n).symbols())
    if (!bound.contains(s)) missing.push_back(s);
  return missing;
}

// A region is planned whole, when its node is: every out_dim in it must be bound by its inputs.
void check_regions(Program& p) {
  for_each_region(p, [](Program& r) {
    const std::set<std::string> bound = input_symbols(r);
    for (const Node& n : r.nodes)
      if (!unbound(n, bound).empty())
        fail(Code::kUnimplemented, "op '", n.op, "' inside a cond or while_loop: its out_dim '", out_dim(n),
             "' is known only when it runs; a region's dims must follow from its inputs");
    check_regions(r);
  });
}

}  // namespace

namespace {

// A bind_dims names the entries of its input: each symbol not bound yet becomes a source,
// that entry, and the node (x itself) goes, its uses reading x.
void bind_entries(Program& p, const Node& n, std::set<std::string>& bound) {
  const auto& dims = n.attrs.get<std::vector<Dim>>("out_dim");
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::string& symbol = dims[i].symbol();
    if (bound.insert(symbol).second) p.symbol_sources.push_back({symbol, n.inputs[0], static_cast<int64_t>(i)});
  }
  std::vector<ValueId> replace = identity_map(p);
  replace[n.outputs[0]] = n.inputs[0];
  apply_replacements(p, replace);
}

}  // namespace

void add_symbol_sources(Program& p) {
  check_regions(p);
  std::set<std::string> bound = input_symbols(p);
  std::vector<Node> nodes;
  nodes.reserve(p.nodes.size());
  std::vector<Node> binds;
  for (Node& n : p.nodes) {
    if (n.op == "bind_dims") {
      binds.push_back(std::move(n));
      continue;
    }
    if (!unbound(n, bound).empty()) {
      const Dim& dim = out_dim(n);
      if (!dim.is_symbolic())
        fail(Code::kUnimplemented, "op '", n.op, "': out_dim '", dim, "' is an expression of '", unbound(n, bound)[0],
             "', which no input binds; name the count with a symbol of its own");
      const ValueId count = p.new_value(TensorType{DType::kInt64, {}, p.types[n.inputs.at(0)].device});
      nodes.push_back(count_node(n, count));
      p.symbol_sources.push_back({dim.symbol(), count});
      bound.insert(dim.symbol());
    }
    nodes.push_back(std::move(n));
  }
  p.nodes = std::move(nodes);
  for (const Node& n : binds) bind_entries(p, n, bound);
}

namespace {

class Splitter {
 public:
  explicit Splitter(const Program& p) : p_(p), producer_(producers(p)), node_stage_(p.nodes.size(), 0) {
    for (const auto& s : p.symbol_sources) source_of_.emplace(s.symbol, s.value);
    for (size_t k = 0; k < p.nodes.size(); ++k) node_stage_[k] = stage_of_node(k);
  }

  std::vector<Program> split() const {
    size_t count = 1;
    for (size_t s : node_stage_) count = std::max(count, s + 1);
    std::vector<Program> stages;
    for (size_t s = 0; s < count; ++s) stages.push_back(stage(s));
    return stages;
  }

 private:
  size_t value_stage(ValueId v) const {
    return producer_[v] < 0 ? 0 : node_stage_[static_cast<size_t>(producer_[v])];
  }

  // After its inputs' stages, and after the stage computing each symbol its types use.
  size_t stage_of_node(size_t k) const {
    const Node& n = p_.nodes[k];
    size_t stage = 0;
    for (ValueId v : n.inputs) stage = std::max(stage, value_stage(v));
    for (const std::string& symbol : symbols_of(p_, n)) {
      auto source = source_of_.find(symbol);
      if (source == source_of_.end()) continue;
      if (producer_[source->second] >= static_cast<int64_t>(k))
        fail(Code::kUnimplemented, "op '", n.op, "' uses dim '", symbol, "' before the nonzero that counts it");
      stage = std::max(stage, value_stage(source->second) + 1);
    }
    return stage;
  }

  // Whether a value computed in stage s is read after it.
  bool read_later(ValueId v, size_t s) const {
    for (size_t k = 0; k < p_.nodes.size(); ++k)
      if (node_stage_[k] > s && std::count(p_.nodes[k].inputs.begin(), p_.nodes[k].inputs.end(), v)) return true;
    for (const auto& out : p_.outputs)
      if (out.value == v) return true;
    for (const auto& source : p_.symbol_sources)
      if (source.value == v) return true;
    return false;
  }

  Program stage(size_t s) const {
    Program st;
    st.types = p_.types;
    st.weights = p_.weights;
    st.constants = p_.constants;
    st.inputs = p_.inputs;
    std::set<ValueId> carried;
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      if (node_stage_[k] != s) continue;
      const Node& n = p_.nodes[k];
      for (ValueId v : n.inputs)
        if (producer_[v] >= 0 && value_stage(v) < s && carried.insert(v).second) st.inputs.push_back({name(v), v});
      st.nodes.push_back(n);
      for (ValueId v : n.outputs)
        if (read_later(v, s)) st.outputs.push_back({name(v), v});
    }
    if (s == 0)
      for (const auto& out : p_.outputs)
        if (producer_[out.value] < 0) st.outputs.push_back({name(out.value), out.value});
    return st;
  }

  static std::string name(ValueId v) { return "%" + std::to_string(v); }

  const Program& p_;
  std::vector<int64_t> producer_;
  std::vector<size_t> node_stage_;
  std::map<std::string, ValueId> source_of_;
};

}  // namespace

std::vector<Program> split_stages(const Program& p) {
  if (p.symbol_sources.empty()) return {p};
  return Splitter(p).split();
}

}  // namespace maxc
