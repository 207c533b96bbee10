// If. A condition known at import inlines the branch it picks, so what is known about the
// branch's outputs stays known (expanded functions branch on ranks and attributes, and
// their outputs are often shapes). A condition known only at run time becomes a cond whose
// branches take every outer value either of them uses; our cond gives one type from both,
// so branches whose outputs differ in type are UNIMPLEMENTED, but for a squeeze of dims that
// the condition tests (below).
#include <set>

#include "onnx/dim_agreement.h"
#include "onnx/subgraph.h"

namespace maxc::onnx {
namespace {

void check_branch(NodeContext& c, std::string_view attr) {
  const GraphProto& g = graph_attr(c, attr);
  if (!g.inputs.empty()) c.invalid(attr, " '", g.name, "' must take no inputs, it takes ", g.inputs.size());
  if (g.outputs.size() != c.num_outputs())
    c.invalid(attr, " '", g.name, "' gives ", g.outputs.size(), " outputs, the node has ", c.num_outputs());
}

void inline_branch(NodeContext& c, std::string_view attr) {
  const GraphProto& g = graph_attr(c, attr);
  ValueTable scope(c.values());
  const std::string where = str_cat(attr, " '", g.name, "'");
  import_inline(c, g, where, scope);
  for (size_t i = 0; i < g.outputs.size(); ++i)
    c.set_output_from(i, scope.as_operand(g.outputs[i].name, str_cat(c.label(), " ", where)));
}

std::vector<std::string> names_either_uses(NodeContext& c) {
  std::vector<std::string> names = outer_names(graph_attr(c, "then_branch"));
  std::set<std::string> listed(names.begin(), names.end());
  for (const std::string& n : outer_names(graph_attr(c, "else_branch")))
    if (listed.insert(n).second) names.push_back(n);
  return names;
}

std::vector<ValueId> branch_outputs(Subgraph& branch, size_t n) {
  std::vector<ValueId> out;
  for (size_t i = 0; i < n; ++i) out.push_back(branch.output_value(i));
  return out;
}

// ---- a condition on dims whose branches differ in rank ----
// PyTorch exports x.squeeze(k) of a dynamic dim as If(Shape(x)[k] == 1, Squeeze(x, k),
// Identity(x)): the branches' ranks differ, so no one cond holds both, and what follows was
// traced for one of them. When the condition is computed from dims alone (no input's
// values) and one branch gives the other's outputs with axes removed that the algebra
// cannot show to be 1, that squeezing branch is inlined: its Squeeze (or Reshape) asserts
// those dims are 1 when the model runs (dim_agreement.h), so an input that would take the
// other branch fails there, by name, instead of running the wrong branch.

// Whether v is computed from dims and constants only: no graph input (a subgraph's
// captured values included) and no weight among its ancestors.
bool from_dims_only(const Graph& g, ValueId v) {
  std::vector<ValueId> todo{v};
  std::set<ValueId> seen;
  while (!todo.empty()) {
    const ValueId at = todo.back();
    todo.pop_back();
    if (!seen.insert(at).second) continue;
    const int64_t k = g.value(at).op;
    if (k < 0) return false;
    for (ValueId in : g.ops()[static_cast<size_t>(k)].inputs) todo.push_back(in);
  }
  return true;
}

// Whether `narrow` is `wide` with some axes removed, each undecided against 1.
bool squeezes(const TensorType& narrow, const TensorType& wide) {
  if (narrow.dtype != wide.dtype || narrow.rank() >= wide.rank()) return false;
  size_t j = 0;
  for (const Dim& d : wide.dims) {
    if (j < narrow.dims.size() && narrow.dims[j] == d) ++j;
    else if (!undecided(d, Dim(1))) return false;
  }
  return j == narrow.dims.size();
}

// "then_branch" or "else_branch" when every output of that branch squeezes the other's
// (or equals it), at least one strictly; empty otherwise.
std::string_view squeezing_branch(const std::vector<TensorType>& then_types,
                                  const std::vector<TensorType>& else_types) {
  auto all = [&](const std::vector<TensorType>& narrow, const std::vector<TensorType>& wide) {
    bool strict = false;
    for (size_t i = 0; i < narrow.size(); ++i) {
      if (narrow[i] == wide[i]) continue;
      if (!squeezes(narrow[i], wide[i])) return false;
      strict = true;
    }
    return strict;
  };
  if (all(then_types, else_types)) return "then_branch";
  if (all(else_types, then_types)) return "else_branch";
  return {};
}

void run_time_if(NodeContext& c) {
  ValueId pred = as_scalar(c, c.input(0), "the condition");
  Subgraph then_branch(c, "then_branch"), else_branch(c, "else_branch");
  const std::vector<std::string> captured = names_either_uses(c);
  then_branch.capture(captured);
  else_branch.capture(captured);
  then_branch.import();
  else_branch.import();
  const std::vector<ValueId> then_out = branch_outputs(then_branch, c.num_outputs());
  const std::vector<ValueId> else_out = branch_outputs(else_branch, c.num_outputs());
  std::vector<TensorType> then_types, else_types;
  for (size_t i = 0; i < then_out.size(); ++i) {
    then_types.push_back(then_branch.graph().type(then_out[i]));
    else_types.push_back(else_branch.graph().type(else_out[i]));
  }
  if (then_types != else_types && from_dims_only(c.graph(), pred)) {
    std::string_view branch = squeezing_branch(then_types, else_types);
    if (!branch.empty()) return inline_branch(c, branch);
  }
  for (size_t i = 0; i < then_out.size(); ++i) {
    const TensorType t = then_branch.graph().type(then_out[i]), e = else_branch.graph().type(else_out[i]);
    if (!(t == e))
      c.unsupported("output ", i, " '", c.node().outputs[i], "' is ", t, " from then_branch but ", e,
                    " from else_branch; max_c's cond needs both branches to give one type");
  }
  std::vector<ValueId> operands{pred};
  operands.insert(operands.end(), then_branch.operands().begin(), then_branch.operands().end());
  const GraphRef then_ref = then_branch.attach(then_out), else_ref = else_branch.attach(else_out);
  const std::vector<ValueId> out = c.ops("cond", operands, {{"then_graph", then_ref}, {"else_graph", else_ref}});
  for (size_t i = 0; i < out.size(); ++i) c.set_output(i, out[i]);
}

void import_if(NodeContext& c) {
  if (c.dtype(0) != DType::kBool) c.invalid("the condition must be bool, it is ", dtype_name(c.dtype(0)));
  check_branch(c, "then_branch");
  check_branch(c, "else_branch");
  if (c.num_outputs() == 0) return;
  const KnownValue* k = c.known(0);
  std::optional<std::vector<double>> pred = k ? k->doubles() : std::nullopt;
  if (!pred) return run_time_if(c);
  if (pred->size() != 1) c.invalid("the condition must hold one element, it holds ", pred->size());
  inline_branch(c, (*pred)[0] != 0 ? "then_branch" : "else_branch");
}

}  // namespace

void register_if_importers(ImportTable& t) { t["If"] = import_if; }

}  // namespace maxc::onnx
