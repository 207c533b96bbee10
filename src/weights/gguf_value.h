// GGUF metadata values: the format's 13 value types, arrays (of any one element type,
// including nested arrays) kept as typed vectors so an array costs about what its bytes in
// the file do. The variants' alternative indices are the type ids of the file format, so
// type() is simply the index.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace maxc {

enum class GgufType : uint32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kUInt16 = 2,
  kInt16 = 3,
  kUInt32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUInt64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
constexpr uint32_t kGgufTypeCount = 13;

// "uint8", ..., "array"; nullptr past the table.
const char* gguf_type_name(GgufType type);

struct GgufArray {
  // Alternative i holds elements of GgufType i (an empty array still has its element type).
  using Elements = std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                                std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                                std::vector<float>, std::vector<bool>, std::vector<std::string>,
                                std::vector<GgufArray>, std::vector<uint64_t>, std::vector<int64_t>,
                                std::vector<double>>;
  Elements elements;

  GgufType element_type() const { return static_cast<GgufType>(elements.index()); }
  size_t size() const;
  // An empty array of `type`.
  static GgufArray of(GgufType type);
};
bool operator==(const GgufArray& a, const GgufArray& b);

struct GgufValue {
  // Alternative i holds a value of GgufType i.
  using Variant = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, GgufArray, uint64_t, int64_t, double>;
  Variant value;

  GgufType type() const { return static_cast<GgufType>(value.index()); }
  // Any integer type whose value fits the result; nullopt otherwise (also for bool).
  std::optional<uint64_t> as_uint() const;
  std::optional<int64_t> as_int() const;
  // float32 or float64.
  std::optional<double> as_float() const;
  // nullptr unless the value has that type.
  const std::string* as_string() const { return std::get_if<std::string>(&value); }
  const GgufArray* as_array() const { return std::get_if<GgufArray>(&value); }
};
bool operator==(const GgufValue& a, const GgufValue& b);

struct GgufKv {
  std::string key;
  GgufValue value;
};

}  // namespace maxc
