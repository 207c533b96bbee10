// Field numbers: ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
// ValueInfoProto, TypeProto(.Tensor), TensorShapeProto(.Dimension) and OperatorSetIdProto of
// onnx.proto. Each decoder loops over the tags and skips what it does not know, as protobuf
// requires of a reader of a newer writer's messages.
#include "onnx/model_proto.h"

#include "base/error.h"
#include "onnx/proto_reader.h"

namespace maxc::onnx {
namespace {

using WT = WireType;

std::string string_field(ProtoReader& r, WT type, std::string_view what) {
  r.expect(type, WT::kLengthDelimited, what);
  return r.read_string();
}

int64_t int_field(ProtoReader& r, WT type, std::string_view what) {
  r.expect(type, WT::kVarint, what);
  return r.read_int64();
}

int32_t int32_field(ProtoReader& r, WT type, std::string_view what) {
  r.expect(type, WT::kVarint, what);
  return r.read_int32();
}

ProtoReader message_field(ProtoReader& r, WT type, std::string_view what) {
  r.expect(type, WT::kLengthDelimited, what);
  return r.read_message();
}

std::pair<std::string, std::string> decode_entry(ProtoReader r) {
  std::pair<std::string, std::string> kv;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) kv.first = string_field(r, t, "StringStringEntryProto.key");
    else if (f == 2) kv.second = string_field(r, t, "StringStringEntryProto.value");
    else r.skip(t);
  });
  return kv;
}

TensorProto decode_tensor_message(ProtoReader r) {
  TensorProto tp;
  tp.offset = r.offset();
  for_each_field(r, [&](uint32_t f, WT t) {
    switch (f) {
      case 1: r.read_repeated_int64(t, &tp.dims); break;
      case 2: tp.data_type = int32_field(r, t, "TensorProto.data_type"); break;
      case 3: tp.has_segment = true; r.skip(t); break;
      case 4: r.read_repeated_float(t, &tp.float_data); break;
      case 5: r.read_repeated_int32(t, &tp.int32_data); break;
      case 6: ++tp.string_data_count; r.skip(t); break;
      case 7: r.read_repeated_int64(t, &tp.int64_data); break;
      case 8: tp.name = string_field(r, t, "TensorProto.name"); break;
      case 9:
        r.expect(t, WT::kLengthDelimited, "TensorProto.raw_data");
        tp.raw_data = r.read_bytes();
        tp.has_raw_data = true;
        break;
      case 10: r.read_repeated_double(t, &tp.double_data); break;
      case 11: r.read_repeated_uint64(t, &tp.uint64_data); break;
      case 13: tp.external_data.push_back(decode_entry(message_field(r, t, "TensorProto.external_data"))); break;
      case 14: tp.data_location = int32_field(r, t, "TensorProto.data_location"); break;
      default: r.skip(t);
    }
  });
  return tp;
}

GraphProto decode_graph_message(ProtoReader r);

AttributeProto decode_attribute(ProtoReader r) {
  AttributeProto a;
  for_each_field(r, [&](uint32_t f, WT t) {
    switch (f) {
      case 1: a.name = string_field(r, t, "AttributeProto.name"); break;
      case 2: r.expect(t, WT::kFixed32, "AttributeProto.f"); a.f = r.read_float(); break;
      case 3: a.i = int_field(r, t, "AttributeProto.i"); break;
      case 4: a.s = string_field(r, t, "AttributeProto.s"); break;
      case 5: a.t = decode_tensor_message(message_field(r, t, "AttributeProto.t")); break;
      case 6: a.g = std::make_shared<GraphProto>(decode_graph_message(message_field(r, t, "AttributeProto.g"))); break;
      case 7: r.read_repeated_float(t, &a.floats); break;
      case 8: r.read_repeated_int64(t, &a.ints); break;
      case 9: a.strings.push_back(string_field(r, t, "AttributeProto.strings")); break;
      case 10: a.tensors.push_back(decode_tensor_message(message_field(r, t, "AttributeProto.tensors"))); break;
      case 11: ++a.graphs_count; r.skip(t); break;
      case 14: case 15: ++a.type_proto_count; r.skip(t); break;
      case 20: a.type = static_cast<AttrType>(int32_field(r, t, "AttributeProto.type")); break;
      case 21: a.ref_attr_name = string_field(r, t, "AttributeProto.ref_attr_name"); break;
      case 22: case 23: ++a.sparse_count; r.skip(t); break;
      default: r.skip(t);
    }
  });
  return a;
}

NodeProto decode_node(ProtoReader r) {
  NodeProto n;
  n.offset = r.offset();
  for_each_field(r, [&](uint32_t f, WT t) {
    switch (f) {
      case 1: n.inputs.push_back(string_field(r, t, "NodeProto.input")); break;
      case 2: n.outputs.push_back(string_field(r, t, "NodeProto.output")); break;
      case 3: n.name = string_field(r, t, "NodeProto.name"); break;
      case 4: n.op_type = string_field(r, t, "NodeProto.op_type"); break;
      case 5: n.attributes.push_back(decode_attribute(message_field(r, t, "NodeProto.attribute"))); break;
      case 7: n.domain = string_field(r, t, "NodeProto.domain"); break;
      default: r.skip(t);
    }
  });
  return n;
}

DimProto decode_dim(ProtoReader r) {
  DimProto d;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) d.value = int_field(r, t, "TensorShapeProto.Dimension.dim_value");
    else if (f == 2) d.param = string_field(r, t, "TensorShapeProto.Dimension.dim_param");
    else r.skip(t);
  });
  return d;
}

void decode_shape(ProtoReader r, ValueInfoProto* vi) {
  vi->has_shape = true;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) vi->dims.push_back(decode_dim(message_field(r, t, "TensorShapeProto.dim")));
    else r.skip(t);
  });
}

void decode_tensor_type(ProtoReader r, ValueInfoProto* vi) {
  vi->has_tensor_type = true;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) vi->elem_type = int32_field(r, t, "TypeProto.Tensor.elem_type");
    else if (f == 2) decode_shape(message_field(r, t, "TypeProto.Tensor.shape"), vi);
    else r.skip(t);
  });
}

void decode_type(ProtoReader r, ValueInfoProto* vi);

// TypeProto.Optional: an optional tensor is read as the tensor (ops_optional.cc says why);
// an optional of anything else is another type.
void decode_optional_type(ProtoReader r, ValueInfoProto* vi) {
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f != 1) {
      r.skip(t);
      return;
    }
    ValueInfoProto element;
    decode_type(message_field(r, t, "TypeProto.Optional.elem_type"), &element);
    vi->has_tensor_type = element.has_tensor_type && !element.has_other_type;
    vi->has_other_type = !vi->has_tensor_type;
    vi->elem_type = element.elem_type;
    vi->has_shape = element.has_shape;
    vi->dims = std::move(element.dims);
  });
}

void decode_type(ProtoReader r, ValueInfoProto* vi) {
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) decode_tensor_type(message_field(r, t, "TypeProto.tensor_type"), vi);
    else if (f == 9) decode_optional_type(message_field(r, t, "TypeProto.optional_type"), vi);
    else if (f == 6) r.skip(t);  // denotation
    else {
      vi->has_other_type = true;  // sequence, map, optional, sparse or opaque
      r.skip(t);
    }
  });
}

ValueInfoProto decode_value_info(ProtoReader r) {
  ValueInfoProto vi;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) vi.name = string_field(r, t, "ValueInfoProto.name");
    else if (f == 2) decode_type(message_field(r, t, "ValueInfoProto.type"), &vi);
    else r.skip(t);
  });
  return vi;
}

GraphProto decode_graph_message(ProtoReader r) {
  GraphProto g;
  for_each_field(r, [&](uint32_t f, WT t) {
    switch (f) {
      case 1: g.nodes.push_back(decode_node(message_field(r, t, "GraphProto.node"))); break;
      case 2: g.name = string_field(r, t, "GraphProto.name"); break;
      case 5: g.initializers.push_back(decode_tensor_message(message_field(r, t, "GraphProto.initializer"))); break;
      case 11: g.inputs.push_back(decode_value_info(message_field(r, t, "GraphProto.input"))); break;
      case 12: g.outputs.push_back(decode_value_info(message_field(r, t, "GraphProto.output"))); break;
      case 13: g.value_info.push_back(decode_value_info(message_field(r, t, "GraphProto.value_info"))); break;
      case 15: ++g.sparse_initializer_count; r.skip(t); break;
      default: r.skip(t);
    }
  });
  return g;
}

OpsetId decode_opset(ProtoReader r) {
  OpsetId id;
  for_each_field(r, [&](uint32_t f, WT t) {
    if (f == 1) id.domain = string_field(r, t, "OperatorSetIdProto.domain");
    else if (f == 2) id.version = int_field(r, t, "OperatorSetIdProto.version");
    else r.skip(t);
  });
  return id;
}

}  // namespace

const AttributeProto* NodeProto::attr(std::string_view attr_name) const {
  for (const AttributeProto& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

ModelProto decode_model(std::span<const uint8_t> bytes) {
  ProtoReader r(bytes);
  ModelProto m;
  for_each_field(r, [&](uint32_t f, WT t) {
    switch (f) {
      case 1: m.ir_version = int_field(r, t, "ModelProto.ir_version"); break;
      case 2: m.producer_name = string_field(r, t, "ModelProto.producer_name"); break;
      case 7:
        m.graph = decode_graph_message(message_field(r, t, "ModelProto.graph"));
        m.has_graph = true;
        break;
      case 8: m.opset_import.push_back(decode_opset(message_field(r, t, "ModelProto.opset_import"))); break;
      case 25: ++m.function_count; r.skip(t); break;
      default: r.skip(t);
    }
  });
  return m;
}

TensorProto decode_tensor(std::span<const uint8_t> bytes) { return decode_tensor_message(ProtoReader(bytes)); }

const char* data_type_name(int32_t data_type) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",  "UINT8",          "INT8",         "UINT16",
                                       "INT16",     "INT32",  "INT64",          "STRING",       "BOOL",
                                       "FLOAT16",   "DOUBLE", "UINT32",         "UINT64",       "COMPLEX64",
                                       "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                       "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0",
                                       "UINT2", "INT2"};
  if (data_type < 0 || data_type >= static_cast<int32_t>(std::size(kNames))) return "UNKNOWN";
  return kNames[data_type];
}

}  // namespace maxc::onnx
