// A protobuf writer for tests: builds ONNX messages field by field, so tests make their own
// models without the onnx package or generated code.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace maxc::onnx::testing {

class Msg {
 public:
  Msg& varint(uint32_t field, uint64_t v) {
    tag(field, 0);
    put_varint(v);
    return *this;
  }
  Msg& fixed32(uint32_t field, uint32_t v) {
    tag(field, 5);
    for (int i = 0; i < 4; ++i) data.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Msg& fixed64(uint32_t field, uint64_t v) {
    tag(field, 1);
    for (int i = 0; i < 8; ++i) data.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Msg& f32(uint32_t field, float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return fixed32(field, b);
  }
  Msg& bytes(uint32_t field, const std::string& s) {
    tag(field, 2);
    put_varint(s.size());
    data += s;
    return *this;
  }
  Msg& msg(uint32_t field, const Msg& m) { return bytes(field, m.data); }
  Msg& packed_varints(uint32_t field, const std::vector<int64_t>& v) {
    Msg p;
    for (int64_t x : v) p.put_varint(static_cast<uint64_t>(x));
    return bytes(field, p.data);
  }
  Msg& packed_floats(uint32_t field, const std::vector<float>& v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(s.data(), v.data(), s.size());
    return bytes(field, s);
  }

  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      data.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    data.push_back(static_cast<char>(v));
  }
  void tag(uint32_t field, uint32_t wire) { put_varint((static_cast<uint64_t>(field) << 3) | wire); }

  std::string data;
};

// ---- ONNX messages (field numbers of onnx.proto) ----

enum : int32_t { kFloat = 1, kUInt8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kString = 8, kBool = 9, kDouble = 11, kUInt64 = 13 };

inline std::string raw_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

inline Msg tensor_raw(const std::string& name, int32_t type, const std::vector<int64_t>& dims, const std::string& raw) {
  Msg m;
  m.packed_varints(1, dims).varint(2, static_cast<uint64_t>(type)).bytes(8, name).bytes(9, raw);
  return m;
}
inline Msg tensor_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  return tensor_raw(name, kFloat, dims, raw_of(v.data(), v.size() * 4));
}
inline Msg tensor_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  return tensor_raw(name, kInt64, dims, raw_of(v.data(), v.size() * 8));
}

using DimSpec = std::variant<int64_t, std::string>;

// A TypeProto of a tensor.
inline Msg tensor_type(int32_t elem, const std::vector<DimSpec>& dims) {
  Msg shape;
  for (const DimSpec& d : dims) {
    Msg dim;
    if (auto* v = std::get_if<int64_t>(&d)) dim.varint(1, static_cast<uint64_t>(*v));
    else if (!std::get<std::string>(d).empty()) dim.bytes(2, std::get<std::string>(d));
    shape.msg(1, dim);
  }
  Msg tt;
  tt.varint(1, static_cast<uint64_t>(elem)).msg(2, shape);
  Msg type;
  type.msg(1, tt);
  return type;
}

inline Msg typed_value_info(const std::string& name, const Msg& type) {
  Msg vi;
  vi.bytes(1, name).msg(2, type);
  return vi;
}

inline Msg value_info(const std::string& name, int32_t elem, const std::vector<DimSpec>& dims) {
  return typed_value_info(name, tensor_type(elem, dims));
}

// A TypeProto of an optional of `element` (a TypeProto).
inline Msg optional_type(const Msg& element) {
  Msg optional;
  optional.msg(1, element);
  Msg type;
  type.msg(9, optional);
  return type;
}

inline Msg attr_int(const std::string& name, int64_t v) {
  Msg a;
  a.bytes(1, name).varint(20, 2).varint(3, static_cast<uint64_t>(v));
  return a;
}
inline Msg attr_float(const std::string& name, float v) {
  Msg a;
  a.bytes(1, name).varint(20, 1).f32(2, v);
  return a;
}
inline Msg attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  Msg a;
  a.bytes(1, name).varint(20, 7).packed_varints(8, v);
  return a;
}
inline Msg attr_string(const std::string& name, const std::string& v) {
  Msg a;
  a.bytes(1, name).varint(20, 3).bytes(4, v);
  return a;
}
inline Msg attr_tensor(const std::string& name, const Msg& t) {
  Msg a;
  a.bytes(1, name).varint(20, 4).msg(5, t);
  return a;
}

inline Msg node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                const std::vector<Msg>& attrs = {}, const std::string& name = "") {
  Msg n;
  for (const auto& s : in) n.bytes(1, s);
  for (const auto& s : out) n.bytes(2, s);
  if (!name.empty()) n.bytes(3, name);
  n.bytes(4, op);
  for (const Msg& a : attrs) n.msg(5, a);
  return n;
}

struct GraphSpec {
  std::vector<Msg> nodes, initializers, inputs, outputs;
};

inline Msg graph_msg(const GraphSpec& g, const std::string& name = "test") {
  Msg graph;
  for (const Msg& n : g.nodes) graph.msg(1, n);
  graph.bytes(2, name);
  for (const Msg& t : g.initializers) graph.msg(5, t);
  for (const Msg& i : g.inputs) graph.msg(11, i);
  for (const Msg& o : g.outputs) graph.msg(12, o);
  return graph;
}

// A subgraph attribute (If's branches, Loop's and Scan's body).
inline Msg attr_graph(const std::string& name, const GraphSpec& g, const std::string& graph_name) {
  Msg a;
  a.bytes(1, name).varint(20, 5).msg(6, graph_msg(g, graph_name));
  return a;
}

// A model importing `opsets`, each {domain, version} ("" is the default domain).
inline std::string model_with_opsets(const GraphSpec& g, const std::vector<std::pair<std::string, int64_t>>& opsets) {
  Msg m;
  m.varint(1, 8).bytes(2, "max_c-test").msg(7, graph_msg(g));
  for (const auto& [domain, version] : opsets) {
    Msg op;
    op.bytes(1, domain).varint(2, static_cast<uint64_t>(version));
    m.msg(8, op);
  }
  return m.data;
}

inline std::string model(const GraphSpec& g, int64_t opset = 17) { return model_with_opsets(g, {{"", opset}}); }

// A node of another domain than the default ("ai.onnx.ml").
inline Msg domain_node(const std::string& domain, const std::string& op, const std::vector<std::string>& in,
                       const std::vector<std::string>& out, const std::vector<Msg>& attrs = {},
                       const std::string& name = "") {
  Msg n = node(op, in, out, attrs, name);
  n.bytes(7, domain);
  return n;
}

}  // namespace maxc::onnx::testing
