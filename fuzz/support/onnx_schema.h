// The parts of onnx.proto (ONNX IR 10) the structure-aware mutator walks: which fields are
// nested messages, which are packed scalars, and the role of the fields it likes to change.
#pragma once
#include "support/proto_tree.h"

namespace maxfuzz {

// Roles (FieldSchema::role) the mutator treats specially.
inline constexpr const char* kRoleDim = "dim";        // a dimension: shapes and TensorProto.dims
inline constexpr const char* kRoleName = "name";      // a value name: the graph's wiring
inline constexpr const char* kRoleDtype = "dtype";    // TensorProto.DataType codes
inline constexpr const char* kRoleData = "data";      // tensor payloads
inline constexpr const char* kRoleOpset = "opset";    // an opset version

// ModelProto, the root of an ONNX file.
const MessageSchema& onnx_model_schema();

}  // namespace maxfuzz
