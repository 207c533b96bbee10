#include "graph/op_registry.h"

#include "graph/ops/ops.h"

namespace maxc {
namespace {

void check_schema(const OpSchema& s) {
  if (s.name.empty()) fail(Code::kInvalidArgument, "op schema has no name");
  if (s.version < 1) fail(Code::kInvalidArgument, s.label(), ": version must be >= 1, got ", s.version);
  if (!s.infer) fail(Code::kInvalidArgument, s.label(), ": schema has no infer function");
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.inputs[i].name.empty()) fail(Code::kInvalidArgument, s.label(), ": input ", i, " has no name");
    if (s.inputs[i].arity != Arity::kOne && i + 1 != s.inputs.size())
      fail(Code::kInvalidArgument, s.label(), ": only the last input may be optional or variadic (input ", i, " '",
           s.inputs[i].name, "' is not last)");
  }
  for (size_t i = 0; i < s.attrs.size(); ++i) {
    const AttrSpec& a = s.attrs[i];
    if (a.name.empty()) fail(Code::kInvalidArgument, s.label(), ": attribute ", i, " has no name");
    for (size_t j = 0; j < i; ++j)
      if (s.attrs[j].name == a.name) fail(Code::kInvalidArgument, s.label(), ": attribute '", a.name, "' is declared twice");
    bool has_default = a.default_value.has_value();
    if (has_default != (a.presence == AttrPresence::kDefaulted) || (has_default && attr_kind(*a.default_value) != a.kind))
      fail(Code::kInvalidArgument, s.label(), ": attribute '", a.name, "' has an inconsistent default");
  }
}

}  // namespace

const OpRegistry& OpRegistry::global() {
  // A function-local static: built once, on first use, thread-safely.
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_builtin_ops(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpSchema schema) {
  check_schema(schema);
  auto& versions = ops_[schema.name];
  if (versions.count(schema.version))
    fail(Code::kAlreadyExists, schema.label(), " (version ", schema.version, ") is already registered");
  int32_t version = schema.version;
  versions.emplace(version, std::move(schema));
}

const OpSchema* OpRegistry::find(std::string_view name, int32_t version) const {
  auto it = ops_.find(name);
  if (it == ops_.end() || it->second.empty()) return nullptr;
  if (version == 0) return &it->second.rbegin()->second;
  auto v = it->second.find(version);
  return v == it->second.end() ? nullptr : &v->second;
}

const OpSchema& OpRegistry::get(std::string_view name, int32_t version) const {
  if (const OpSchema* s = find(name, version)) return *s;
  auto it = ops_.find(name);
  if (it == ops_.end()) fail(Code::kNotFound, "unknown op '", name, "'");
  std::string known;
  for (const auto& [v, schema] : it->second) known += (known.empty() ? "" : ", ") + std::to_string(v);
  fail(Code::kNotFound, "op '", name, "' has no version ", version, " (known versions: ", known, ")");
}

std::vector<const OpSchema*> OpRegistry::list() const {
  std::vector<const OpSchema*> out;
  for (const auto& [name, versions] : ops_)
    for (const auto& [version, schema] : versions) out.push_back(&schema);
  return out;
}

}  // namespace maxc
