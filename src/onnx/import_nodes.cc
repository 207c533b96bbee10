#include "onnx/import_nodes.h"

#include "onnx/importer.h"
#include "onnx/node_context.h"

namespace maxc::onnx {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

namespace {

// The import function of `node`; UNIMPLEMENTED naming what is not mapped.
const ImportFn& importer_of(const NodeContext& ctx, int64_t opset) {
  const NodeProto& node = ctx.node();
  const ImportTable& table = import_table();
  // Operators of other domains are in the table as "<domain>.<op_type>".
  const std::string key = is_default_domain(node.domain) ? node.op_type : node.domain + "." + node.op_type;
  if (!is_default_domain(node.domain) && !table.count(key))
    ctx.unsupported("operator domain '", node.domain, "' is not supported (for operator '", node.op_type, "')");
  // Operators of other domains need no opset of the default one (a model of only
  // ai.onnx.ml or ai.onnx.preview.training nodes imports none).
  if (opset == 0 && is_default_domain(node.domain)) ctx.invalid("the model imports no opset of the default domain");
  auto it = table.find(key);
  if (it == table.end()) ctx.unsupported("operator '", node.op_type, "' is not supported");
  if (is_default_domain(node.domain) && opset < oldest_mapped_opset(node.op_type))
    ctx.unsupported("opset ", opset, "'s version of ", node.op_type, " is not supported (max_c maps it from opset ",
                    oldest_mapped_opset(node.op_type), "; convert the model with onnx.version_converter)");
  for (const AttributeProto& a : node.attributes)
    if (!a.ref_attr_name.empty())
      ctx.invalid("attribute '", a.name, "' refers to a function attribute outside a function");
  return it->second;
}

void import_node(const NodeProto& node, size_t index, int64_t opset, ValueTable& values, Graph& graph) {
  NodeContext ctx(node, index, opset, values, graph);
  const ImportFn& import = importer_of(ctx, opset);
  try {
    import(ctx);
  } catch (const InputValuesNeeded&) {
    throw;  // its message names the node already
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind("onnx: ", 0) == 0) throw;
    throw Error(e.code(), "onnx: " + ctx.label() + ": " + msg);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty() && !values.has(node.outputs[i])) {
      Operand missing;
      missing.missing = "output " + std::to_string(i) + " of " + ctx.label() + " is not supported";
      values.define(node.outputs[i], std::move(missing), ctx.label());
    }
}

}  // namespace

void import_nodes(const std::vector<NodeProto>& nodes, int64_t opset, ValueTable& values, Graph& graph) {
  for (size_t i = 0; i < nodes.size(); ++i) import_node(nodes[i], i, opset, values, graph);
}

}  // namespace maxc::onnx
