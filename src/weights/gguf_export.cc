#include "weights/gguf_export.h"

#include "driver/device.h"
#include "weights/gguf_writer.h"

namespace maxc {

void save_gguf(const WeightsRegistry& registry, const std::string& path, const std::string& name) {
  std::vector<Ref<Tensor>> dense;  // keeps the bytes the GgufTensors point at alive
  std::vector<GgufTensor> tensors;
  for (const std::string& n : registry.names()) {
    const WeightInfo& info = registry.info(n);
    Ref<Tensor> t = registry.tensor(n);
    t->check_host("saving a weight as GGUF");
    if (!t->is_contiguous()) t = t->copy(Device::cpu());
    dense.push_back(t);
    tensors.push_back({n, info.dtype, info.encoding, info.logical_dims, {t->data(), t->byte_size()}});
  }
  std::vector<GgufKv> metadata;
  if (!name.empty())
    metadata.push_back({"general.name", GgufValue{GgufValue::Variant(std::in_place_type<std::string>, name)}});
  write_gguf(path, metadata, tensors);
}

}  // namespace maxc
