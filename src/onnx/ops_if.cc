// If. A condition known at import inlines the branch it picks, so what is known about the
// branch's outputs stays known (expanded functions branch on ranks and attributes, and
// their outputs are often shapes). A condition known only at run time becomes a cond whose
// branches take every outer value either of them uses; our cond gives one type from both,
// so branches whose outputs differ in type are UNIMPLEMENTED.
#include <set>

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
