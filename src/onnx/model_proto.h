// The ONNX messages the importer reads, decoded from the wire into plain structs. Field
// numbers are those of the public onnx.proto; fields we never use are skipped, and fields we
// cannot honour are recorded so the importer can refuse them with a clear message (a
// sparse initializer, string data). Byte payloads (raw_data) point into the file's bytes,
// which must outlive the structs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace maxc::onnx {

// TensorProto.DataType.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3Fn = 17,
  kFloat8E4M3Fnuz = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2Fnuz = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

struct TensorProto {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::span<const uint8_t> raw_data;
  bool has_raw_data = false;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  size_t string_data_count = 0;  // strings are not supported; only counted to refuse them
  bool has_segment = false;
  int32_t data_location = 0;  // 0 = DEFAULT, 1 = EXTERNAL
  std::vector<std::pair<std::string, std::string>> external_data;
  uint64_t offset = 0;  // of the message in the file, for messages
};

struct GraphProto;

// AttributeProto.AttributeType.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

struct AttributeProto {
  std::string name;
  AttrType type = AttrType::kUndefined;
  std::string ref_attr_name;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::optional<TensorProto> t;
  std::shared_ptr<GraphProto> g;  // decoded so the importer can name it; never imported
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorProto> tensors;
  size_t graphs_count = 0, sparse_count = 0, type_proto_count = 0;
};

struct NodeProto {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;   // "" is an omitted optional input
  std::vector<std::string> outputs;  // "" is an unused optional output
  std::vector<AttributeProto> attributes;
  uint64_t offset = 0;

  const AttributeProto* attr(std::string_view name) const;
};

// One dim of a TensorShapeProto: a value, a parameter name, or neither (unknown).
struct DimProto {
  std::optional<int64_t> value;
  std::string param;
};

struct ValueInfoProto {
  std::string name;
  bool has_tensor_type = false;  // a tensor or an optional tensor; false: no type, or another
  bool has_other_type = false;
  int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<DimProto> dims;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> nodes;
  std::vector<TensorProto> initializers;
  size_t sparse_initializer_count = 0;
  std::vector<ValueInfoProto> inputs, outputs, value_info;
};

struct OpsetId {
  std::string domain;  // "" and "ai.onnx" are the default domain
  int64_t version = 0;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::vector<OpsetId> opset_import;
  std::string producer_name;
  bool has_graph = false;
  GraphProto graph;
  size_t function_count = 0;
};

// Decodes a whole model file image. DATA_LOSS for malformed wire data (with the offset).
ModelProto decode_model(std::span<const uint8_t> bytes);

// Single messages, for tests and for TensorProto files (the backend tests' *.pb).
TensorProto decode_tensor(std::span<const uint8_t> bytes);

const char* data_type_name(int32_t data_type);  // "FLOAT", ...; "UNKNOWN" past the table

}  // namespace maxc::onnx
