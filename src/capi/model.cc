#include "capi/capi.h"
#include "engine/run_limits.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

// tensors[i], shared. Its argument's name ("inputs[2]") is spelled only when the handle is
// wrong: an execute checks every input, and a call that passes them well builds no text.
Ref<Tensor> tensor_item(max_tensor_t* const* tensors, size_t i, const char* arg) {
  const auto* object = reinterpret_cast<const Object*>(tensors[i]);
  if (!object || object->kind() != ObjectKind::kTensor) deref(tensors[i], str_cat(arg, "[", i, "]").c_str());
  return share(tensors[i], arg);
}

// names[i], copied; named "names[2]" only when it is NULL.
std::string name_item(const char* const* names, size_t i, const char* arg) {
  if (!names[i]) fail(Code::kInvalidArgument, arg, "[", i, "] is NULL");
  return names[i];
}

NamedTensors named_tensors(const char* const* names, max_tensor_t* const* tensors, size_t count,
                           const char* names_arg, const char* tensors_arg) {
  NamedTensors result;
  if (count == 0) return result;
  if (!names) fail(Code::kInvalidArgument, names_arg, " is NULL with a count of ", count);
  if (!tensors) fail(Code::kInvalidArgument, tensors_arg, " is NULL with a count of ", count);
  for (size_t i = 0; i < count; ++i)
    result.emplace_back(name_item(names, i, names_arg), tensor_item(tensors, i, tensors_arg));
  return result;
}

std::vector<Ref<Tensor>> tensor_args(max_tensor_t* const* tensors, size_t count, const char* arg) {
  std::vector<Ref<Tensor>> result;
  if (count > 0 && !tensors) fail(Code::kInvalidArgument, arg, " is NULL with a count of ", count);
  for (size_t i = 0; i < count; ++i) result.push_back(tensor_item(tensors, i, arg));
  return result;
}

// The model's inputs, counted before the array is read: a wrong count must never make the
// library read past the caller's array.
std::vector<Ref<Tensor>> model_inputs(const Model& m, max_tensor_t* const* tensors, size_t count) {
  const auto& specs = m.compiled()->inputs();
  if (count != specs.size()) {
    std::string names;
    for (const auto& spec : specs) names += (names.empty() ? "" : ", ") + spec->name();
    fail(Code::kInvalidArgument, "the model takes ", specs.size(), " input(s) (", names, ") but got ", count);
  }
  return tensor_args(tensors, count, "inputs");
}

std::span<const uint64_t> key_args(const uint64_t* keys, size_t count) {
  if (count > 0 && !keys) fail(Code::kInvalidArgument, "graph_keys is NULL with a count of ", count);
  return {keys, count};
}

max_run_options_t default_run_options() {
  max_run_options_t o{};
  o.struct_size = sizeof(o);
  return o;
}

RunLimits run_limits(const max_run_options_t* options) {
  if (!options) return {};
  const max_run_options_t o = read_options(options, default_run_options(), "options");
  if (o.timeout_us < 0) fail(Code::kInvalidArgument, "options->timeout_us is ", o.timeout_us, "; expected >= 0");
  return RunLimits{o.timeout_us, o.cancel_flag};
}

max_tensor_list_t* to_list(std::vector<Ref<Tensor>> tensors) {
  auto list = make_ref<TensorList>();
  list->items = std::move(tensors);
  return to_handle<max_tensor_list_t>(std::move(list));
}

}  // namespace

extern "C" {

MAXC_DEFINE_REFCOUNT(model)

max_status_t* max_model_create(max_compiled_model_t* compiled, const char* const* weight_names,
                               max_tensor_t* const* weights, size_t num_weights, max_model_t** out_model) {
  return MAXC_GUARD({
    auto& out = out_param(out_model, "out_model");
    auto c = share(compiled, "compiled");
    out = to_handle<max_model_t>(
        Model::create(std::move(c), named_tensors(weight_names, weights, num_weights, "weight_names", "weights")));
  });
}

max_status_t* max_model_compiled_model(const max_model_t* model, max_compiled_model_t** out_compiled) {
  return MAXC_GUARD({
    auto& out = out_param(out_compiled, "out_compiled");
    out = to_handle<max_compiled_model_t>(deref(model, "model").compiled());
  });
}

max_status_t* max_model_execute(max_model_t* model, max_tensor_t* const* inputs, size_t num_inputs,
                                max_tensor_list_t** out_outputs) {
  return MAXC_GUARD({
    auto& out = out_param(out_outputs, "out_outputs");
    const Model& m = deref(model, "model");
    out = to_list(m.execute(model_inputs(m, inputs, num_inputs)));
  });
}

max_status_t* max_run_options_init(max_run_options_t* options, size_t struct_size) {
  return MAXC_GUARD({ init_options(options, struct_size, default_run_options(), "options"); });
}

max_status_t* max_model_execute_with_options(max_model_t* model, max_tensor_t* const* inputs, size_t num_inputs,
                                             const max_run_options_t* options, max_tensor_list_t** out_outputs) {
  return MAXC_GUARD({
    auto& out = out_param(out_outputs, "out_outputs");
    const Model& m = deref(model, "model");
    const RunLimitsScope limits(run_limits(options));
    out = to_list(m.execute(tensor_args(inputs, num_inputs, "inputs")));
  });
}

max_status_t* max_model_execute_named(max_model_t* model, const char* const* names, max_tensor_t* const* inputs,
                                      size_t num_inputs, max_tensor_list_t** out_outputs) {
  return MAXC_GUARD({
    auto& out = out_param(out_outputs, "out_outputs");
    const Model& m = deref(model, "model");
    out = to_list(m.execute_named(named_tensors(names, inputs, num_inputs, "names", "inputs")));
  });
}

max_status_t* max_model_reload(max_model_t* model, const char* const* weight_names, max_tensor_t* const* weights,
                               size_t num_weights) {
  return MAXC_GUARD({
    Model& m = deref(model, "model");
    m.reload(named_tensors(weight_names, weights, num_weights, "weight_names", "weights"));
  });
}

max_status_t* max_model_capture(max_model_t* model, const uint64_t* graph_keys, size_t num_keys,
                                max_tensor_t* const* inputs, size_t num_inputs, max_tensor_list_t** out_outputs) {
  return MAXC_GUARD({
    auto& out = out_param(out_outputs, "out_outputs");
    Model& m = deref(model, "model");
    out = to_list(m.capture(key_args(graph_keys, num_keys), model_inputs(m, inputs, num_inputs)));
  });
}

max_status_t* max_model_replay(max_model_t* model, const uint64_t* graph_keys, size_t num_keys,
                               max_tensor_t* const* inputs, size_t num_inputs) {
  return MAXC_GUARD({
    const Model& m = deref(model, "model");
    m.replay(key_args(graph_keys, num_keys), model_inputs(m, inputs, num_inputs));
  });
}

max_status_t* max_model_debug_verify_replay(max_model_t* model, const uint64_t* graph_keys, size_t num_keys,
                                            max_tensor_t* const* inputs, size_t num_inputs) {
  return MAXC_GUARD({
    const Model& m = deref(model, "model");
    m.debug_verify_replay(key_args(graph_keys, num_keys), model_inputs(m, inputs, num_inputs));
  });
}

}  // extern "C"
