#include <optional>

#include "capi/capi.h"
#include "engine/model_file.h"
#include "engine/placement.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

max_compile_options_t default_compile_options() {
  max_compile_options_t o{};
  o.struct_size = sizeof(o);
  o.enable_fusion = 1;
  o.enable_constant_folding = 1;
  o.fold_limit_bytes = 1 << 20;
  o.plan_cache_capacity = 16;
  return o;
}

CompileSettings translate(const max_compile_options_t& o) {
  return {o.enable_fusion != 0, o.enable_constant_folding != 0, o.fold_limit_bytes, o.plan_cache_capacity,
          o.copy_inputs_to_device != 0};
}

max_compile_options_t read(const max_compile_options_t* options) {
  return read_options(options, default_compile_options(), "options");
}

// Where options->file_device puts a model file: the graph layer's name for the device.
std::optional<DeviceRef> file_placement(const max_compile_options_t& o) {
  if (!o.file_device) return std::nullopt;
  return device_ref_of(deref(o.file_device, "options->file_device"));
}

Ref<TensorSpec> spec_at(const std::vector<Ref<TensorSpec>>& specs, size_t index, const char* what) {
  if (index >= specs.size())
    fail(Code::kOutOfRange, what, " index ", index, " is past the model's ", specs.size(), " ", what, "(s)");
  return specs[index];
}

}  // namespace

extern "C" {

MAXC_DEFINE_REFCOUNT(compiled_model)

max_status_t* max_compile_options_init(max_compile_options_t* options, size_t struct_size) {
  return MAXC_GUARD({ init_options(options, struct_size, default_compile_options(), "options"); });
}

max_status_t* max_context_compile(max_context_t* context, const max_graph_t* graph,
                                  const max_compile_options_t* options, max_compiled_model_t** out_compiled) {
  return MAXC_GUARD({
    auto& out = out_param(out_compiled, "out_compiled");
    auto ctx = share(context, "context");
    const Graph& g = deref(graph, "graph").graph;
    out = to_handle<max_compiled_model_t>(CompiledModel::compile(std::move(ctx), g, translate(read(options))));
  });
}

max_status_t* max_context_compile_file(max_context_t* context, const char* path,
                                       const max_compile_options_t* options, max_compiled_model_t** out_compiled) {
  return MAXC_GUARD({
    auto& out = out_param(out_compiled, "out_compiled");
    auto ctx = share(context, "context");
    const max_compile_options_t o = read(options);
    const std::optional<DeviceRef> placement = file_placement(o);
    ModelFile file = read_model_file(string_arg(path, "path"), placement);
    out = to_handle<max_compiled_model_t>(
        CompiledModel::compile_file(std::move(ctx), std::move(file), translate(o), placement));
  });
}

// The three spec lists (inputs, outputs, weights) share one shape of accessor.
#define MAXC_SPEC_LIST(what, member)                                                            \
  max_status_t* max_compiled_model_num_##what##s(const max_compiled_model_t* compiled,        \
                                                 size_t* out_count) {                         \
    return MAXC_GUARD({                                                                       \
      auto& out = out_param(out_count, "out_count");                                          \
      out = deref(compiled, "compiled").member().size();                                      \
    });                                                                                       \
  }                                                                                           \
  max_status_t* max_compiled_model_##what(const max_compiled_model_t* compiled, size_t index, \
                                          max_tensor_spec_t** out_spec) {                     \
    return MAXC_GUARD({                                                                       \
      auto& out = out_param(out_spec, "out_spec");                                            \
      out = to_handle<max_tensor_spec_t>(spec_at(deref(compiled, "compiled").member(), index, #what)); \
    });                                                                                       \
  }
MAXC_SPEC_LIST(input, inputs)
MAXC_SPEC_LIST(output, outputs)
MAXC_SPEC_LIST(weight, weights)
#undef MAXC_SPEC_LIST

}  // extern "C"
