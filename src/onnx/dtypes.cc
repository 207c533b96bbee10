#include "onnx/dtypes.h"

#include "base/error.h"
#include "onnx/model_proto.h"

namespace maxc::onnx {

DType to_dtype(int32_t data_type, std::string_view what) {
  switch (static_cast<DataType>(data_type)) {
    case DataType::kFloat: return DType::kFloat32;
    case DataType::kUInt8: return DType::kUInt8;
    case DataType::kInt8: return DType::kInt8;
    case DataType::kUInt16: return DType::kUInt16;
    case DataType::kInt16: return DType::kInt16;
    case DataType::kInt32: return DType::kInt32;
    case DataType::kInt64: return DType::kInt64;
    case DataType::kBool: return DType::kBool;
    case DataType::kFloat16: return DType::kFloat16;
    case DataType::kDouble: return DType::kFloat64;
    case DataType::kUInt32: return DType::kUInt32;
    case DataType::kUInt64: return DType::kUInt64;
    case DataType::kBFloat16: return DType::kBFloat16;
    case DataType::kFloat8E4M3Fn: return DType::kFloat8E4M3Fn;
    case DataType::kFloat8E4M3Fnuz: return DType::kFloat8E4M3Fnuz;
    case DataType::kFloat8E5M2: return DType::kFloat8E5M2;
    case DataType::kFloat8E5M2Fnuz: return DType::kFloat8E5M2Fnuz;
    case DataType::kFloat4E2M1: return DType::kFloat4E2M1Fn;
    case DataType::kFloat8E8M0: return DType::kFloat8E8M0Fnu;
    case DataType::kUInt4: return DType::kUInt4;
    case DataType::kInt4: return DType::kInt4;
    case DataType::kUInt2: return DType::kUInt2;
    case DataType::kInt2: return DType::kInt2;
    case DataType::kUndefined:
      fail(Code::kInvalidArgument, "onnx: ", what, " has no element type (UNDEFINED)");
    default:
      fail(Code::kUnimplemented, "onnx: ", what, " has the element type ", data_type_name(data_type), " (",
           data_type, "), which max_c does not support");
  }
}

}  // namespace maxc::onnx
