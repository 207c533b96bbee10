// Helpers shared by the graph tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "graph/graph.h"

namespace maxc::testing {

// Runs `f` and checks it throws maxc::Error with `code` and a message containing each piece.
// Returns the message so a test can look further.
template <typename F>
std::string expect_error(F&& f, Code code, std::initializer_list<std::string_view> pieces) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(code_name(e.code()), std::string(code_name(code))) << e.what();
    for (std::string_view piece : pieces)
      EXPECT_NE(std::string_view(e.what()).find(piece), std::string_view::npos)
          << "message lacks \"" << piece << "\": " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a maxc::Error (" << code_name(code) << ")";
  return "";
}

inline TensorType tensor(DType dtype, std::vector<Dim> dims, DeviceRef device = DeviceRef::cpu()) {
  return TensorType{dtype, std::move(dims), device};
}

// A graph whose inputs have the given types, named x0, x1, ...
inline Graph graph_with_inputs(const std::vector<TensorType>& types) {
  Graph g("test");
  for (size_t i = 0; i < types.size(); ++i) g.add_input("x" + std::to_string(i), types[i]);
  return g;
}

// The type of the single output of `op` applied to inputs of `types`.
inline TensorType infer1(std::string_view op, const std::vector<TensorType>& types, const Attrs& attrs = {}) {
  Graph g = graph_with_inputs(types);
  std::vector<ValueId> ids;
  for (ValueId i = 0; i < types.size(); ++i) ids.push_back(i);
  std::vector<ValueId> out = g.add_op(op, 0, ids, attrs);
  EXPECT_EQ(out.size(), 1u);
  return g.type(out.at(0));
}

}  // namespace maxc::testing
