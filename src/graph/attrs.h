// Typed op attributes: a closed set of kinds, so the ABI can build them through one `attrs`
// handle and the serializer can store them without knowing any op.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/dtype.h"
#include "base/error.h"
#include "graph/dim.h"
#include "graph/type.h"

namespace maxc {

// The index of a subgraph in the graph that owns the op (for cond, while_loop, call).
struct GraphRef {
  int64_t index = 0;
  friend bool operator==(const GraphRef&, const GraphRef&) = default;
};

// The alternatives of AttrValue are listed in AttrKind order, so a value's kind is its index.
// The numbers are part of the ABI's attribute introspection: only ever append.
enum class AttrKind : int32_t {
  kInt = 0,
  kFloat = 1,
  kString = 2,
  kDType = 3,
  kInts = 4,
  kFloats = 5,
  kDims = 6,
  kGraph = 7,
  kBool = 8,
  kDevice = 9,
};

using AttrValue = std::variant<int64_t, double, std::string, DType, std::vector<int64_t>,
                               std::vector<double>, std::vector<Dim>, GraphRef, bool, DeviceRef>;

inline AttrKind attr_kind(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }
const char* attr_kind_name(AttrKind kind);  // "int", "int list", "dims", ...; "unknown" past the end
std::string attr_to_string(const AttrValue& v);

namespace detail {
template <typename T, typename Variant>
struct AlternativeIndex;
template <typename T, typename... Ts>
struct AlternativeIndex<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    size_t i = 0;
    ((std::is_same_v<T, Ts> ? true : (++i, false)) || ...);
    return i;
  }();
};
}  // namespace detail

// The kind that stores a T: attr_kind_of<int64_t>() == AttrKind::kInt.
template <typename T>
constexpr AttrKind attr_kind_of() {
  constexpr size_t i = detail::AlternativeIndex<T, AttrValue>::value;
  static_assert(i < std::variant_size_v<AttrValue>, "not an attribute type");
  return static_cast<AttrKind>(i);
}

// Attributes of one op, by name. Kept sorted by name so printing and serialization are
// deterministic whatever order a caller set them in.
class Attrs {
 public:
  using Map = std::map<std::string, AttrValue, std::less<>>;

  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : values_(init) {}

  void set(std::string name, AttrValue value) { values_.insert_or_assign(std::move(name), std::move(value)); }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  const AttrValue* find(std::string_view name) const;
  size_t size() const { return values_.size(); }
  Map::const_iterator begin() const { return values_.begin(); }
  Map::const_iterator end() const { return values_.end(); }

  // The value of `name` as a T. INVALID_ARGUMENT when it is missing or of another kind; the
  // message starts with `owner` (e.g. "op 'sum'") so it says whose attribute it is.
  template <typename T>
  const T& get(std::string_view name, std::string_view owner = {}) const;

  std::string to_string() const;  // "{axis = -1, keep_dims = true}"
  // Floats compare as values, except that NaN equals NaN: an attribute set to NaN must still
  // match itself when a loaded graph is verified.
  friend bool operator==(const Attrs& a, const Attrs& b);

 private:
  [[noreturn]] static void fail_kind(std::string_view owner, std::string_view name, AttrKind want,
                                     const AttrValue* got);
  Map values_;
};

template <typename T>
const T& Attrs::get(std::string_view name, std::string_view owner) const {
  const AttrValue* v = find(name);
  const T* typed = v ? std::get_if<T>(v) : nullptr;
  if (!typed) fail_kind(owner, name, attr_kind_of<T>(), v);
  return *typed;
}

}  // namespace maxc
