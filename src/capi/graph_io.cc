#include "capi/capi.h"
#include "graph/dot.h"
#include "serialize/reader.h"
#include "serialize/writer.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

max_status_t* max_graph_serialize(const max_graph_t* graph, max_buffer_t** out_buffer) {
  return MAXC_GUARD({
    auto& out = out_param(out_buffer, "out_buffer");
    out = to_handle<max_buffer_t>(make_ref<Buffer>(serialize(deref(graph, "graph").graph)));
  });
}

max_status_t* max_graph_deserialize(const void* data, size_t size, max_graph_t** out_graph) {
  return MAXC_GUARD({
    auto& out = out_param(out_graph, "out_graph");
    if (!data && size > 0) fail(Code::kInvalidArgument, "data is NULL with size ", size);
    // The graph's large constants alias the image, so it keeps a copy of its own.
    auto copy = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t*>(data),
                                                       static_cast<const uint8_t*>(data) + size);
    Graph g = deserialize(std::span<const uint8_t>(copy->data(), copy->size()), copy);
    out = to_handle<max_graph_t>(make_ref<GraphObject>(std::move(g)));
  });
}

max_status_t* max_graph_save(const max_graph_t* graph, const char* path) {
  return MAXC_GUARD({ save(deref(graph, "graph").graph, string_arg(path, "path")); });
}

max_status_t* max_graph_load(const char* path, max_graph_t** out_graph) {
  return MAXC_GUARD({
    auto& out = out_param(out_graph, "out_graph");
    out = to_handle<max_graph_t>(make_ref<GraphObject>(load(string_arg(path, "path"))));
  });
}

max_status_t* max_graph_to_text(const max_graph_t* graph, max_buffer_t** out_text) {
  return MAXC_GUARD({
    auto& out = out_param(out_text, "out_text");
    out = to_handle<max_buffer_t>(text_buffer(deref(graph, "graph").graph.to_string()));
  });
}

max_status_t* max_graph_to_dot(const max_graph_t* graph, max_buffer_t** out_dot) {
  return MAXC_GUARD({
    auto& out = out_param(out_dot, "out_dot");
    out = to_handle<max_buffer_t>(text_buffer(to_dot(deref(graph, "graph").graph)));
  });
}

}  // extern "C"
