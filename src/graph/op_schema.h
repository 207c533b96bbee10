// What an op is: its inputs, its attributes and how its output types follow from them.
// One OpSchema per (name, version); the OpRegistry holds them and the ABI exposes exactly
// this (names, arity, attribute names and kinds) for bindings to introspect.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "graph/attrs.h"
#include "graph/constant.h"
#include "graph/type.h"

namespace maxc {

enum class Arity : int32_t {
  kOne = 0,       // exactly one value
  kOptional = 1,  // zero or one value; only at the end
  kVariadic = 2,  // one or more values (concat's inputs); only last
  kAny = 3,       // zero or more values (a cond's operands); only last
};

struct InputSpec {
  std::string name;
  Arity arity = Arity::kOne;
};

enum class AttrPresence : int32_t { kRequired = 0, kOptional = 1, kDefaulted = 2 };

struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  AttrPresence presence = AttrPresence::kRequired;
  std::optional<AttrValue> default_value;  // set exactly when presence == kDefaulted

  static AttrSpec required(std::string name, AttrKind kind) {
    return {std::move(name), kind, AttrPresence::kRequired, std::nullopt};
  }
  // May be left out; infer then sees no attribute of that name.
  static AttrSpec optional(std::string name, AttrKind kind) {
    return {std::move(name), kind, AttrPresence::kOptional, std::nullopt};
  }
  // Left out means `value`, which also gives the kind.
  static AttrSpec with_default(std::string name, AttrValue value) {
    AttrKind kind = attr_kind(value);
    return {std::move(name), kind, AttrPresence::kDefaulted, std::move(value)};
  }
};

struct OpSchema;
class Graph;

// What an op's infer function sees: the input types, the checked attributes (defaults
// filled in) and, for inputs that a `constant` op produced, their data.
class InferContext {
 public:
  InferContext(const OpSchema& schema, std::span<const TensorType> inputs, const Attrs& attrs,
               std::span<const Constant* const> input_constants = {},
               std::span<const Constant> graph_constants = {}, const std::vector<Graph>* subgraphs = nullptr);

  const OpSchema& schema() const { return schema_; }
  size_t num_inputs() const { return inputs_.size(); }
  const TensorType& input(size_t i) const { return inputs_[i]; }
  const Attrs& attrs() const { return attrs_; }
  bool has_attr(std::string_view name) const { return attrs_.has(name); }
  template <typename T>
  const T& attr(std::string_view name) const { return attrs_.get<T>(name, op_label()); }

  // The data behind input i when a `constant` op produced it, else nullptr.
  const Constant* input_constant(size_t i) const;
  // Entry `index` of the graph's constant table (the `constant` op's data), else nullptr.
  const Constant* graph_constant(int64_t index) const;
  // The subgraph that graph attribute `name` refers to (control flow, call); INVALID_ARGUMENT
  // naming the attribute when the graph has no such subgraph.
  const Graph& subgraph(std::string_view name) const;

  std::string op_label() const;                // "op 'add'"
  std::string input_label(size_t i) const;     // "input 1 'rhs'"

  // Throws INVALID_ARGUMENT "op 'add': <parts>".
  template <typename... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    maxc::fail(Code::kInvalidArgument, op_label(), ": ", parts...);
  }

 private:
  const OpSchema& schema_;
  std::span<const TensorType> inputs_;
  const Attrs& attrs_;
  std::span<const Constant* const> input_constants_;
  std::span<const Constant> graph_constants_;
  const std::vector<Graph>* subgraphs_;
};

// Returns the output types; throws (through ctx.fail) on anything it cannot accept.
using InferFn = std::function<std::vector<TensorType>(const InferContext&)>;
// Optional constant folding: called only when every input is a constant; returns the outputs'
// data (their types are `outputs`), or an empty vector to decline.
using FoldFn = std::function<std::vector<Constant>(const InferContext&, const std::vector<TensorType>& outputs)>;

struct OpSchema {
  std::string name;
  int32_t version = 1;
  std::vector<InputSpec> inputs = {};
  std::vector<AttrSpec> attrs = {};
  InferFn infer = {};
  FoldFn fold = {};  // may be empty

  size_t min_inputs() const;
  size_t max_inputs() const;  // SIZE_MAX with a variadic input
  const AttrSpec* find_attr(std::string_view name) const;
  // The schema's input name for input position i (the variadic one repeats).
  const std::string& input_name(size_t i) const;
  std::string label() const;      // "op 'add'", "op 'add' v2" past version 1
  std::string signature() const;  // "add(lhs, rhs)", "concat(values...)", "max(x, y?)"
};

struct InferResult {
  Attrs attrs;  // the caller's attributes plus every default
  std::vector<TensorType> outputs;
};

// The one entry to type an op: checks the input count, that every input is a tensor, and
// the attributes (unknown names, missing required ones, wrong kinds; defaults filled in),
// then runs the schema's infer. Every failure is INVALID_ARGUMENT naming the op.
InferResult infer_op(const OpSchema& schema, std::span<const TensorType> inputs, const Attrs& attrs,
                     std::span<const Constant* const> input_constants = {},
                     std::span<const Constant> graph_constants = {},
                     const std::vector<Graph>* subgraphs = nullptr);

}  // namespace maxc
