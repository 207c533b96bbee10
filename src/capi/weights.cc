#include "capi/capi.h"
#include "engine/quantize.h"
#include "weights/gguf_export.h"

using namespace maxc;
using namespace maxc::capi;

namespace {

QuantEncoding encoding_arg(max_quant_encoding_t encoding, const char* arg) {
  const auto e = static_cast<QuantEncoding>(encoding);
  if (e != QuantEncoding::kNone && !quant_encoding_info(e))
    fail(Code::kInvalidArgument, arg, " is ", encoding, ", which is no MAX_QUANT_* value");
  return e;
}

}  // namespace

extern "C" {

const char* max_quant_encoding_name(max_quant_encoding_t encoding) {
  return quant_encoding_name(static_cast<QuantEncoding>(encoding));
}

max_status_t* max_quant_encoding_block(max_quant_encoding_t encoding, int32_t* out_elements_per_block,
                                       int32_t* out_block_bytes) {
  return MAXC_GUARD({
    const QuantEncodingInfo* info = quant_encoding_info(encoding_arg(encoding, "encoding"));
    if (!info) fail(Code::kInvalidArgument, "encoding is MAX_QUANT_NONE, which has no blocks");
    if (out_elements_per_block) *out_elements_per_block = info->elements_per_block;
    if (out_block_bytes) *out_block_bytes = info->block_bytes;
  });
}

MAXC_DEFINE_REFCOUNT(weights)

max_status_t* max_weights_create(max_weights_t** out_weights) {
  return MAXC_GUARD({
    auto& out = out_param(out_weights, "out_weights");
    out = to_handle<max_weights_t>(WeightsRegistry::create());
  });
}

max_status_t* max_weights_add_file(max_weights_t* weights, const char* path) {
  return MAXC_GUARD({
    WeightsRegistry& w = deref(weights, "weights");
    w.add_file(string_arg(path, "path"));
  });
}

max_status_t* max_weights_add_tensor(max_weights_t* weights, const char* name, max_tensor_t* tensor,
                                     max_quant_encoding_t encoding) {
  return MAXC_GUARD({
    WeightsRegistry& w = deref(weights, "weights");
    w.add_tensor(string_arg(name, "name"), share(tensor, "tensor"), encoding_arg(encoding, "encoding"));
  });
}

max_status_t* max_weights_count(const max_weights_t* weights, size_t* out_count) {
  return MAXC_GUARD({
    auto& out = out_param(out_count, "out_count");
    out = deref(weights, "weights").size();
  });
}

max_status_t* max_weights_name(const max_weights_t* weights, size_t index, const char** out_name) {
  return MAXC_GUARD({
    auto& out = out_param(out_name, "out_name");
    out = deref(weights, "weights").info_at(index).name.c_str();
  });
}

max_status_t* max_weights_info(const max_weights_t* weights, const char* name, max_dtype_t* out_dtype,
                               int32_t* out_rank, const int64_t** out_dims, max_quant_encoding_t* out_encoding) {
  return MAXC_GUARD({
    const WeightInfo& info = deref(weights, "weights").info(string_arg(name, "name"));
    if (out_dtype) *out_dtype = static_cast<max_dtype_t>(info.dtype);
    if (out_rank) *out_rank = static_cast<int32_t>(info.dims.size());
    if (out_dims) *out_dims = info.dims.data();
    if (out_encoding) *out_encoding = static_cast<max_quant_encoding_t>(info.encoding);
  });
}

max_status_t* max_weights_tensor(const max_weights_t* weights, const char* name, max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    out = to_handle<max_tensor_t>(deref(weights, "weights").tensor(string_arg(name, "name")));
  });
}

max_status_t* max_weights_save_gguf(const max_weights_t* weights, const char* path, const char* name) {
  return MAXC_GUARD({
    const WeightsRegistry& w = deref(weights, "weights");
    save_gguf(w, string_arg(path, "path"), name ? name : "");
  });
}

max_status_t* max_tensor_quantize(const max_tensor_t* tensor, max_quant_encoding_t encoding,
                                  max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    const Tensor& t = deref(tensor, "tensor");
    out = to_handle<max_tensor_t>(quantize(t, encoding_arg(encoding, "encoding")));
  });
}

max_status_t* max_model_create_from_weights(max_compiled_model_t* compiled, const max_weights_t* weights,
                                            max_model_t** out_model) {
  return MAXC_GUARD({
    auto& out = out_param(out_model, "out_model");
    auto c = share(compiled, "compiled");
    out = to_handle<max_model_t>(Model::create(std::move(c), deref(weights, "weights")));
  });
}

max_status_t* max_model_reload_from_weights(max_model_t* model, const max_weights_t* weights) {
  return MAXC_GUARD({
    Model& m = deref(model, "model");
    m.reload(deref(weights, "weights"));
  });
}

}  // extern "C"
