#include "weights/gguf_value.h"

#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

namespace maxc {
namespace {

constexpr const char* kTypeNames[] = {"uint8", "int8",  "uint16", "int16",  "uint32", "int32",  "float32",
                                      "bool",  "string", "array", "uint64", "int64", "float64"};
static_assert(std::size(kTypeNames) == kGgufTypeCount);

template <size_t I>
void set_empty_if(GgufArray::Elements& e, size_t type) {
  if (type == I) e.template emplace<I>();
}

template <size_t... I>
GgufArray::Elements empty_elements(size_t type, std::index_sequence<I...>) {
  GgufArray::Elements e;
  (set_empty_if<I>(e, type), ...);
  return e;
}

// Bit-exact comparison of floats, so a NaN read back equals the NaN written.
template <typename T>
bool same(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) return std::memcmp(&a, &b, sizeof(T)) == 0;
  else return a == b;
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  const auto i = static_cast<uint32_t>(type);
  return i < kGgufTypeCount ? kTypeNames[i] : nullptr;
}

size_t GgufArray::size() const {
  return std::visit([](const auto& v) { return v.size(); }, elements);
}

GgufArray GgufArray::of(GgufType type) {
  return GgufArray{empty_elements(static_cast<size_t>(type), std::make_index_sequence<kGgufTypeCount>())};
}

bool operator==(const GgufArray& a, const GgufArray& b) {
  if (a.elements.index() != b.elements.index()) return false;
  return std::visit(
      [&](const auto& va) {
        const auto& vb = std::get<std::decay_t<decltype(va)>>(b.elements);
        if (va.size() != vb.size()) return false;
        for (size_t i = 0; i < va.size(); ++i)
          if (!same<typename std::decay_t<decltype(va)>::value_type>(va[i], vb[i])) return false;
        return true;
      },
      a.elements);
}

bool operator==(const GgufValue& a, const GgufValue& b) {
  if (a.value.index() != b.value.index()) return false;
  return std::visit(
      [&](const auto& va) { return same(va, std::get<std::decay_t<decltype(va)>>(b.value)); }, a.value);
}

std::optional<uint64_t> GgufValue::as_uint() const {
  return std::visit(
      [](const auto& v) -> std::optional<uint64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if constexpr (std::is_signed_v<T>)
            if (v < 0) return std::nullopt;
          return static_cast<uint64_t>(v);
        }
        return std::nullopt;
      },
      value);
}

std::optional<int64_t> GgufValue::as_int() const {
  return std::visit(
      [](const auto& v) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
          return static_cast<int64_t>(v);
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return static_cast<int64_t>(v);
        }
        return std::nullopt;
      },
      value);
}

std::optional<double> GgufValue::as_float() const {
  if (const auto* f = std::get_if<float>(&value)) return *f;
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::nullopt;
}

}  // namespace maxc
