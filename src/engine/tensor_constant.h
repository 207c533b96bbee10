// The bridge from driver tensors to graph constants. The graph layer never sees a Tensor
// (DESIGN §1), so the layer above both of them packs the tensor's elements into bytes.
#pragma once

#include "driver/tensor.h"
#include "graph/constant.h"

namespace maxc {

// A constant holding a row-major copy of a tensor's elements (strided views are packed),
// placed on `placement`.
Constant constant_from_tensor(const Tensor& tensor, DeviceRef placement = DeviceRef::cpu());

}  // namespace maxc
