// The set of ops a graph may use, looked up by (name, version).
//
// The global registry is built on first use by register_builtin_ops() (graph/ops/ops.h), one
// call per op family, in one place: no static initializers, which a static library would
// silently drop. After that it is never modified, so any thread may read it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/op_schema.h"

namespace maxc {

class OpRegistry {
 public:
  OpRegistry() = default;  // empty; tests build their own

  // Every built-in op.
  static const OpRegistry& global();

  // ALREADY_EXISTS for a (name, version) that is taken; INVALID_ARGUMENT for a malformed
  // schema (no name or infer, version < 1, optional/variadic input not last, bad attr spec).
  void add(OpSchema schema);

  // version 0 means the newest version. nullptr when there is none.
  const OpSchema* find(std::string_view name, int32_t version = 0) const;
  // As find(), but NOT_FOUND naming the op (and the versions it has) instead of nullptr.
  const OpSchema& get(std::string_view name, int32_t version = 0) const;
  // Every schema, sorted by name, then version.
  std::vector<const OpSchema*> list() const;

 private:
  // std::map never moves its nodes, so the OpSchema pointers that ops keep stay valid.
  std::map<std::string, std::map<int32_t, OpSchema>, std::less<>> ops_;
};

}  // namespace maxc
