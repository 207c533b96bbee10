// A graph runs on the device it is placed on, or does not compile: it is never moved to the
// CPU behind the caller's back (engine/placement.h).
#include <gtest/gtest.h>

#include <string>

#include "engine/compiled_model.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;

TensorType on(DeviceRef device, std::vector<Dim> dims) {
  TensorType t = f32(std::move(dims));
  t.device = device;
  return t;
}

// The error that compiling `g` under a CPU-only context raises.
Error compile_error(const Graph& g) {
  try {
    CompiledModel::compile(Context::create({}), g, CompileSettings{});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "graph '" << g.name() << "' compiled";
  return Error(Code::kOk, "");
}

void expect_mentions(const Error& e, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
}

TEST(Placement, GraphOnAGpuTheContextLacksIsRefusedNamingTheInput) {
  Graph g("on_gpu");
  ValueId x = g.add_input("x", on(DeviceRef::gpu(0), {4}));
  g.set_outputs({{"y", g.add_op("relu", {x})[0]}});
  const Error e = compile_error(g);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  expect_mentions(e, {"input 'x'", "gpu:0", "cpu:0"});
}

TEST(Placement, GraphSpanningDevicesIsUnimplementedNamingBoth) {
  Graph g("split");
  ValueId a = g.add_input("a", on(DeviceRef::cpu(), {4}));
  ValueId b = g.add_input("b", on(DeviceRef::gpu(1), {4}));
  g.set_outputs({{"ya", g.add_op("relu", {a})[0]}, {"yb", g.add_op("relu", {b})[0]}});
  const Error e = compile_error(g);
  EXPECT_EQ(e.code(), Code::kUnimplemented);
  expect_mentions(e, {"input 'a'", "cpu:0", "input 'b'", "gpu:1"});
}

TEST(Placement, CpuGraphCompilesForTheHost) {
  Graph g("on_cpu");
  ValueId x = g.add_input("x", f32({4}));
  g.set_outputs({{"y", g.add_op("relu", {x})[0]}});
  auto compiled = CompiledModel::compile(Context::create({}), g, CompileSettings{});
  EXPECT_TRUE(compiled->device()->is_host());
}

}  // namespace
}  // namespace maxc
