// Which ops the GPU engine can run: every op of the registry has a GPU lowering except the
// ones listed here, each with the reason it has none. A new op without a GPU kernel fails
// this test until it gets one or a line below; a GPU kernel for a listed op fails it too, so
// the list never goes stale.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/lowering.h"
#include "graph/op_registry.h"
#include "graph/ops/ops.h"

namespace maxc::testing {
namespace {

// Ops of the registry without a GPU lowering. None is P0 (DESIGN §3).
const std::set<std::string>& ops_without_a_gpu_kernel() {
  static const std::set<std::string> ops = {
      "constant", "constant_external",  // values, not kernels: the program binds them (compiler/flatten.cc)
      "call",                           // inlined by the compiler (compiler/flatten.cc)
      "bind_dims",                      // becomes symbol sources, read by the engine (compiler/stages.cc)
  };
  return ops;
}

TEST(GpuKernelTable, EveryOpButTheListedHasAGpuLowering) {
  std::set<std::string> missing, listed_but_present;
  for (const OpSchema* schema : OpRegistry::global().list()) {
    const bool has = KernelTable::gpu().find(schema->name) != nullptr;
    const bool listed = ops_without_a_gpu_kernel().count(schema->name) > 0;
    if (!has && !listed) missing.insert(schema->name);
    if (has && listed) listed_but_present.insert(schema->name);
  }
  std::string m, p;
  for (const auto& op : missing) m += " " + op;
  for (const auto& op : listed_but_present) p += " " + op;
  EXPECT_TRUE(missing.empty()) << "ops without a GPU lowering:" << m;
  EXPECT_TRUE(listed_but_present.empty()) << "listed as lacking a GPU lowering, but have one:" << p;
}

}  // namespace
}  // namespace maxc::testing
