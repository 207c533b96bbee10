// What an operator's import function sees: its node's inputs (as graph values, types and
// known values), attributes with ONNX defaults, the opset, and helpers that add our ops.
// Every failure names the node: UNIMPLEMENTED for what we cannot express, INVALID_ARGUMENT
// for what ONNX itself forbids, RESOURCE_EXHAUSTED for sizes past size_limits.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/str_cat.h"
#include "graph/graph.h"
#include "onnx/input_values_needed.h"
#include "onnx/known_value.h"
#include "onnx/model_proto.h"

namespace maxc::onnx {

// One ONNX value as the importer tracks it. A graph value is made on first use: an
// initializer then becomes a weight, a known value a constant.
struct Operand {
  std::optional<ValueId> value;
  TensorType type;
  std::shared_ptr<const KnownValue> known;
  bool is_initializer = false;
  std::string missing;  // set for an output we did not produce: why
  // The graph inputs whose values (not only shapes) this one is computed from: what the
  // model must be specialized on when this value is needed at import (InputValuesNeeded).
  std::vector<std::string> from_inputs;
};

class ValueTable;

class NodeContext {
 public:
  NodeContext(const NodeProto& node, size_t index, int64_t opset, ValueTable& values, Graph& graph);

  const NodeProto& node() const { return node_; }
  size_t index() const { return index_; }
  int64_t opset() const { return opset_; }
  Graph& graph() { return graph_; }
  // The names in scope: what a subgraph of this node resolves its outer names against.
  ValueTable& values() { return values_; }

  // ---- inputs (an empty name is an omitted optional input) ----
  size_t num_inputs() const { return node_.inputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  ValueId input(size_t i);                  // INVALID_ARGUMENT when missing
  const TensorType& type(size_t i);
  int64_t rank(size_t i) { return type(i).rank(); }
  DType dtype(size_t i) { return type(i).dtype; }
  const KnownValue* known(size_t i);        // nullptr unless known at import time
  // A known input's elements; UNIMPLEMENTED when not known. `what` names it ("shape").
  std::vector<Dim> known_dims(size_t i, std::string_view what);
  std::vector<int64_t> known_ints(size_t i, std::string_view what);
  // A known input of one integer element, exactly (no round trip through a double).
  int64_t known_int(size_t i, std::string_view what);
  double known_scalar(size_t i, std::string_view what);

  // ---- attributes ----
  const AttributeProto* attr(std::string_view name) const { return node_.attr(name); }
  int64_t attr_int(std::string_view name, int64_t def) const;
  float attr_float(std::string_view name, float def) const;
  std::string attr_string(std::string_view name, std::string def) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  // An attribute the node must have (older opsets' form of what is now an input):
  // INVALID_ARGUMENT naming it when absent.
  std::vector<int64_t> required_attr_ints(std::string_view name) const;

  // ---- outputs ----
  size_t num_outputs() const { return node_.outputs.size(); }
  bool wants_output(size_t i) const { return i < node_.outputs.size() && !node_.outputs[i].empty(); }
  void set_output(size_t i, ValueId v);
  void set_known_output(size_t i, KnownValue k);
  // Output i is `op`, an operand of this graph (a subgraph's output inlined here, from
  // ValueTable::as_operand): known stays known.
  void set_output_from(size_t i, Operand op);

  // ---- building ----
  ValueId op(std::string_view name, std::vector<ValueId> inputs, const Attrs& attrs = {});
  std::vector<ValueId> ops(std::string_view name, std::vector<ValueId> inputs, const Attrs& attrs = {});
  ValueId constant(const KnownValue& k);
  ValueId scalar(DType dtype, double v);  // a rank-0 constant
  ValueId cast(ValueId v, DType dtype);   // no op when already dtype
  ValueId reshape(ValueId v, std::vector<Dim> dims);
  // A copy: adding an op may move the graph's types, so a reference kept across c.op()
  // would dangle.
  TensorType type_of(ValueId v) const { return graph_.type(v); }

  // Normalizes an ONNX axis (negative counts from the end) against `rank`.
  int64_t axis(int64_t a, int64_t rank, std::string_view what = "axis") const;

  std::string label() const;  // "node 3 'conv1' (Conv)"
  template <typename... Parts>
  [[noreturn]] void unsupported(const Parts&... parts) const {
    fail(Code::kUnimplemented, "onnx: ", label(), ": ", parts...);
  }
  template <typename... Parts>
  [[noreturn]] void invalid(const Parts&... parts) const {
    fail(Code::kInvalidArgument, "onnx: ", label(), ": ", parts...);
  }
  // What the node asks for is more than the importer builds (size_limits.h).
  template <typename... Parts>
  [[noreturn]] void exhausted(const Parts&... parts) const {
    fail(Code::kResourceExhausted, "onnx: ", label(), ": ", parts...);
  }
  // The values of `inputs` are needed now but are computed at run time: InputValuesNeeded
  // naming the graph inputs they come from, or plain UNIMPLEMENTED when they come from none.
  template <typename... Parts>
  [[noreturn]] void needs_known(std::initializer_list<size_t> inputs, const Parts&... parts) {
    throw_needs_known(inputs, str_cat("onnx: ", label(), ": ", parts...));
  }

 private:
  const std::string& input_name(size_t i) const;
  const Operand& operand(size_t i);
  [[noreturn]] void throw_needs_known(std::initializer_list<size_t> inputs, std::string message);
  // The graph inputs the node's outputs are computed from (none for Shape and Size).
  std::vector<std::string> outputs_from_inputs();

  const NodeProto& node_;
  size_t index_;
  int64_t opset_;
  ValueTable& values_;
  Graph& graph_;
};

// Compositions shared by several families.
ValueId softmax_in_type(NodeContext& c, ValueId x, int64_t axis);  // ops_nn.cc
// Conv of NCHW x by an FCRS filter under the node's Conv attributes (Conv, ConvInteger, QLinearConv).
ValueId conv_from_attrs(NodeContext& c, ValueId x, ValueId filter, std::optional<ValueId> bias);  // ops_nn.cc
// int64 [0, n); n may be symbolic (then a range read from the shape at run time).
ValueId arange(NodeContext& c, const Dim& n);  // ops_scan_scatter.cc
// along(axis) for the axis that input 1 names, known at import or only at run time (then
// the scan along every axis of input 0, the named one picked by where).
ValueId scan_along_named_axis(NodeContext& c, const std::function<ValueId(size_t axis)>& along);  // ops_scan_scatter.cc

using ImportFn = std::function<void(NodeContext&)>;
using ImportTable = std::map<std::string, ImportFn, std::less<>>;

// One registration function per family (ops_*.cc).
void register_elementwise_importers(ImportTable& t);
void register_math_importers(ImportTable& t);
void register_nn_importers(ImportTable& t);
void register_reduce_importers(ImportTable& t);
void register_shape_importers(ImportTable& t);
void register_indexing_importers(ImportTable& t);
void register_constant_importers(ImportTable& t);
void register_attention_importers(ImportTable& t);
void register_recurrent_importers(ImportTable& t);
void register_conv_transpose_importers(ImportTable& t);
void register_signal_importers(ImportTable& t);
void register_loss_importers(ImportTable& t);
void register_einsum_importers(ImportTable& t);
void register_resize_importers(ImportTable& t);
void register_quantize_importers(ImportTable& t);
void register_normalization_importers(ImportTable& t);
void register_bitwise_importers(ImportTable& t);
void register_sequence_mixer_importers(ImportTable& t);
void register_scan_scatter_importers(ImportTable& t);
void register_sampling_importers(ImportTable& t);
void register_training_importers(ImportTable& t);  // ai.onnx.preview.training
void register_ml_importers(ImportTable& t);        // ai.onnx.ml
void register_determinant_importers(ImportTable& t);
void register_deform_conv_importers(ImportTable& t);
void register_if_importers(ImportTable& t);
void register_loop_importers(ImportTable& t);
void register_scan_importers(ImportTable& t);
void register_data_dependent_importers(ImportTable& t);  // NonZero, Compress
void register_unique_importers(ImportTable& t);
void register_nms_importers(ImportTable& t);  // NonMaxSuppression
void register_tfidf_importers(ImportTable& t);  // TfIdfVectorizer
void register_optional_importers(ImportTable& t);  // Optional* over tensors

const ImportTable& import_table();

}  // namespace maxc::onnx
