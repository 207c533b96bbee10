#include "capi/capi.h"
#include "engine/tensor_constant.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

void named_value_at(const GraphObject& g, const std::vector<NamedValue>& list, size_t index,
                    const char* what, max_value_t** out_value, const char** out_name) {
  auto& value = out_param(out_value, "out_value");
  if (out_name) *out_name = nullptr;
  if (index >= list.size())
    fail(Code::kOutOfRange, what, " index ", index, " is past the graph's ", list.size(), " ", what, "(s)");
  value = g.value_handle(list[index].value);
  if (out_name) *out_name = list[index].name.c_str();
}
}  // namespace

extern "C" {

MAXC_DEFINE_REFCOUNT(graph)

max_status_t* max_graph_create(const char* name, max_graph_t** out_graph) {
  return MAXC_GUARD({
    auto& out = out_param(out_graph, "out_graph");
    out = to_handle<max_graph_t>(make_ref<GraphObject>(Graph(name ? name : "main")));
  });
}

max_status_t* max_graph_name(const max_graph_t* graph, const char** out_name) {
  return MAXC_GUARD({
    auto& out = out_param(out_name, "out_name");  // cleared before the graph is checked
    out = deref(graph, "graph").graph.name().c_str();
  });
}

max_status_t* max_graph_add_input(max_graph_t* graph, const char* name, max_dtype_t dtype,
                                  const max_dim_t* dims, int32_t rank,
                                  max_device_ref_kind_t device_kind, int32_t device_id,
                                  max_value_t** out_value) {
  return MAXC_GUARD({
    auto& out = out_param(out_value, "out_value");
    auto& g = deref(graph, "graph");
    ValueId id = g.graph.add_input(string_arg(name, "name"),
                                   tensor_type_arg(dtype, dims, rank, device_kind, device_id));
    out = g.value_handle(id);
  });
}

max_status_t* max_graph_add_constant(max_graph_t* graph, const max_tensor_t* tensor,
                                     max_value_t** out_value) {
  return MAXC_GUARD({
    auto& out = out_param(out_value, "out_value");
    auto& g = deref(graph, "graph");
    out = g.value_handle(g.graph.add_constant(constant_from_tensor(deref(tensor, "tensor"))));
  });
}

max_status_t* max_graph_add_constant_on(max_graph_t* graph, const max_tensor_t* tensor,
                                        max_device_ref_kind_t device_kind, int32_t device_id,
                                        max_value_t** out_value) {
  return MAXC_GUARD({
    auto& out = out_param(out_value, "out_value");
    auto& g = deref(graph, "graph");
    const DeviceRef device = device_ref_arg(device_kind, device_id);
    out = g.value_handle(g.graph.add_constant(constant_from_tensor(deref(tensor, "tensor"), device)));
  });
}

max_status_t* max_graph_add_weight(max_graph_t* graph, const char* name, max_dtype_t dtype,
                                   const max_dim_t* dims, int32_t rank,
                                   max_device_ref_kind_t device_kind, int32_t device_id,
                                   max_value_t** out_value) {
  return MAXC_GUARD({
    auto& out = out_param(out_value, "out_value");
    auto& g = deref(graph, "graph");
    ValueId id = g.graph.add_weight(string_arg(name, "name"),
                                    tensor_type_arg(dtype, dims, rank, device_kind, device_id));
    out = g.value_handle(id);
  });
}

max_status_t* max_graph_add_op(max_graph_t* graph, const char* op, int32_t version,
                               max_value_t* const* inputs, size_t num_inputs,
                               const max_attrs_t* attrs, max_value_t** outputs, size_t capacity,
                               size_t* out_num_outputs) {
  return MAXC_GUARD({
    auto& count = out_param(out_num_outputs, "out_num_outputs");
    auto& g = deref(graph, "graph");
    if (num_inputs > 0 && !inputs) fail(Code::kInvalidArgument, "inputs is NULL with num_inputs ", num_inputs);
    if (capacity > 0 && !outputs) fail(Code::kInvalidArgument, "outputs is NULL with capacity ", capacity);
    std::vector<ValueId> ids;
    for (size_t i = 0; i < num_inputs; ++i) ids.push_back(g.value_id(inputs[i], str_cat("inputs[", i, "]")));
    static const Attrs kNoAttrs;
    const Attrs& a = attrs ? deref(attrs, "attrs").attrs : kNoAttrs;
    std::string name = string_arg(op, "op");
    size_t n = g.graph.infer_op_types(name, version, ids, a).size();
    if (n > capacity) {
      count = n;  // the room it needs: "NULL with capacity 0 to ask only for the count"
      fail(Code::kOutOfRange, "op '", name, "' has ", n, " output(s); outputs has room for ", capacity);
    }
    auto results = g.graph.add_op(name, version, ids, a);
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = g.value_handle(results[i]);
    count = results.size();
  });
}

max_status_t* max_graph_set_outputs(max_graph_t* graph, max_value_t* const* values,
                                    const char* const* names, size_t num_outputs) {
  return MAXC_GUARD({
    auto& g = deref(graph, "graph");
    if (num_outputs > 0 && !values) fail(Code::kInvalidArgument, "values is NULL with num_outputs ", num_outputs);
    std::vector<NamedValue> outputs;
    for (size_t i = 0; i < num_outputs; ++i)
      outputs.push_back({names && names[i] ? names[i] : "", g.value_id(values[i], str_cat("values[", i, "]"))});
    g.graph.set_outputs(std::move(outputs));
  });
}

max_status_t* max_graph_add_subgraph(max_graph_t* graph, const max_graph_t* subgraph,
                                     int64_t* out_index) {
  return MAXC_GUARD({
    auto& out = out_param(out_index, "out_index");
    const Graph& sub = deref(subgraph, "subgraph").graph;
    out = deref(graph, "graph").graph.add_subgraph(sub);
  });
}

max_status_t* max_graph_num_inputs(const max_graph_t* graph, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = deref(graph, "graph").graph.inputs().size();
  });
}

max_status_t* max_graph_num_outputs(const max_graph_t* graph, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = deref(graph, "graph").graph.outputs().size();
  });
}

max_status_t* max_graph_num_ops(const max_graph_t* graph, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = deref(graph, "graph").graph.ops().size();
  });
}

max_status_t* max_graph_input(const max_graph_t* graph, size_t index, max_value_t** out_value,
                              const char** out_name) {
  return MAXC_GUARD({
    out_param(out_value, "out_value");  // both outs cleared before the graph is checked
    if (out_name) *out_name = nullptr;
    const auto& g = deref(graph, "graph");
    named_value_at(g, g.graph.inputs(), index, "input", out_value, out_name);
  });
}

max_status_t* max_graph_output(const max_graph_t* graph, size_t index, max_value_t** out_value,
                               const char** out_name) {
  return MAXC_GUARD({
    out_param(out_value, "out_value");  // both outs cleared before the graph is checked
    if (out_name) *out_name = nullptr;
    const auto& g = deref(graph, "graph");
    named_value_at(g, g.graph.outputs(), index, "output", out_value, out_name);
  });
}

max_status_t* max_graph_verify(const max_graph_t* graph) {
  return MAXC_GUARD({ deref(graph, "graph").graph.verify(); });
}

}  // extern "C"
