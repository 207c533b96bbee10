#include "engine/program_constants.h"

#include "driver/cuda/cuda_device.h"

namespace maxc {

ProgramConstants place_constants(const Program& p, const Ref<Device>& device) {
  ProgramConstants result;
  for (const auto& c : p.constants) {
    if (device->is_host()) {
      result.addresses.push_back(c.data.data.get());
      continue;
    }
    std::vector<int64_t> dims;
    for (const Dim& d : c.data.type.dims) dims.push_back(d.static_value());
    Ref<Tensor> t = Tensor::create(device, c.data.type.dtype, dims, /*zero=*/false);
    if (c.data.size > 0) device->cuda()->copy_to_device(t->data(), c.data.data.get(), c.data.size);
    result.addresses.push_back(t->data());
    result.copies.push_back(std::move(t));
  }
  return result;
}

}  // namespace maxc
