#include "onnx/value_table.h"

#include <utility>

namespace maxc::onnx {

ValueId materialize_known(Graph& graph, const KnownValue& k) {
  if (k.is_static()) return graph.add_constant(k.to_constant());
  // Symbolic elements: shape_to_tensor evaluates the Dims at run time (as int64).
  ValueId v = graph.add_op("shape_to_tensor", {}, Attrs{{"shape", *k.ints}})[0];
  if (k.dtype != DType::kInt64) v = graph.add_op("cast", {v}, {{"dtype", k.dtype}})[0];
  std::vector<Dim> dims(k.shape.begin(), k.shape.end());
  if (k.shape.size() != 1) v = graph.add_op("reshape", {v}, {{"shape", dims}})[0];
  return v;
}

void ValueTable::define(const std::string& name, Operand operand, std::string_view what) {
  if (name.empty()) return;
  if (values_.count(name)) fail(Code::kInvalidArgument, "onnx: ", what, " defines '", name, "', which is already defined");
  values_.emplace(name, std::move(operand));
}

void ValueTable::add_initializer(const std::string& name, Ref<Tensor> data) {
  Operand op;
  std::vector<Dim> dims(data->dims().begin(), data->dims().end());
  op.type = TensorType{data->dtype(), dims, DeviceRef::cpu()};
  op.known = std::make_shared<KnownValue>(KnownValue::from_tensor(data));
  op.is_initializer = true;
  define(name, std::move(op), "an initializer");
  initializers_.emplace(name, std::move(data));
}

Operand* ValueTable::find(std::string_view name) {
  auto it = values_.find(name);
  if (it != values_.end()) return &it->second;
  return enclosing_ ? enclosing_->find(name) : nullptr;
}

const Operand* ValueTable::find(std::string_view name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return &it->second;
  return enclosing_ ? std::as_const(*enclosing_).find(name) : nullptr;
}

bool ValueTable::has(std::string_view name) const { return find(name) != nullptr; }

const Operand& ValueTable::get(const std::string& name, std::string_view user) const {
  const Operand* op = find(name);
  if (!op)
    fail(Code::kInvalidArgument, "onnx: ", user, " uses '", name,
         "', which no graph input, initializer or earlier node defines");
  if (!op->missing.empty()) fail(Code::kUnimplemented, "onnx: ", user, " uses '", name, "': ", op->missing);
  return *op;
}

ValueId ValueTable::value(const std::string& name, std::string_view user) {
  get(name, user);
  Operand& op = *find(name);  // an enclosing scope's operand gets its value once, for every scope
  if (!op.value) {
    if (op.is_initializer) op.value = graph_.add_weight(name, op.type);
    else op.value = materialize_known(graph_, *op.known);
  }
  return *op.value;
}

namespace {

bool declares_weight(const Graph& g, const std::string& name) {
  if (g.weights().count(name)) return true;
  for (const Graph& sub : g.subgraphs())
    if (declares_weight(sub, name)) return true;
  return false;
}

}  // namespace

Operand ValueTable::as_operand(const std::string& name, std::string_view user) {
  Operand op = get(name, user);
  if (op.is_initializer) {
    op.value = value(name, user);
    op.is_initializer = false;
  }
  return op;
}

NamedTensors ValueTable::used_weights() const {
  NamedTensors out;
  for (const auto& [name, data] : initializers_)
    if (declares_weight(graph_, name)) out.emplace_back(name, data);
  return out;
}

}  // namespace maxc::onnx
