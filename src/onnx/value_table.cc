#include "onnx/value_table.h"

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
  if (has(name)) fail(Code::kInvalidArgument, "onnx: ", what, " defines '", name, "', which is already defined");
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

const Operand& ValueTable::get(const std::string& name, std::string_view user) const {
  auto it = values_.find(name);
  if (it == values_.end())
    fail(Code::kInvalidArgument, "onnx: ", user, " uses '", name,
         "', which no graph input, initializer or earlier node defines");
  if (!it->second.missing.empty()) fail(Code::kUnimplemented, "onnx: ", user, " uses '", name, "': ", it->second.missing);
  return it->second;
}

ValueId ValueTable::value(const std::string& name, std::string_view user) {
  get(name, user);
  Operand& op = values_.find(name)->second;
  if (!op.value) {
    if (op.is_initializer) op.value = graph_.add_weight(name, op.type);
    else op.value = materialize_known(graph_, *op.known);
  }
  return *op.value;
}

NamedTensors ValueTable::used_weights() const {
  NamedTensors out;
  for (const auto& [name, data] : initializers_)
    if (graph_.weights().count(name)) out.emplace_back(name, data);
  return out;
}

}  // namespace maxc::onnx
