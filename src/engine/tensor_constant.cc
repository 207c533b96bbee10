#include "engine/tensor_constant.h"

namespace maxc {

Constant constant_from_tensor(const Tensor& tensor, DeviceRef placement) {
  std::vector<uint8_t> bytes(tensor.byte_size());
  tensor.to_host(bytes.data(), bytes.size());
  TensorType type{tensor.dtype(), std::vector<Dim>(tensor.dims().begin(), tensor.dims().end()),
                  placement};
  return Constant::copy_of(std::move(type), bytes);
}

}  // namespace maxc
