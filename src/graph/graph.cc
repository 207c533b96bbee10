#include "graph/graph.h"

#include <algorithm>
#include <ostream>
#include <set>

namespace maxc {

namespace {

// Room for `extra` more elements, grown geometrically: an exact reserve on every append
// reallocates every time, which made building a graph of n ops O(n^2) (an unrolled GRU of 4096
// steps took 20 s to import).
template <class T>
void reserve_more(std::vector<T>& v, size_t extra) {
  if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
}

}  // namespace

struct Graph::Prepared {
  InferResult result;
  std::string weight;  // the name, for a constant_external op
};

// ---- building --------------------------------------------------------------------------------

ValueId Graph::add_input(std::string name, TensorType type) {
  if (name.empty()) fail(Code::kInvalidArgument, "graph '", name_, "': input ", inputs_.size(), " has an empty name");
  for (const NamedValue& in : inputs_)
    if (in.name == name) fail(Code::kAlreadyExists, "graph '", name_, "' already has an input named '", name, "'");
  type.validate(str_cat("graph '", name_, "': input '", name, "'"));
  if (values_.size() >= UINT32_MAX) fail(Code::kResourceExhausted, "graph '", name_, "' has too many values");
  auto id = static_cast<ValueId>(values_.size());
  reserve_more(inputs_, 1);  // so that the second push_back cannot throw
  values_.push_back(Value{std::move(type), -1, static_cast<uint32_t>(inputs_.size())});
  inputs_.push_back(NamedValue{std::move(name), id});
  return id;
}

std::vector<ValueId> Graph::add_op(std::string_view op, int32_t version, std::span<const ValueId> inputs,
                                   const Attrs& attrs) {
  const OpSchema& schema = registry_->get(op, version);
  Prepared prepared = prepare_op(schema, inputs, attrs);
  if (!prepared.weight.empty()) {
    if (auto it = weights_.find(prepared.weight); it != weights_.end()) {
      const TensorType& declared = type(it->second);
      if (declared == prepared.result.outputs[0]) return {it->second};
      fail(Code::kInvalidArgument, schema.label(), ": weight '", prepared.weight, "' is already declared as ",
           declared, "; it cannot also be ", prepared.result.outputs[0]);
    }
  }
  return append(schema, inputs, std::move(prepared));
}

std::vector<TensorType> Graph::infer_op_types(std::string_view op, int32_t version,
                                              std::span<const ValueId> inputs, const Attrs& attrs) const {
  return prepare_op(registry_->get(op, version), inputs, attrs).result.outputs;
}

ValueId Graph::add_constant(Constant constant) {
  constant.validate(str_cat("graph '", name_, "': constant ", constants_.size()));
  auto index = static_cast<int64_t>(constants_.size());
  constants_.push_back(std::move(constant));
  try {
    ValueId id = add_op("constant", {}, Attrs{{"index", index}})[0];
    return id;
  } catch (...) {
    constants_.pop_back();
    throw;
  }
}

ValueId Graph::add_weight(std::string name, TensorType type) {
  return add_op("constant_external", {},
                Attrs{{"name", std::move(name)}, {"dtype", type.dtype}, {"shape", type.dims}, {"device", type.device}})[0];
}

void Graph::place_on(DeviceRef device) {
  check_on_host();
  move_to(device);
}

void Graph::check_on_host() const {
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].type.device != DeviceRef::cpu())
      fail(Code::kFailedPrecondition, "graph '", name_, "': value ", v, " is already placed on ",
           values_[v].type.device.to_string(), "; only a graph wholly on the host can be moved");
  for (const Graph& sub : subgraphs_) sub.check_on_host();
}

void Graph::move_to(DeviceRef device) {
  for (Graph& sub : subgraphs_) sub.move_to(device);
  for (Value& v : values_) v.type.device = device;
  for (Constant& c : constants_) c.type.device = device;
  for (Op& op : ops_)
    for (const auto& [name, value] : Attrs(op.attrs))
      if (std::holds_alternative<DeviceRef>(value)) op.attrs.set(name, device);
}

void Graph::set_outputs(std::vector<NamedValue> outputs) {
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    NamedValue& out = outputs[i];
    if (out.name.empty()) out.name = "output" + std::to_string(i);
    value(out.value);  // throws for a value this graph does not have
    if (!names.insert(out.name).second)
      fail(Code::kInvalidArgument, "graph '", name_, "': two outputs are named '", out.name, "'");
  }
  outputs_ = std::move(outputs);
}

int64_t Graph::add_subgraph(Graph subgraph) {
  subgraphs_.push_back(std::move(subgraph));
  return static_cast<int64_t>(subgraphs_.size()) - 1;
}

// Types the op against this graph without changing it.
Graph::Prepared Graph::prepare_op(const OpSchema& schema, std::span<const ValueId> inputs, const Attrs& attrs) const {
  std::vector<TensorType> types;
  std::vector<const Constant*> constants;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] >= values_.size())
      fail(Code::kInvalidArgument, schema.label(), ": input ", i, " '", schema.input_name(i), "' is value %",
           inputs[i], ", which graph '", name_, "' does not have (it has ", values_.size(), " values)");
    const Value& v = values_[inputs[i]];
    types.push_back(v.type);
    // An input that a `constant` op made: infer may read its data (range does).
    const Op* producer = v.op >= 0 ? &ops_[static_cast<size_t>(v.op)] : nullptr;
    bool is_constant = producer && producer->schema->name == "constant";
    constants.push_back(is_constant ? &constants_.at(static_cast<size_t>(producer->attrs.get<int64_t>("index"))) : nullptr);
  }
  Prepared p{infer_op(schema, types, attrs, constants, constants_, &subgraphs_), ""};
  check_against_graph(schema, p.result.attrs);
  for (size_t i = 0; i < p.result.outputs.size(); ++i)
    p.result.outputs[i].validate(str_cat(schema.label(), ": inferred output ", i));
  if (schema.name == "constant_external") p.weight = p.result.attrs.get<std::string>("name");
  return p;
}

// What the op's schema cannot see: references to this graph's subgraphs.
void Graph::check_against_graph(const OpSchema& schema, const Attrs& attrs) const {
  for (const auto& [name, value] : attrs) {
    const GraphRef* ref = std::get_if<GraphRef>(&value);
    if (ref && (ref->index < 0 || static_cast<uint64_t>(ref->index) >= subgraphs_.size()))
      fail(Code::kInvalidArgument, schema.label(), ": attribute '", name, "' refers to subgraph ", ref->index,
           " but graph '", name_, "' has ", subgraphs_.size(), " subgraphs");
  }
}

// Everything that can throw happens before the first change, so a failure leaves the graph as
// it was: the op is built and the vectors have room before anything is appended.
std::vector<ValueId> Graph::append(const OpSchema& schema, std::span<const ValueId> inputs, Prepared prepared) {
  std::vector<TensorType>& types = prepared.result.outputs;
  if (values_.size() + types.size() > UINT32_MAX)
    fail(Code::kResourceExhausted, "graph '", name_, "' has too many values");
  Op op{&schema, std::vector<ValueId>(inputs.begin(), inputs.end()), std::move(prepared.result.attrs), {}};
  for (size_t i = 0; i < types.size(); ++i) op.outputs.push_back(static_cast<ValueId>(values_.size() + i));
  std::vector<ValueId> result = op.outputs;
  reserve_more(values_, types.size());
  reserve_more(ops_, 1);
  if (!prepared.weight.empty()) weights_.emplace(prepared.weight, op.outputs[0]);

  auto op_index = static_cast<int64_t>(ops_.size());
  for (size_t i = 0; i < types.size(); ++i) values_.push_back(Value{std::move(types[i]), op_index, static_cast<uint32_t>(i)});
  ops_.push_back(std::move(op));
  return result;
}

// ---- reading ---------------------------------------------------------------------------------

const Value& Graph::value(ValueId id) const {
  if (id >= values_.size())
    fail(Code::kInvalidArgument, "graph '", name_, "' has no value %", id, " (it has ", values_.size(), " values)");
  return values_[id];
}

// ---- verify ----------------------------------------------------------------------------------

// Checks op k; every message is prefixed by the op's index by the caller.
void Graph::verify_op(size_t k, std::vector<bool>& defined, std::map<std::string, ValueId, std::less<>>& weights) const {
  const Op& op = ops_[k];
  if (!op.schema || registry_->find(op.schema->name, op.schema->version) != op.schema)
    fail(Code::kInvalidArgument, "its schema is not in the op registry");
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i] >= values_.size() || !defined[op.inputs[i]])
      fail(Code::kInvalidArgument, op.schema->label(), ": input ", i, " is %", op.inputs[i],
           ", which is not defined before it");
  }
  Prepared p = prepare_op(*op.schema, op.inputs, op.attrs);
  if (!(p.result.attrs == op.attrs))
    fail(Code::kInvalidArgument, op.schema->label(), ": attributes ", op.attrs.to_string(),
         " are incomplete (expected ", p.result.attrs.to_string(), ")");
  if (p.result.outputs.size() != op.outputs.size())
    fail(Code::kInvalidArgument, op.schema->label(), ": has ", op.outputs.size(), " outputs, infers ",
         p.result.outputs.size());
  for (size_t j = 0; j < op.outputs.size(); ++j) {
    ValueId id = op.outputs[j];
    if (id >= values_.size() || defined[id] || values_[id].op != static_cast<int64_t>(k) || values_[id].index != j)
      fail(Code::kInvalidArgument, op.schema->label(), ": output ", j, " (%", id, ") is not its own value");
    if (!(values_[id].type == p.result.outputs[j]))
      fail(Code::kInvalidArgument, op.schema->label(), ": output ", j, " is recorded as ", values_[id].type,
           " but infers as ", p.result.outputs[j]);
    defined[id] = true;
  }
  if (!p.weight.empty() && !weights.emplace(p.weight, op.outputs[0]).second)
    fail(Code::kInvalidArgument, "weight '", p.weight, "' is declared by two ops");
}

void Graph::verify() const {
  try {
    std::vector<bool> defined(values_.size(), false);
    std::set<std::string, std::less<>> names;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      ValueId id = inputs_[i].value;
      if (inputs_[i].name.empty() || !names.insert(inputs_[i].name).second)
        fail(Code::kInvalidArgument, "input ", i, " has an empty or repeated name '", inputs_[i].name, "'");
      if (id >= values_.size() || values_[id].op != -1 || values_[id].index != i)
        fail(Code::kInvalidArgument, "input ", i, " '", inputs_[i].name, "' is not its own value");
      values_[id].type.validate(str_cat("input '", inputs_[i].name, "'"));
      defined[id] = true;
    }
    std::map<std::string, ValueId, std::less<>> weights;
    for (size_t k = 0; k < ops_.size(); ++k) {
      try {
        verify_op(k, defined, weights);
      } catch (const Error& e) {
        fail(e.code(), "op ", k, ": ", e.what());
      }
    }
    for (size_t i = 0; i < values_.size(); ++i)
      if (!defined[i]) fail(Code::kInvalidArgument, "value %", i, " has no producer");
    if (weights != weights_) fail(Code::kInvalidArgument, "the weight table does not match the constant_external ops");
    for (size_t i = 0; i < constants_.size(); ++i) constants_[i].validate(str_cat("constant ", i));
    names.clear();
    for (const NamedValue& out : outputs_) {
      if (out.value >= values_.size()) fail(Code::kInvalidArgument, "output '", out.name, "' is %", out.value, ", not a value");
      if (out.name.empty() || !names.insert(out.name).second)
        fail(Code::kInvalidArgument, "output name '", out.name, "' is empty or repeated");
    }
    for (size_t i = 0; i < subgraphs_.size(); ++i) {
      try {
        subgraphs_[i].verify();
      } catch (const Error& e) {
        fail(e.code(), "subgraph ", i, ": ", e.what());
      }
    }
  } catch (const Error& e) {
    throw Error(e.code(), str_cat("graph '", name_, "': ", e.what()));
  }
}

// ---- printing --------------------------------------------------------------------------------

std::string Graph::to_string() const {
  std::string out = "graph " + name_ + "(";
  for (size_t i = 0; i < inputs_.size(); ++i)
    out += str_cat(i ? ", " : "", "%", inputs_[i].value, " ", inputs_[i].name, ": ", type(inputs_[i].value));
  out += ") {\n";
  for (const Op& op : ops_) {
    std::string results, types, args;
    for (size_t j = 0; j < op.outputs.size(); ++j) {
      results += str_cat(j ? ", " : "", "%", op.outputs[j]);
      types += str_cat(j ? ", " : "", type(op.outputs[j]));
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) args += str_cat(i ? ", " : "", "%", op.inputs[i]);
    std::string attrs = op.attrs.size() ? " " + op.attrs.to_string() : "";
    out += str_cat("  ", results, " = ", op.schema->name, "(", args, ")", attrs, " : ", types, "\n");
  }
  out += "  output(";
  for (size_t i = 0; i < outputs_.size(); ++i) out += str_cat(i ? ", " : "", outputs_[i].name, " = %", outputs_[i].value);
  out += ")\n}\n";
  for (size_t i = 0; i < subgraphs_.size(); ++i) out += str_cat("subgraph ", i, ": ", subgraphs_[i].to_string());
  return out;
}

std::ostream& operator<<(std::ostream& out, const Graph& g) { return out << g.to_string(); }

}  // namespace maxc
