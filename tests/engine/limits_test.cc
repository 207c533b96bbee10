// Shapes a file or a caller may declare but no machine could hold: compile answers quickly
// with a plan or a status, and never hands an extent to oneDNN that it cannot take (an input
// of [2^40, 4] once made oneDNN divide by zero while the matmul was compiled).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;

// Compiles `g`: returns how long it took, failing the test on a status that is an internal
// error (a crash would end the test binary).
double compile_seconds(const Graph& g) {
  const auto start = std::chrono::steady_clock::now();
  try {
    CompiledModel::compile(Context::create({}), g, {});
  } catch (const Error& e) {
    EXPECT_NE(e.code(), Code::kInternal) << e.what();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Limits, HugeMatmulRowsCompileQuickly) {
  for (int64_t rows : {int64_t{1} << 40, int64_t{1} << 31, (int64_t{1} << 32) + 1}) {
    Graph g("tall");
    ValueId x = g.add_input("x", f32({rows, 4}));
    ValueId y = g.add_op("matmul", {x, g.add_weight("w", f32({4, 8}))})[0];
    g.set_outputs({{"y", y}});
    EXPECT_LT(compile_seconds(g), 10.0) << rows;
  }
}

TEST(Limits, HugeConvolutionsCompileQuickly) {
  const Attrs nhwc{{"input_layout", std::string("NHWC")}, {"filter_layout", std::string("RSCF")}};
  for (const std::vector<Dim>& dims : {std::vector<Dim>{int64_t{1} << 20, 1 << 12, 1 << 12, 3},
                                       std::vector<Dim>{int64_t{1} << 40, 8, 8, 3},
                                       std::vector<Dim>{1, 8, (int64_t{1} << 32) + 1, 3}}) {
    Graph g("wide");
    ValueId x = g.add_input("x", f32(dims));
    ValueId y = g.add_op("conv2d", {x, g.add_weight("f", f32({3, 3, 3, 8}))}, nhwc)[0];
    g.set_outputs({{"y", y}});
    EXPECT_LT(compile_seconds(g), 10.0) << dims_to_string(dims);
  }
}

}  // namespace
}  // namespace maxc
