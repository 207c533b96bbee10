#include "graph/op_schema.h"

#include <cstdint>

#include "graph/graph.h"

namespace maxc {

// ---- InferContext --------------------------------------------------------------------------

InferContext::InferContext(const OpSchema& schema, std::span<const TensorType> inputs, const Attrs& attrs,
                           std::span<const Constant* const> input_constants,
                           std::span<const Constant> graph_constants, const std::vector<Graph>* subgraphs)
    : schema_(schema),
      inputs_(inputs),
      attrs_(attrs),
      input_constants_(input_constants),
      graph_constants_(graph_constants),
      subgraphs_(subgraphs) {}

const Constant* InferContext::input_constant(size_t i) const {
  return i < input_constants_.size() ? input_constants_[i] : nullptr;
}

const Constant* InferContext::graph_constant(int64_t index) const {
  if (index < 0 || static_cast<uint64_t>(index) >= graph_constants_.size()) return nullptr;
  return &graph_constants_[static_cast<size_t>(index)];
}

const Graph& InferContext::subgraph(std::string_view name) const {
  const int64_t index = attr<GraphRef>(name).index;
  const size_t count = subgraphs_ ? subgraphs_->size() : 0;
  if (index < 0 || static_cast<uint64_t>(index) >= count)
    fail("attribute '", name, "' refers to subgraph ", index, " but the graph has ", count, " subgraphs");
  return (*subgraphs_)[static_cast<size_t>(index)];
}

std::string InferContext::op_label() const { return schema_.label(); }

std::string InferContext::input_label(size_t i) const {
  return str_cat("input ", i, " '", schema_.input_name(i), "'");
}

// ---- OpSchema --------------------------------------------------------------------------------

size_t OpSchema::min_inputs() const {
  size_t n = 0;
  for (const InputSpec& in : inputs) n += in.arity == Arity::kOptional || in.arity == Arity::kAny ? 0 : 1;
  return n;
}

size_t OpSchema::max_inputs() const {
  for (const InputSpec& in : inputs)
    if (in.arity == Arity::kVariadic || in.arity == Arity::kAny) return SIZE_MAX;
  return inputs.size();
}

const AttrSpec* OpSchema::find_attr(std::string_view attr) const {
  for (const AttrSpec& spec : attrs)
    if (spec.name == attr) return &spec;
  return nullptr;
}

const std::string& OpSchema::input_name(size_t i) const {
  static const std::string kNone = "?";
  if (inputs.empty()) return kNone;
  return i < inputs.size() ? inputs[i].name : inputs.back().name;
}

std::string OpSchema::label() const {
  return version == 1 ? str_cat("op '", name, "'") : str_cat("op '", name, "' v", version);
}

std::string OpSchema::signature() const {
  std::string out = name + "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += (i ? ", " : "") + inputs[i].name;
    if (inputs[i].arity == Arity::kOptional) out += "?";
    if (inputs[i].arity == Arity::kVariadic || inputs[i].arity == Arity::kAny) out += "...";
  }
  return out + ")";
}

// ---- infer_op --------------------------------------------------------------------------------

namespace {

void check_arity(const OpSchema& schema, size_t n) {
  if (n >= schema.min_inputs() && n <= schema.max_inputs()) return;
  std::string expected = schema.min_inputs() == schema.max_inputs() ? std::to_string(schema.min_inputs())
                         : schema.max_inputs() == SIZE_MAX ? str_cat("at least ", schema.min_inputs())
                         : str_cat(schema.min_inputs(), " to ", schema.max_inputs());
  fail(Code::kInvalidArgument, schema.label(), ": expected ", expected, " inputs as in ", schema.signature(),
       ", got ", n);
}

std::string known_attr_names(const OpSchema& schema) {
  if (schema.attrs.empty()) return "it takes no attributes";
  std::string out = "known attributes:";
  for (const AttrSpec& spec : schema.attrs) out += " " + spec.name;
  return out;
}

Attrs check_attrs(const OpSchema& schema, const Attrs& given) {
  for (const auto& [name, value] : given) {
    const AttrSpec* spec = schema.find_attr(name);
    if (!spec) fail(Code::kInvalidArgument, schema.label(), ": unknown attribute '", name, "' (", known_attr_names(schema), ")");
    if (attr_kind(value) != spec->kind)
      fail(Code::kInvalidArgument, schema.label(), ": attribute '", name, "' must be ", attr_kind_name(spec->kind),
           ", got ", attr_kind_name(attr_kind(value)), " ", attr_to_string(value));
  }
  Attrs out = given;
  for (const AttrSpec& spec : schema.attrs) {
    if (out.has(spec.name)) continue;
    if (spec.presence == AttrPresence::kRequired)
      fail(Code::kInvalidArgument, schema.label(), ": missing required attribute '", spec.name, "' (",
           attr_kind_name(spec.kind), ")");
    if (spec.presence == AttrPresence::kDefaulted) out.set(spec.name, *spec.default_value);
  }
  return out;
}

}  // namespace

InferResult infer_op(const OpSchema& schema, std::span<const TensorType> inputs, const Attrs& attrs,
                     std::span<const Constant* const> input_constants, std::span<const Constant> graph_constants,
                     const std::vector<Graph>* subgraphs) {
  check_arity(schema, inputs.size());
  InferResult result{check_attrs(schema, attrs), {}};
  InferContext ctx(schema, inputs, result.attrs, input_constants, graph_constants, subgraphs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_buffer)
      ctx.fail(ctx.input_label(i), " is a buffer (", inputs[i].to_string(), "); this op takes tensors");
  }
  try {
    result.outputs = schema.infer(ctx);
  } catch (const Error& e) {
    // Errors from shared code (Dim arithmetic overflow, say) don't know which op asked.
    std::string label = schema.label();
    if (std::string_view(e.what()).starts_with(label)) throw;
    throw Error(e.code(), str_cat(label, ": ", e.what()));
  }
  return result;
}

}  // namespace maxc
