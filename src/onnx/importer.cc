#include "onnx/importer.h"

#include <filesystem>
#include <memory>
#include <set>

#include "driver/storage.h"
#include "onnx/dtypes.h"
#include "onnx/model_proto.h"
#include "onnx/node_context.h"
#include "onnx/tensor_data.h"
#include "onnx/value_table.h"
#include "weights/mapped_file.h"

namespace maxc::onnx {
namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

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
  GraphImporter(const ModelProto& model, const std::string& base_dir, std::shared_ptr<const MappedFile> file)
      : model_(model), base_dir_(base_dir), file_(std::move(file)), graph_("main"), values_(graph_) {}

  ImportedModel run() {
    const GraphProto& g = model_.graph;
    if (g.sparse_initializer_count)
      fail(Code::kUnimplemented, "onnx: the graph has ", g.sparse_initializer_count,
           " sparse initializers, which max_c does not support");
    if (model_.function_count)
      fail(Code::kUnimplemented, "onnx: the model defines ", model_.function_count,
           " local functions, which max_c does not support");
    opset_ = default_opset(model_);
    std::set<std::string> initializer_names;
    for (const TensorProto& t : g.initializers) {
      if (t.name.empty()) fail(Code::kInvalidArgument, "onnx: an initializer has no name (at byte ", t.offset, ")");
      initializer_names.insert(t.name);
      Ref<Tensor> data = tensor_from_proto(t, "initializer '" + t.name + "'", base_dir_, file_);
      if (file_ && t.has_raw_data && data->data() != t.raw_data.data()) drop_file_pages(t.raw_data.data(), t.raw_data.size());  // copied: the file's pages are not needed again
      values_.add_initializer(t.name, std::move(data));
    }
    for (const ValueInfoProto& in : g.inputs)
      if (!initializer_names.count(in.name)) add_input(in);
    const ImportTable& table = import_table();
    for (size_t i = 0; i < g.nodes.size(); ++i) import_node(table, g.nodes[i], i);
    set_outputs();
    NamedTensors weights = values_.used_weights();  // before graph_ moves out
    return ImportedModel{std::move(graph_), std::move(weights)};
  }

 private:
  Dim dim_of(const DimProto& d, const std::string& input, size_t axis) {
    if (d.value) {
      if (*d.value < 0) fail(Code::kInvalidArgument, "onnx: input '", input, "' has the negative dim ", *d.value);
      return Dim(*d.value);
    }
    if (!d.param.empty()) return Dim(std::string_view(symbol_for(d.param)));
    return Dim(std::string_view(symbol_for(input + "_dim" + std::to_string(axis))));
  }

  void add_input(const ValueInfoProto& in) {
    std::string what = "graph input '" + in.name + "'";
    if (!in.has_tensor_type)
      fail(Code::kUnimplemented, "onnx: ", what, in.has_other_type ? " is not a tensor" : " has no type",
           "; max_c imports tensor inputs only");
    if (!in.has_shape)
      fail(Code::kUnimplemented, "onnx: ", what, " has no shape (unknown rank), which max_c does not support");
    TensorType type{to_dtype(in.elem_type, what), {}, DeviceRef::cpu()};
    for (size_t i = 0; i < in.dims.size(); ++i) type.dims.push_back(dim_of(in.dims[i], in.name, i));
    Operand op;
    op.type = type;
    op.value = graph_.add_input(in.name, type);
    values_.define(in.name, std::move(op), what);
  }

  void import_node(const ImportTable& table, const NodeProto& node, size_t index) {
    NodeContext ctx(node, index, opset_, values_, graph_);
    // Operators of other domains are in the table as "<domain>.<op_type>".
    const std::string key = is_default_domain(node.domain) ? node.op_type : node.domain + "." + node.op_type;
    if (!is_default_domain(node.domain) && !table.count(key))
      fail(Code::kUnimplemented, "onnx: ", ctx.label(), ": operator domain '", node.domain,
           "' is not supported (for operator '", node.op_type, "')");
    // Operators of other domains need no opset of the default one (a model of only
    // ai.onnx.ml or ai.onnx.preview.training nodes imports none).
    if (opset_ == 0 && is_default_domain(node.domain))
      fail(Code::kInvalidArgument, "onnx: ", ctx.label(), ": the model imports no opset of the default domain");
    auto it = table.find(key);
    if (it == table.end())
      fail(Code::kUnimplemented, "onnx: ", ctx.label(), ": operator '", node.op_type, "' is not supported");
    if (is_default_domain(node.domain) && opset_ < oldest_mapped_opset(node.op_type))
      fail(Code::kUnimplemented, "onnx: ", ctx.label(), ": opset ", opset_, "'s version of ", node.op_type,
           " is not supported (max_c maps it from opset ", oldest_mapped_opset(node.op_type),
           "; convert the model with onnx.version_converter)");
    for (const AttributeProto& a : node.attributes)
      if (!a.ref_attr_name.empty())
        fail(Code::kInvalidArgument, "onnx: ", ctx.label(), ": attribute '", a.name,
             "' refers to a function attribute outside a function");
    try {
      it->second(ctx);
    } catch (const Error& e) {
      std::string msg = e.what();
      if (msg.rfind("onnx: ", 0) == 0) throw;
      throw Error(e.code(), "onnx: " + ctx.label() + ": " + msg);
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty() && !values_.has(node.outputs[i])) {
        Operand missing;
        missing.missing = "output " + std::to_string(i) + " of " + ctx.label() + " is not supported";
        values_.define(node.outputs[i], std::move(missing), ctx.label());
      }
  }

  void set_outputs() {
    std::vector<NamedValue> outs;
    for (const ValueInfoProto& o : model_.graph.outputs) outs.push_back({o.name, values_.value(o.name, "graph output")});
    graph_.set_outputs(std::move(outs));
  }

  const ModelProto& model_;
  std::string base_dir_;
  std::shared_ptr<const MappedFile> file_;  // the mapping model_ points into (import_onnx_file)
  int64_t opset_ = 0;
  Graph graph_;
  ValueTable values_;
};

ImportedModel import_model(std::span<const uint8_t> bytes, const std::string& base_dir,
                           std::shared_ptr<const MappedFile> file) {
  ModelProto model = decode_model(bytes);
  if (!model.has_graph) fail(Code::kDataLoss, "onnx: the file has no graph (not an ONNX model?)");
  return GraphImporter(model, base_dir, std::move(file)).run();
}

}  // namespace

ImportedModel import_onnx_bytes(const uint8_t* data, size_t size, const std::string& base_dir) {
  if (!data && size) fail(Code::kInvalidArgument, "onnx: no data");
  return import_model({data, size}, base_dir, nullptr);
}

ImportedModel import_onnx_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(Code::kNotFound, "onnx: no file '", path, "'");
  if (!fs::is_regular_file(path, ec)) fail(Code::kInvalidArgument, "onnx: '", path, "' is not a regular file");
  // Mapped, not read: the initializers' raw_data is most of the file, and the aligned ones
  // become views of the mapping instead of copies (a BERT-base file is 440 MB).
  std::shared_ptr<const MappedFile> file;
  try {
    file = MappedFile::open(path);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("onnx: ") + e.what());
  }
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return import_model(file->bytes(), dir, file);
}

}  // namespace maxc::onnx
