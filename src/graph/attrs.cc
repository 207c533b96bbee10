#include "graph/attrs.h"

#include <algorithm>
#include <cmath>

#include <sstream>

namespace maxc {

static_assert(attr_kind_of<bool>() == AttrKind::kBool);
static_assert(attr_kind_of<DeviceRef>() == AttrKind::kDevice);
static_assert(std::variant_size_v<AttrValue> == static_cast<size_t>(AttrKind::kDevice) + 1);

const char* attr_kind_name(AttrKind kind) {
  static const char* const kNames[] = {"int",      "float",      "string", "dtype", "int list",
                                       "float list", "dims",     "graph",  "bool",  "device"};
  auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

namespace {

template <typename T>
std::string list_to_string(const std::vector<T>& items) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << items[i];
  out << "]";
  return out.str();
}

}  // namespace

std::string attr_to_string(const AttrValue& v) {
  struct Printer {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return str_cat(x); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(DType d) const {
      const char* name = dtype_name(d);
      return name ? name : "dtype(" + std::to_string(static_cast<int32_t>(d)) + ")";
    }
    std::string operator()(const std::vector<int64_t>& xs) const { return list_to_string(xs); }
    std::string operator()(const std::vector<double>& xs) const { return list_to_string(xs); }
    std::string operator()(const std::vector<Dim>& ds) const { return dims_to_string(ds); }
    std::string operator()(GraphRef g) const { return "@graph" + std::to_string(g.index); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(DeviceRef d) const { return d.to_string(); }
  };
  return std::visit(Printer{}, v);
}

const AttrValue* Attrs::find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::string Attrs::to_string() const {
  std::string out = "{";
  for (const auto& [name, value] : values_) {
    if (out.size() > 1) out += ", ";
    out += name + " = " + attr_to_string(value);
  }
  return out + "}";
}

void Attrs::fail_kind(std::string_view owner, std::string_view name, AttrKind want, const AttrValue* got) {
  std::string prefix = owner.empty() ? "" : std::string(owner) + ": ";
  if (!got) fail(Code::kInvalidArgument, prefix, "missing attribute '", name, "' (", attr_kind_name(want), ")");
  fail(Code::kInvalidArgument, prefix, "attribute '", name, "' must be ", attr_kind_name(want), ", got ",
       attr_kind_name(attr_kind(*got)), " ", attr_to_string(*got));
}

namespace {
bool same_float(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) return same_float(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    return std::equal(x->begin(), x->end(), y.begin(), y.end(), same_float);
  }
  return a == b;
}
}  // namespace

bool operator==(const Attrs& a, const Attrs& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.first == y.first && same_value(x.second, y.second); });
}

}  // namespace maxc
