#include "support/onnx_schema.h"

namespace maxfuzz {
namespace {

struct OnnxSchemas {
  MessageSchema model{"ModelProto", {}}, opset{"OperatorSetIdProto", {}}, graph{"GraphProto", {}},
      node{"NodeProto", {}}, attribute{"AttributeProto", {}}, tensor{"TensorProto", {}},
      value_info{"ValueInfoProto", {}}, type{"TypeProto", {}}, tensor_type{"TypeProto.Tensor", {}},
      sequence_type{"TypeProto.Sequence", {}}, optional_type{"TypeProto.Optional", {}},
      map_type{"TypeProto.Map", {}}, shape{"TensorShapeProto", {}}, dim{"TensorShapeProto.Dimension", {}},
      entry{"StringStringEntryProto", {}}, function{"FunctionProto", {}};

  OnnxSchemas() {
    const Payload B = Payload::kBytes, M = Payload::kMessage, PV = Payload::kPackedVarint,
                  P32 = Payload::kPackedFixed32, P64 = Payload::kPackedFixed64;
    model.fields = {{7, M, &graph}, {8, M, &opset}, {14, M, &entry}, {25, M, &function}, {2, B}, {4, B}};
    opset.fields = {{1, B}, {2, B, nullptr, kRoleOpset}};
    graph.fields = {{1, M, &node},  {2, B},           {5, M, &tensor},      {11, M, &value_info},
                    {12, M, &value_info}, {13, M, &value_info}, {10, B}};
    node.fields = {{1, B, nullptr, kRoleName}, {2, B, nullptr, kRoleName}, {3, B}, {4, B}, {7, B},
                   {5, M, &attribute}, {6, B}};
    attribute.fields = {{1, B},          {4, B},          {5, M, &tensor}, {6, M, &graph},
                        {7, P32},        {8, PV},         {9, B},          {10, M, &tensor},
                        {11, M, &graph}, {14, M, &type},  {15, M, &type},  {21, B}};
    tensor.fields = {{1, PV, nullptr, kRoleDim}, {2, B, nullptr, kRoleDtype}, {4, P32, nullptr, kRoleData}, {5, PV, nullptr, kRoleData},
                     {6, B},                     {7, PV, nullptr, kRoleData},  {8, B, nullptr, kRoleName},
                     {9, B, nullptr, kRoleData}, {10, P64, nullptr, kRoleData}, {11, PV, nullptr, kRoleData},
                     {13, M, &entry}};
    value_info.fields = {{1, B, nullptr, kRoleName}, {2, M, &type}, {3, B}};
    type.fields = {{1, M, &tensor_type}, {4, M, &sequence_type}, {5, M, &map_type}, {8, M, &tensor_type},
                   {9, M, &optional_type}, {6, B}};
    tensor_type.fields = {{1, B, nullptr, kRoleDtype}, {2, M, &shape}};
    sequence_type.fields = {{1, M, &type}};
    optional_type.fields = {{1, M, &type}};
    map_type.fields = {{2, M, &type}};
    shape.fields = {{1, M, &dim}};
    dim.fields = {{1, B, nullptr, kRoleDim}, {2, B}, {3, B}};
    entry.fields = {{1, B}, {2, B}};
    function.fields = {{4, M, &node}, {1, B}, {2, B}, {3, B}, {6, B}, {10, B}};
  }
};

}  // namespace

const MessageSchema& onnx_model_schema() {
  static const OnnxSchemas schemas;
  return schemas.model;
}

}  // namespace maxfuzz
