// Generic elementwise fusion (DESIGN §4): chains and DAGs of elementwise nodes become one
// "fused_elementwise" node that the engine runs as one loop over the output.
//
// The fused node (the convention the lowering in engine/lower/elementwise.cc reads):
//   op      "fused_elementwise", no attributes;
//   steps   the original nodes, in their order, unchanged (ops, inputs, outputs, attrs);
//   inputs  the values the steps read that no step makes, in first-use order;
//   outputs the step values read outside the group (by another node or as program outputs).
//
// Which nodes group together:
//   - elementwise registry ops (unary, binary, max/min with two inputs, comparisons, logical
//     and bitwise ops, where, clamp, gelu, cast) with one output;
//   - the same compute domain: float32 (float32, float16, bfloat16), float64, int64 (signed
//     integers and unsigned up to 32 bits) or uint64; ops on bool alone fit any domain. A
//     cast whose source and destination share a domain (float32 -> float16) is an ordinary
//     member; one between domains (int64 -> float32, float32 -> int32) joins either as the
//     first step of a group in its destination's domain, reading its source as a node input
//     (the engine converts inputs as it loads them), or as a last step of its source's
//     group, whose value no later member may read (the engine converts as it stores);
//   - every grouped node's output has the same dims (symbolically), so every value inside
//     the group has the output's shape; smaller operands come in as broadcast inputs.
// A node joins the group of one of its producers when that keeps the program acyclic: each
// of its other inputs must be a leaf, come from the group, or come from a node before the
// group's first member. The fused node takes the first member's place in the order.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "compiler/passes.h"
#include "compiler/rewrite.h"
#include "graph/promotion.h"

namespace maxc {
namespace {

// Limits that keep a fused node well inside the engine's per-thread register budget.
constexpr size_t kMaxSteps = 128;
constexpr size_t kMaxInputs = 64;

enum class Domain { kNone, kAny, kFloat32, kFloat64, kInt64, kUInt64 };

Domain domain_of(DType d) {
  switch (d) {
    case DType::kBool: return Domain::kAny;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32: return Domain::kFloat32;
    case DType::kFloat64: return Domain::kFloat64;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32: return Domain::kInt64;
    case DType::kUInt64: return Domain::kUInt64;
    default: return Domain::kNone;  // float8, float4: no kernel computes on them
  }
}

// The join of two domains, or kNone when they differ.
Domain join(Domain a, Domain b) {
  if (a == Domain::kNone || b == Domain::kNone) return Domain::kNone;
  if (a == Domain::kAny) return b;
  if (b == Domain::kAny) return a;
  return a == b ? a : Domain::kNone;
}

const std::set<std::string_view>& elementwise_ops() {
  static const std::set<std::string_view> ops = {
      "abs",   "acos",       "atanh",       "cos",         "erf",    "exp",    "floor",     "log",
      "log1p", "negate",     "relu",        "round",       "rsqrt",  "sigmoid", "silu",     "sin",
      "sqrt",  "tanh",       "trunc",       "gelu",        "add",    "sub",    "mul",       "div",
      "mod",   "pow",        "max",         "min",         "equal",  "not_equal", "greater", "greater_equal",
      "less",  "less_equal", "logical_and", "logical_or",  "logical_xor", "logical_not", "is_inf", "is_nan",
      "where", "clamp",      "cast",        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"};
  return ops;
}

// Ops that compute in their inputs' promoted dtype rather than their output's (bool).
bool computes_in_inputs(std::string_view op) {
  static const std::set<std::string_view> ops = {"equal", "not_equal", "greater", "greater_equal",
                                                 "less",  "less_equal", "is_inf", "is_nan"};
  return ops.contains(op);
}

// A cast between two domains (neither bool): fusable only at a group's edge.
bool is_cross_domain_cast(const Program& p, const Node& n) {
  if (n.op != "cast" || !n.steps.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  const Domain from = domain_of(p.types[n.inputs[0]].dtype), to = domain_of(p.types[n.outputs[0]].dtype);
  return from != Domain::kNone && to != Domain::kNone && join(from, to) == Domain::kNone;
}

// The domain node `n` computes in; kNone when it is not a node this pass fuses (for a cross-
// domain cast too: see place()).
Domain node_domain(const Program& p, const Node& n) {
  if (!n.steps.empty() || n.outputs.size() != 1 || !is_elementwise_op(n.op, n.inputs.size())) return Domain::kNone;
  const DType out = p.types[n.outputs[0]].dtype;
  Domain every = domain_of(out);
  for (ValueId v : n.inputs) {
    if (domain_of(p.types[v].dtype) == Domain::kNone) return Domain::kNone;
  }
  if (every == Domain::kNone) return Domain::kNone;
  if (n.op == "cast") return join(domain_of(p.types[n.inputs.at(0)].dtype), every);
  if (n.op.starts_with("logical_")) return Domain::kAny;
  if (computes_in_inputs(n.op)) {
    std::optional<DType> c = p.types[n.inputs.at(0)].dtype;
    if (n.inputs.size() == 2) c = promote_types(*c, p.types[n.inputs[1]].dtype);
    return c ? domain_of(*c) : Domain::kNone;
  }
  return every;
}

struct Group {
  Domain domain = Domain::kAny;
  std::vector<Dim> dims;
  size_t first = 0;
  std::vector<size_t> members;
  std::set<ValueId> made;    // values the members make
  std::set<ValueId> inputs;  // values the members read that no member makes
  std::set<ValueId> sealed;  // made by a closing cast: in another domain, no member may read them
};

class ElementwiseFuser {
 public:
  explicit ElementwiseFuser(Program& p) : p_(p), producer_(producers(p)), group_of_(p.nodes.size(), -1) {}

  void run() {
    for (size_t k = 0; k < p_.nodes.size(); ++k) place(k);
    rebuild();
  }

 private:
  void place(size_t k) {
    const Node& n = p_.nodes[k];
    if (is_cross_domain_cast(p_, n)) {
      place_cross_domain_cast(k);
      return;
    }
    const Domain d = node_domain(p_, n);
    if (d == Domain::kNone) return;
    const std::vector<Dim>& dims = p_.types[n.outputs[0]].dims;
    for (ValueId v : n.inputs) {
      const int64_t j = producer_[v];
      if (j < 0 || group_of_[static_cast<size_t>(j)] < 0) continue;
      const int64_t g = group_of_[static_cast<size_t>(j)];
      if (can_join(groups_[static_cast<size_t>(g)], n, d, dims)) {
        add(g, k, d);
        return;
      }
    }
    groups_.push_back(Group{d, dims, k, {}, {}, {}, {}});
    add(static_cast<int64_t>(groups_.size() - 1), k, d);
  }

  // A cast from the source's domain closes the group it reads from when it can; otherwise it
  // opens a group in the destination's domain with the source as that group's input.
  void place_cross_domain_cast(size_t k) {
    const Node& n = p_.nodes[k];
    const ValueId src = n.inputs[0];
    const Domain from = domain_of(p_.types[src].dtype), to = domain_of(p_.types[n.outputs[0]].dtype);
    const std::vector<Dim>& dims = p_.types[n.outputs[0]].dims;
    const int64_t j = producer_[src];
    const int64_t g = j < 0 ? -1 : group_of_[static_cast<size_t>(j)];
    if (g >= 0 && can_join(groups_[static_cast<size_t>(g)], n, from, dims)) {
      add(g, k, from);
      groups_[static_cast<size_t>(g)].sealed.insert(n.outputs[0]);
      return;
    }
    groups_.push_back(Group{to, dims, k, {}, {}, {}, {}});
    add(static_cast<int64_t>(groups_.size() - 1), k, to);
  }

  bool can_join(const Group& g, const Node& n, Domain d, const std::vector<Dim>& dims) const {
    if (join(g.domain, d) == Domain::kNone || g.dims != dims || g.members.size() >= kMaxSteps) return false;
    size_t new_inputs = 0;
    for (ValueId v : n.inputs) {
      if (g.sealed.contains(v)) return false;
      if (g.made.contains(v)) continue;
      if (!g.inputs.contains(v)) ++new_inputs;
      // An input made by a node at or after the group's first member (outside the group)
      // could depend on the group: the fused node, at the first member's place, would then
      // read a value made after it.
      const int64_t j = producer_[v];
      if (j >= 0 && static_cast<size_t>(j) >= g.first) return false;
    }
    return g.inputs.size() + new_inputs <= kMaxInputs;
  }

  void add(int64_t g, size_t k, Domain d) {
    Group& group = groups_[static_cast<size_t>(g)];
    const Node& n = p_.nodes[k];
    group.domain = join(group.domain, d);
    group.members.push_back(k);
    for (ValueId v : n.inputs)
      if (!group.made.contains(v)) group.inputs.insert(v);
    for (ValueId v : n.outputs) group.made.insert(v);
    group_of_[k] = g;
  }

  Node fused_node(const Group& g, const std::vector<bool>& read_outside) const {
    Node f;
    f.op = "fused_elementwise";
    for (size_t k : g.members) {
      const Node& n = p_.nodes[k];
      for (ValueId v : n.inputs)
        if (!g.made.contains(v) && std::find(f.inputs.begin(), f.inputs.end(), v) == f.inputs.end())
          f.inputs.push_back(v);
      for (ValueId v : n.outputs)
        if (read_outside[v]) f.outputs.push_back(v);
      f.steps.push_back(n);
    }
    return f;
  }

  // Values read by a node of another group (or none), by the program's outputs, or as a
  // symbol's source (the engine reads a shape a bind_dims names).
  std::vector<bool> values_read_outside_their_group() const {
    std::vector<bool> outside(p_.types.size(), false);
    for (const auto& out : p_.outputs) outside[out.value] = true;
    for (const auto& source : p_.symbol_sources) outside[source.value] = true;
    for (size_t k = 0; k < p_.nodes.size(); ++k)
      for (ValueId v : p_.nodes[k].inputs) {
        const int64_t j = producer_[v];
        if (j < 0) continue;
        const int64_t gj = group_of_[static_cast<size_t>(j)];
        if (gj < 0 || gj != group_of_[k]) outside[v] = true;
      }
    return outside;
  }

  void rebuild() {
    const std::vector<bool> outside = values_read_outside_their_group();
    std::vector<Node> nodes;
    nodes.reserve(p_.nodes.size());
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      const int64_t g = group_of_[k];
      if (g < 0 || groups_[static_cast<size_t>(g)].members.size() < 2) {
        nodes.push_back(std::move(p_.nodes[k]));
        continue;
      }
      const Group& group = groups_[static_cast<size_t>(g)];
      if (group.first == k) nodes.push_back(fused_node(group, outside));
    }
    p_.nodes = std::move(nodes);
  }

  Program& p_;
  std::vector<int64_t> producer_;
  std::vector<int64_t> group_of_;  // per node
  std::vector<Group> groups_;
};

}  // namespace

bool is_elementwise_op(std::string_view op, size_t num_inputs) {
  return elementwise_ops().contains(op) && ((op != "max" && op != "min") || num_inputs == 2);
}

void fuse_elementwise(Program& p) { ElementwiseFuser(p).run(); }

}  // namespace maxc
