// Control flow and calls (inventory §5.16): cond, while_loop and call, each running subgraphs
// of the graph that holds the op. A subgraph sees nothing of the graph around it: every value
// it uses arrives as one of its inputs, so the op's operands are exactly the subgraph's
// inputs, in order, with the same types. That keeps each subgraph a whole graph, one the
// engine compiles on its own and the serializer writes as it writes any other.
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/ops/ops.h"

namespace maxc {
namespace {

std::vector<TensorType> input_types(const Graph& g) {
  std::vector<TensorType> types;
  for (const NamedValue& in : g.inputs()) types.push_back(g.type(in.value));
  return types;
}

std::vector<TensorType> output_types(const Graph& g) {
  std::vector<TensorType> types;
  for (const NamedValue& out : g.outputs()) types.push_back(g.type(out.value));
  return types;
}

std::vector<TensorType> operand_types(const InferContext& ctx, size_t first) {
  std::vector<TensorType> types;
  for (size_t i = first; i < ctx.num_inputs(); ++i) types.push_back(ctx.input(i));
  return types;
}

// `what` is the subgraph's role ("then_graph"); `types` what its inputs must be.
void check_takes(const InferContext& ctx, std::string_view what, const Graph& g, const std::vector<TensorType>& types) {
  const std::vector<TensorType> takes = input_types(g);
  if (takes.size() != types.size())
    ctx.fail(what, " '", g.name(), "' takes ", takes.size(), " inputs, but the op passes it ", types.size());
  for (size_t i = 0; i < types.size(); ++i)
    if (!(takes[i] == types[i]))
      ctx.fail(what, " '", g.name(), "' input ", i, " '", g.inputs()[i].name, "' is ", takes[i], ", but the op passes ",
               types[i]);
}

void check_gives(const InferContext& ctx, std::string_view what, const Graph& g, const std::vector<TensorType>& types) {
  const std::vector<TensorType> gives = output_types(g);
  if (gives.size() != types.size())
    ctx.fail(what, " '", g.name(), "' gives ", gives.size(), " outputs where ", types.size(), " are expected");
  for (size_t i = 0; i < types.size(); ++i)
    if (!(gives[i] == types[i]))
      ctx.fail(what, " '", g.name(), "' output ", i, " '", g.outputs()[i].name, "' is ", gives[i], ", expected ",
               types[i]);
}

const Graph& nonempty_subgraph(const InferContext& ctx, std::string_view attr) {
  const Graph& g = ctx.subgraph(attr);
  if (g.outputs().empty()) ctx.fail(attr, " '", g.name(), "' has no outputs");
  return g;
}

bool is_bool_scalar(const TensorType& t) { return t.dtype == DType::kBool && t.rank() == 0; }

std::vector<TensorType> infer_cond(const InferContext& ctx) {
  if (!is_bool_scalar(ctx.input(0))) ctx.fail("the predicate must be a rank-0 bool, got ", ctx.input(0));
  const std::vector<TensorType> args = operand_types(ctx, 1);
  const Graph& then_graph = nonempty_subgraph(ctx, "then_graph");
  const Graph& else_graph = nonempty_subgraph(ctx, "else_graph");
  check_takes(ctx, "then_graph", then_graph, args);
  check_takes(ctx, "else_graph", else_graph, args);
  std::vector<TensorType> outputs = output_types(then_graph);
  check_gives(ctx, "else_graph", else_graph, outputs);
  return outputs;
}

std::vector<TensorType> infer_while_loop(const InferContext& ctx) {
  const std::vector<TensorType> values = operand_types(ctx, 0);
  const Graph& predicate = nonempty_subgraph(ctx, "predicate");
  const Graph& body = nonempty_subgraph(ctx, "body");
  check_takes(ctx, "predicate", predicate, values);
  const std::vector<TensorType> decides = output_types(predicate);
  if (decides.size() != 1 || !is_bool_scalar(decides[0]))
    ctx.fail("predicate '", predicate.name(), "' must give one rank-0 bool, got ", decides.size(), " outputs",
             decides.empty() ? "" : str_cat(" (", decides[0], " first)"));
  check_takes(ctx, "body", body, values);
  check_gives(ctx, "body", body, values);
  return values;
}

std::vector<TensorType> infer_call(const InferContext& ctx) {
  const Graph& callee = nonempty_subgraph(ctx, "graph");
  check_takes(ctx, "graph", callee, operand_types(ctx, 0));
  return output_types(callee);
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  r.add(OpSchema{.name = "cond",
                 .inputs = {{"pred"}, {"args", Arity::kAny}},
                 .attrs = {AttrSpec::required("then_graph", AttrKind::kGraph),
                           AttrSpec::required("else_graph", AttrKind::kGraph)},
                 .infer = infer_cond});
  r.add(OpSchema{.name = "while_loop",
                 .inputs = {{"values", Arity::kVariadic}},
                 .attrs = {AttrSpec::required("predicate", AttrKind::kGraph), AttrSpec::required("body", AttrKind::kGraph)},
                 .infer = infer_while_loop});
  r.add(OpSchema{.name = "call",
                 .inputs = {{"args", Arity::kAny}},
                 .attrs = {AttrSpec::required("graph", AttrKind::kGraph), AttrSpec::with_default("prefix", std::string())},
                 .infer = infer_call});
}

}  // namespace maxc
