#include "onnx/importer.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "driver/storage.h"
#include "onnx/dtypes.h"
#include "onnx/import_nodes.h"
#include "onnx/model_proto.h"
#include "onnx/node_context.h"
#include "onnx/tensor_data.h"
#include "onnx/value_table.h"
#include "weights/mapped_file.h"

namespace maxc::onnx {
namespace {

int64_t default_opset(const ModelProto& m) {
  int64_t opset = 0;
  for (const OpsetId& id : m.opset_import)
    if (is_default_domain(id.domain)) opset = id.version;
  if (opset != 0 && opset < kMinOpset)
    fail(Code::kUnimplemented, "onnx: the model uses opset ", opset, " of the default domain; max_c imports opset ",
         kMinOpset, " and newer (convert it with onnx.version_converter)");
  return opset;
}

}  // namespace

int64_t oldest_mapped_opset(std::string_view op_type) {
  // Resize-10 had no coordinate transformation modes (it behaved as Upsample).
  return op_type == "Resize" ? 11 : kMinOpset;
}

namespace {

// A C identifier for a dim_param ("batch size" -> "batch_size"), as our symbols must be.
std::string symbol_for(const std::string& param) {
  std::string s;
  for (char c : param) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

class GraphImporter {
 public:
  GraphImporter(const ModelProto& model, const std::string& base_dir, std::shared_ptr<const MappedFile> file,
                const NamedTensors& input_values, bool bind_dims = false)
      : model_(model),
        base_dir_(base_dir),
        file_(std::move(file)),
        input_values_(input_values),
        graph_("main"),
        values_(graph_) {
    values_.set_binds_dims(bind_dims);
  }

  ImportedModel run() {
    const GraphProto& g = model_.graph;
    if (g.sparse_initializer_count)
      fail(Code::kUnimplemented, "onnx: the graph has ", g.sparse_initializer_count,
           " sparse initializers, which max_c does not support");
    if (model_.function_count)
      fail(Code::kUnimplemented, "onnx: the model defines ", model_.function_count,
           " local functions, which max_c does not support");
    opset_ = default_opset(model_);
    add_initializers();
    for (const ValueInfoProto& in : graph_inputs()) add_input(in);
    check_input_values_named();
    import_nodes(g.nodes, opset_, values_, graph_);
    set_outputs();
    NamedTensors weights = values_.used_weights();  // before graph_ moves out
    return ImportedModel{std::move(graph_), std::move(weights)};
  }

  OnnxSignature signature() {
    OnnxSignature sig;
    for (const TensorProto& t : model_.graph.initializers)
      sig.initializers.emplace_back(t.name, tensor_from_proto(t, "initializer '" + t.name + "'", base_dir_, file_));
    for (const ValueInfoProto& in : graph_inputs()) sig.inputs.emplace_back(in.name, input_type(in));
    for (const ValueInfoProto& out : model_.graph.outputs)
      sig.outputs.emplace_back(out.name, declared_type(out, "graph output '" + out.name + "'"));
    return sig;
  }

 private:
  void add_initializers() {
    for (const TensorProto& t : model_.graph.initializers) {
      if (t.name.empty()) fail(Code::kInvalidArgument, "onnx: an initializer has no name (at byte ", t.offset, ")");
      Ref<Tensor> data = tensor_from_proto(t, "initializer '" + t.name + "'", base_dir_, file_);
      values_.add_initializer(t.name, std::move(data));
    }
  }

  // The graph's inputs that are not initializers (old exporters list those as inputs too).
  std::vector<ValueInfoProto> graph_inputs() const {
    std::set<std::string> initializers;
    for (const TensorProto& t : model_.graph.initializers) initializers.insert(t.name);
    std::vector<ValueInfoProto> inputs;
    for (const ValueInfoProto& in : model_.graph.inputs)
      if (!initializers.count(in.name)) inputs.push_back(in);
    return inputs;
  }

  void check_input_values_named() const {
    for (const auto& [name, value] : input_values_)
      if (!values_.has(name) || values_.get(name, "input_values").is_initializer)
        fail(Code::kInvalidArgument, "onnx: a value is given for '", name, "', which is not a graph input");
  }

  // A declared dim: its value, its dim_param's symbol, or, for a dim the exporter left open
  // (no value and no name, a negative value such as -1, or a name with no letter or digit
  // such as "?", which exporters write for "unknown" and which names no dim shared with
  // another), a symbol of its own named after the input and axis. Two "?" dims of one input
  // differ at run time (ONNX Runtime accepts any sizes there), so they must not share a symbol.
  Dim dim_of(const DimProto& d, const std::string& input, size_t axis) {
    if (d.value && *d.value >= 0) return Dim(*d.value);
    if (!d.value && names_a_dim(d.param)) return Dim(std::string_view(symbol_for(d.param)));
    return Dim(std::string_view(symbol_for(input + "_dim" + std::to_string(axis))));
  }

  static bool names_a_dim(const std::string& param) {
    return std::any_of(param.begin(), param.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  }

  // The tensor type `v` declares (no dims when it declares no shape).
  TensorType declared_type(const ValueInfoProto& v, const std::string& what) {
    if (!v.has_tensor_type)
      fail(Code::kUnimplemented, "onnx: ", what, v.has_other_type ? " is not a tensor" : " has no type",
           "; max_c imports tensor inputs only");
    TensorType type{to_dtype(v.elem_type, what), {}, DeviceRef::cpu()};
    for (size_t i = 0; i < v.dims.size(); ++i) type.dims.push_back(dim_of(v.dims[i], v.name, i));
    return type;
  }

  TensorType input_type(const ValueInfoProto& in) {
    const std::string what = "graph input '" + in.name + "'";
    if (in.has_tensor_type && !in.has_shape)
      fail(Code::kUnimplemented, "onnx: ", what, " has no shape (unknown rank), which max_c does not support");
    return declared_type(in, what);
  }

  // A graph input: a value of the graph, or, when its value is given, a known value.
  void add_input(const ValueInfoProto& in) {
    const std::string what = "graph input '" + in.name + "'";
    const TensorType type = input_type(in);
    Operand op;
    for (const auto& [name, value] : input_values_)
      if (name == in.name) {
        bind_value(op, type, *value, what);
        return values_.define(in.name, std::move(op), what);
      }
    op.type = type;
    op.value = graph_.add_input(in.name, type);
    op.from_inputs = {in.name};
    values_.define(in.name, std::move(op), what);
  }

  void bind_value(Operand& op, const TensorType& declared, const Tensor& value, const std::string& what) {
    bool fits = value.dtype() == declared.dtype && value.dims().size() == declared.dims.size();
    for (size_t i = 0; fits && i < declared.dims.size(); ++i)
      fits = !declared.dims[i].is_static() || declared.dims[i].static_value() == value.dims()[i];
    if (!fits)
      fail(Code::kInvalidArgument, "onnx: the value given for ", what, " is ", dtype_name(value.dtype()),
           dims_to_string(value.dims()), " but the model declares ", declared);
    Ref<Tensor> host = value.copy(Device::cpu());
    op.type = TensorType{host->dtype(), {host->dims().begin(), host->dims().end()}, DeviceRef::cpu()};
    op.known = std::make_shared<KnownValue>(KnownValue::from_tensor(host));
  }

  void set_outputs() {
    std::vector<NamedValue> outs;
    for (const ValueInfoProto& o : model_.graph.outputs) outs.push_back({o.name, values_.value(o.name, "graph output")});
    graph_.set_outputs(std::move(outs));
  }

  const ModelProto& model_;
  std::string base_dir_;
  std::shared_ptr<const MappedFile> file_;  // the mapping model_ points into (import_onnx_file)
  const NamedTensors& input_values_;
  int64_t opset_ = 0;
  Graph graph_;
  ValueTable values_;
};

ModelProto decode_checked(std::span<const uint8_t> bytes) {
  ModelProto model = decode_model(bytes);
  if (!model.has_graph) fail(Code::kDataLoss, "onnx: the file has no graph (not an ONNX model?)");
  return model;
}

// The file mapped, not read: the initializers' raw_data is most of the file, and the aligned
// ones become views of the mapping instead of copies (a BERT-base file is 440 MB).
std::shared_ptr<const MappedFile> map_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(Code::kNotFound, "onnx: no file '", path, "'");
  if (!fs::is_regular_file(path, ec)) fail(Code::kInvalidArgument, "onnx: '", path, "' is not a regular file");
  try {
    return MappedFile::open(path);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("onnx: ") + e.what());
  }
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

ImportedModel import_onnx_bytes(const uint8_t* data, size_t size, const std::string& base_dir,
                                const NamedTensors& input_values, bool bind_dims) {
  if (!data && size) fail(Code::kInvalidArgument, "onnx: no data");
  const ModelProto model = decode_checked({data, size});
  return GraphImporter(model, base_dir, nullptr, input_values, bind_dims).run();
}

ImportedModel import_onnx_file(const std::string& path, const NamedTensors& input_values, bool bind_dims) {
  std::shared_ptr<const MappedFile> file = map_file(path);
  const ModelProto model = decode_checked(file->bytes());
  return GraphImporter(model, directory_of(path), file, input_values, bind_dims).run();
}

OnnxSignature onnx_file_signature(const std::string& path) {
  std::shared_ptr<const MappedFile> file = map_file(path);
  const ModelProto model = decode_checked(file->bytes());
  return GraphImporter(model, directory_of(path), file, {}).signature();
}

}  // namespace maxc::onnx
