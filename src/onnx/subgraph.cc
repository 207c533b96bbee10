#include "onnx/subgraph.h"

#include <set>
#include <utility>

#include "onnx/dtypes.h"
#include "onnx/import_nodes.h"
#include "onnx/tensor_data.h"

namespace maxc::onnx {
namespace {

void collect_outer_names(const GraphProto& g, std::vector<std::string>& names, std::set<std::string>& listed) {
  std::set<std::string> defined;
  for (const ValueInfoProto& in : g.inputs) defined.insert(in.name);
  for (const TensorProto& t : g.initializers) defined.insert(t.name);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && listed.insert(name).second) names.push_back(name);
  };
  for (const NodeProto& node : g.nodes) {
    for (const std::string& in : node.inputs) use(in);
    for (const AttributeProto& a : node.attributes)
      if (a.g)
        for (const std::string& name : outer_names(*a.g)) use(name);
    for (const std::string& out : node.outputs) defined.insert(out);
  }
  for (const ValueInfoProto& out : g.outputs) use(out.name);
}

std::string within_message(const NodeContext& c, const std::string& where, std::string message) {
  constexpr std::string_view kPrefix = "onnx: ";
  if (message.rfind(kPrefix, 0) == 0) message.erase(0, kPrefix.size());
  return str_cat(kPrefix, c.label(), ": ", where, ": ", message);
}

// Runs `import`; an error it raises is raised again with c's node and `where` (its
// subgraph) in front of the inner node the message names.
void within(const NodeContext& c, const std::string& where, const std::function<void()>& import) {
  try {
    import();
  } catch (const InputValuesNeeded& e) {
    throw InputValuesNeeded(within_message(c, where, e.what()), e.inputs());
  } catch (const Error& e) {
    throw Error(e.code(), within_message(c, where, e.what()));
  }
}

// A subgraph's own initializers are known values of its scope: constants where used as
// tensors (the model's weights are the main graph's initializers).
void define_initializers(const GraphProto& g, ValueTable& scope) {
  if (g.sparse_initializer_count)
    fail(Code::kUnimplemented, "onnx: the subgraph has ", g.sparse_initializer_count,
         " sparse initializers, which max_c does not support");
  for (const TensorProto& t : g.initializers) {
    Ref<Tensor> data = tensor_from_proto(t, "initializer '" + t.name + "'", "");
    Operand op;
    op.type = TensorType{data->dtype(), {data->dims().begin(), data->dims().end()}, DeviceRef::cpu()};
    op.known = std::make_shared<KnownValue>(KnownValue::from_tensor(std::move(data)));
    scope.define(t.name, std::move(op), "an initializer");
  }
}

}  // namespace

const GraphProto& graph_attr(const NodeContext& c, std::string_view attr) {
  const AttributeProto* a = c.attr(attr);
  if (!a) c.invalid("attribute '", attr, "' is required");
  if (!a->g || (a->type != AttrType::kGraph && a->type != AttrType::kUndefined))
    c.invalid("attribute '", attr, "' must be a graph");
  return *a->g;
}

std::vector<std::string> outer_names(const GraphProto& g) {
  std::vector<std::string> names;
  std::set<std::string> listed;
  collect_outer_names(g, names, listed);
  return names;
}

void define_formal_input(const NodeContext& c, const GraphProto& g, size_t i, ValueTable& scope, Operand op) {
  const ValueInfoProto& in = g.inputs[i];
  if (in.has_other_type)
    c.unsupported("subgraph '", g.name, "' input ", i, " '", in.name, "' is not a tensor (a sequence, map or optional)");
  if (in.has_tensor_type && in.elem_type != 0) {
    DType declared = to_dtype(in.elem_type, "subgraph input '" + in.name + "'");
    if (declared != op.type.dtype)
      c.invalid("subgraph '", g.name, "' declares input ", i, " '", in.name, "' as ", dtype_name(declared),
                " but is given ", dtype_name(op.type.dtype));
  }
  scope.define(in.name, std::move(op), c.label());
}

void import_inline(NodeContext& c, const GraphProto& g, const std::string& where, ValueTable& scope) {
  within(c, where, [&] {
    define_initializers(g, scope);
    import_nodes(g.nodes, c.opset(), scope, c.graph());
  });
}

Subgraph::Subgraph(NodeContext& c, std::string_view attr)
    : outer_(c),
      proto_(graph_attr(c, attr)),
      where_(str_cat(attr, " '", proto_.name, "'")),
      graph_(proto_.name.empty() ? std::string(attr) : proto_.name),
      values_(graph_),
      ctx_(c.node(), c.index(), c.opset(), values_, graph_) {}

ValueId Subgraph::add_input(std::string name, ValueId operand) {
  if (name.empty()) name = "input";
  auto taken = [&](const std::string& n) {
    for (const NamedValue& in : graph_.inputs())
      if (in.name == n) return true;
    return false;
  };
  std::string unique = name;
  for (int k = 1; taken(unique); ++k) unique = name + "_" + std::to_string(k);
  ValueId v = graph_.add_input(unique, outer_.graph().type(operand));
  operands_.push_back(operand);
  return v;
}

void Subgraph::define_input(size_t i, Operand op) { define_formal_input(outer_, proto_, i, values_, std::move(op)); }

void Subgraph::define_input(size_t i, ValueId v) {
  Operand op;
  op.value = v;
  op.type = graph_.type(v);
  define_input(i, std::move(op));
}

void Subgraph::capture(const std::vector<std::string>& names) {
  const std::string user = str_cat(outer_.label(), " ", where_);
  for (const std::string& name : names) {
    Operand inner = outer_.values().get(name, user);
    if (inner.is_initializer || (inner.known && inner.known->is_static())) inner.value.reset();  // declared inside
    else inner.value = add_input(name, outer_.values().value(name, user));
    values_.define(name, std::move(inner), user);
  }
}

void Subgraph::import() {
  within(outer_, where_, [&] {
    define_initializers(proto_, values_);
    import_nodes(proto_.nodes, outer_.opset(), values_, graph_);
  });
}

const Operand& Subgraph::output(size_t i) { return values_.get(proto_.outputs[i].name, str_cat(outer_.label(), " ", where_)); }

ValueId Subgraph::output_value(size_t i) {
  return values_.value(proto_.outputs[i].name, str_cat(outer_.label(), " ", where_));
}

GraphRef Subgraph::attach(const std::vector<ValueId>& outputs) {
  std::vector<NamedValue> named;
  for (ValueId v : outputs) named.push_back({"", v});
  graph_.set_outputs(std::move(named));
  return GraphRef{outer_.graph().add_subgraph(std::move(graph_))};
}

ValueId as_scalar(NodeContext& c, ValueId v, std::string_view what) {
  const TensorType t = c.type_of(v);
  bool one = true;
  for (const Dim& d : t.dims) one = one && d.is_static() && d.static_value() == 1;
  if (!one) c.invalid(what, " must hold one element, its shape is ", dims_to_string(t.dims));
  return c.reshape(v, {});
}

}  // namespace maxc::onnx
