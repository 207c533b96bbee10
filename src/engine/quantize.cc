#include "engine/quantize.h"

#include "base/error.h"
#include "driver/device.h"
#include "kernels/cpu/quant_reference.h"

namespace maxc {

Ref<Tensor> quantize(const Tensor& src, QuantEncoding e) {
  if (src.dtype() != DType::kFloat32)
    fail(Code::kInvalidArgument, "quantize takes float32, not ", dtype_name(src.dtype()));
  if (src.rank() == 0) fail(Code::kInvalidArgument, "quantize needs a tensor of rank 1 or more, not a scalar");
  if (!quant_encoding_info(e)) fail(Code::kInvalidArgument, "quantize needs an encoding, not none");
  src.check_host("quantize");
  const int64_t k = src.dims().back();
  std::vector<int64_t> dims = src.dims();
  dims.back() = quant_row_bytes(e, k);  // INVALID_ARGUMENT for a k that is not whole blocks
  Ref<Tensor> dense =
      src.is_contiguous() ? Ref<Tensor>::share(const_cast<Tensor*>(&src)) : src.copy(Device::cpu());
  Ref<Tensor> out = Tensor::create(Device::cpu(), DType::kUInt8, dims, /*zero=*/false);
  const int64_t rows = k == 0 ? 0 : src.num_elements() / k;
  cpu::quantize_rows(e, reinterpret_cast<const float*>(dense->data()), rows, k, out->data());
  return out;
}

}  // namespace maxc
