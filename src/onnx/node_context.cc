#include "onnx/node_context.h"

#include <cmath>
#include <set>

#include "onnx/value_table.h"

namespace maxc::onnx {

NodeContext::NodeContext(const NodeProto& node, size_t index, int64_t opset, ValueTable& values, Graph& graph)
    : node_(node), index_(index), opset_(opset), values_(values), graph_(graph) {}

std::string NodeContext::label() const {
  std::string s = "node " + std::to_string(index_);
  if (!node_.name.empty()) s += " '" + node_.name + "'";
  return s + " (" + node_.op_type + ")";
}

const std::string& NodeContext::input_name(size_t i) const {
  if (!has_input(i)) invalid("input ", i, " is required but missing");
  return node_.inputs[i];
}

const Operand& NodeContext::operand(size_t i) { return values_.get(input_name(i), label()); }

ValueId NodeContext::input(size_t i) { return values_.value(input_name(i), label()); }

const TensorType& NodeContext::type(size_t i) { return operand(i).type; }

const KnownValue* NodeContext::known(size_t i) {
  if (!has_input(i)) return nullptr;
  return operand(i).known.get();
}

void NodeContext::throw_needs_known(std::initializer_list<size_t> inputs, std::string message) {
  std::set<std::string> from;
  for (size_t i : inputs)
    if (has_input(i)) from.insert(operand(i).from_inputs.begin(), operand(i).from_inputs.end());
  if (from.empty()) throw Error(Code::kUnimplemented, std::move(message));
  throw InputValuesNeeded(std::move(message), {from.begin(), from.end()});
}

std::vector<std::string> NodeContext::outputs_from_inputs() {
  if (node_.op_type == "Shape" || node_.op_type == "Size") return {};
  std::set<std::string> from;
  for (size_t i = 0; i < num_inputs(); ++i)
    if (has_input(i)) from.insert(operand(i).from_inputs.begin(), operand(i).from_inputs.end());
  return {from.begin(), from.end()};
}

std::vector<Dim> NodeContext::known_dims(size_t i, std::string_view what) {
  const KnownValue* k = known(i);
  if (!k || !k->ints)
    needs_known({i}, "input ", i, " '", what, "' must be known when the model is imported (an initializer, a Constant "
                "or computed from shapes); it is computed at run time");
  return *k->ints;
}

std::vector<int64_t> NodeContext::known_ints(size_t i, std::string_view what) {
  std::vector<Dim> dims = known_dims(i, what);
  std::vector<int64_t> out;
  for (const Dim& d : dims) {
    if (!d.is_static()) unsupported("input ", i, " '", what, "' holds the symbolic value ", d, "; it must be static");
    out.push_back(d.static_value());
  }
  return out;
}

int64_t NodeContext::known_int(size_t i, std::string_view what) {
  std::vector<int64_t> v = known_ints(i, what);
  if (v.size() != 1) invalid("input ", i, " '", what, "' must hold one value, got ", v.size());
  return v[0];
}

double NodeContext::known_scalar(size_t i, std::string_view what) {
  const KnownValue* k = known(i);
  std::optional<std::vector<double>> v = k ? k->doubles() : std::nullopt;
  if (!v) needs_known({i}, "input ", i, " '", what, "' must be a constant known when the model is imported");
  if (v->size() != 1) invalid("input ", i, " '", what, "' must hold one value, got ", v->size());
  return (*v)[0];
}

int64_t NodeContext::attr_int(std::string_view name, int64_t def) const {
  const AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type != AttrType::kInt) invalid("attribute '", name, "' must be an int");
  return a->i;
}

float NodeContext::attr_float(std::string_view name, float def) const {
  const AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type == AttrType::kInt) return static_cast<float>(a->i);
  if (a->type != AttrType::kFloat) invalid("attribute '", name, "' must be a float");
  return a->f;
}

std::string NodeContext::attr_string(std::string_view name, std::string def) const {
  const AttributeProto* a = attr(name);
  if (!a) return def;
  if (a->type != AttrType::kString) invalid("attribute '", name, "' must be a string");
  return a->s;
}

std::optional<std::vector<int64_t>> NodeContext::attr_ints(std::string_view name) const {
  const AttributeProto* a = attr(name);
  if (!a) return std::nullopt;
  if (a->type != AttrType::kInts) invalid("attribute '", name, "' must be a list of ints");
  return a->ints;
}

std::optional<std::vector<float>> NodeContext::attr_floats(std::string_view name) const {
  const AttributeProto* a = attr(name);
  if (!a) return std::nullopt;
  if (a->type != AttrType::kFloats) invalid("attribute '", name, "' must be a list of floats");
  return a->floats;
}

std::vector<int64_t> NodeContext::required_attr_ints(std::string_view name) const {
  std::optional<std::vector<int64_t>> v = attr_ints(name);
  if (!v) invalid("attribute '", name, "' is required at opset ", opset_);
  return *v;
}

void NodeContext::set_output(size_t i, ValueId v) {
  if (!wants_output(i)) return;
  Operand op;
  op.value = v;
  op.type = graph_.type(v);
  op.from_inputs = outputs_from_inputs();
  values_.define(node_.outputs[i], std::move(op), label());
}

void NodeContext::set_known_output(size_t i, KnownValue k) {
  if (!wants_output(i)) return;
  Operand op;
  std::vector<Dim> dims(k.shape.begin(), k.shape.end());
  op.type = TensorType{k.dtype, dims, DeviceRef::cpu()};
  op.known = std::make_shared<KnownValue>(std::move(k));
  values_.define(node_.outputs[i], std::move(op), label());
}

void NodeContext::set_output_from(size_t i, Operand op) {
  if (!wants_output(i)) return;
  values_.define(node_.outputs[i], std::move(op), label());
}

std::vector<ValueId> NodeContext::ops(std::string_view name, std::vector<ValueId> inputs, const Attrs& attrs) {
  return graph_.add_op(name, 0, inputs, attrs);
}

ValueId NodeContext::op(std::string_view name, std::vector<ValueId> inputs, const Attrs& attrs) {
  return ops(name, std::move(inputs), attrs)[0];
}

ValueId NodeContext::constant(const KnownValue& k) { return materialize_known(graph_, k); }

ValueId NodeContext::scalar(DType dtype, double v) {
  if (dtype_is_float(dtype) && dtype != DType::kFloat32 && dtype != DType::kFloat64)
    return cast(constant(KnownValue::from_doubles(DType::kFloat32, {}, {v})), dtype);
  return constant(KnownValue::from_doubles(dtype, {}, {v}));
}

ValueId NodeContext::cast(ValueId v, DType dtype) {
  if (graph_.type(v).dtype == dtype) return v;
  return op("cast", {v}, {{"dtype", dtype}});
}

ValueId NodeContext::reshape(ValueId v, std::vector<Dim> dims) {
  if (graph_.type(v).dims == dims) return v;
  return op("reshape", {v}, {{"shape", std::move(dims)}});
}

int64_t NodeContext::axis(int64_t a, int64_t rank, std::string_view what) const {
  if (a < -rank || a >= rank) invalid(what, " ", a, " is out of range for rank ", rank);
  return a < 0 ? a + rank : a;
}

}  // namespace maxc::onnx
