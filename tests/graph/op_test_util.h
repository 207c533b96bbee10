// Helpers for the op-family tests, beside test_util.h.
#pragma once

#include <vector>

#include "graph/test_util.h"

namespace maxc::testing {

// The types of every output of `op` applied to inputs of `types` (for top_k, split, chunk).
inline std::vector<TensorType> infer_all(std::string_view op, const std::vector<TensorType>& types,
                                         const Attrs& attrs = {}) {
  Graph g = graph_with_inputs(types);
  std::vector<ValueId> ids;
  for (ValueId i = 0; i < types.size(); ++i) ids.push_back(i);
  std::vector<TensorType> out;
  for (ValueId v : g.add_op(op, 0, ids, attrs)) out.push_back(g.type(v));
  return out;
}

inline Attrs axis(int64_t a) { return Attrs{{"axis", a}}; }
inline std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return v; }
inline std::vector<Dim> dims(std::initializer_list<Dim> v) { return v; }

}  // namespace maxc::testing
