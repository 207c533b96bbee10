// ONNX element types <-> max_c dtypes.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/dtype.h"

namespace maxc::onnx {

// The dtype of an ONNX TensorProto.DataType; UNIMPLEMENTED (naming `what` and the type) for
// the ones we have no dtype for (string, complex, 4-bit integers).
DType to_dtype(int32_t data_type, std::string_view what);

}  // namespace maxc::onnx
