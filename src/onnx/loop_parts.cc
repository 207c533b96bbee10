#include "onnx/loop_parts.h"

namespace maxc::onnx {

ValueId count_value(NodeContext& c, const Dim& d) {
  return c.constant(KnownValue::from_dims(DType::kInt64, {}, {d}));
}

GraphRef add_predicate(NodeContext& c, const Graph& body, size_t counter, std::optional<size_t> limit,
                       std::optional<size_t> condition) {
  Graph p(body.name() + "_predicate");
  std::vector<ValueId> in;
  for (const NamedValue& v : body.inputs()) in.push_back(p.add_input(v.name, body.type(v.value)));
  std::optional<ValueId> go_on;
  if (limit) go_on = p.add_op("less", {in[counter], in[*limit]})[0];
  if (condition) go_on = go_on ? p.add_op("logical_and", {*go_on, in[*condition]})[0] : in[*condition];
  if (!go_on) fail(Code::kInternal, "onnx: ", c.label(), ": a loop predicate with neither a limit nor a condition");
  p.set_outputs({{"go_on", *go_on}});
  return GraphRef{c.graph().add_subgraph(std::move(p))};
}

ValueId carried_next(NodeContext& b, ValueId entered, ValueId next, std::string_view what) {
  const TensorType in = b.type_of(entered), out = b.type_of(next);
  if (!(in == out))
    b.unsupported(what, " enters the body as ", in, " and leaves it as ", out,
                  "; max_c's while_loop carries each value with one type");
  return next;
}

ValueId zero_rows(NodeContext& c, const TensorType& row, std::vector<Dim> lead) {
  lead.insert(lead.end(), row.dims.begin(), row.dims.end());
  return c.op("broadcast_to", {c.scalar(row.dtype, 0)}, {{"shape", std::move(lead)}});
}

ValueId write_row(NodeContext& c, ValueId acc, ValueId row, ValueId position) {
  std::vector<Dim> one_row = c.type_of(row).dims;
  one_row.insert(one_row.begin(), Dim(1));
  const Dim k = c.type_of(position).dims.at(0);
  ValueId at = c.reshape(position, {Dim(1), k});
  return c.op("scatter_nd", {acc, c.reshape(row, one_row), at});
}

}  // namespace maxc::onnx
