// Model::capture / replay / debug_verify_replay on the host (engine/captured_graph.h): the
// contract a GPU's CUDA graphs keep too (tests/gpu_engine/gpu_capture_test.cc). The
// capture's outputs are the replay's, rewritten in place; a replay with other shapes, an
// unknown key or a key list of another length is refused by name, and the model stays usable.
#include <gtest/gtest.h>

#include <cstring>

#include "driver/test_util.h"
#include "engine/launch_trace.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

// y = softmax(x @ w) * 2, on [batch, 4] inputs.
Graph scored() {
  Graph g("scored");
  ValueId x = g.add_input("x", f32({"batch", 4}));
  ValueId w = g.add_weight("w", f32({4, 3}));
  float two = 2.f;
  ValueId c = g.add_constant(Constant::copy_of(f32({}), {reinterpret_cast<const uint8_t*>(&two), 4}));
  ValueId y = g.add_op("mul", {g.add_op("softmax", {g.add_op("matmul", {x, w})[0]})[0], c})[0];
  g.set_outputs({{"y", y}});
  return g;
}

std::vector<float> values(const Ref<Tensor>& t) {
  const auto* p = reinterpret_cast<const float*>(t->data());
  return {p, p + t->num_elements()};
}

class Capture : public ::testing::Test {
 protected:
  Ref<Model> model_ = Model::create(CompiledModel::compile(Context::create({}), scored(), CompileSettings{}),
                                    {{"w", random_tensor({4, 3}, 1)}});
  const std::vector<uint64_t> key_{7};
};

TEST_F(Capture, ReplayRewritesTheCapturedOutputsInPlace) {
  const std::vector<Ref<Tensor>> a = {random_tensor({2, 4}, 2)}, b = {random_tensor({2, 4}, 3)};
  const std::vector<Ref<Tensor>> out = model_->capture(key_, a);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values(out[0]), values(model_->execute(a)[0]));
  const void* where = out[0]->data();
  model_->replay(key_, b);
  EXPECT_EQ(out[0]->data(), where);
  EXPECT_EQ(values(out[0]), values(model_->execute(b)[0]));
  EXPECT_NE(values(out[0]), values(model_->execute(a)[0]));
  model_->replay(key_, a);
  EXPECT_EQ(values(out[0]), values(model_->execute(a)[0]));
}

TEST_F(Capture, KeysAreIndependentAndACaptureReplacesItsKey) {
  const std::vector<uint64_t> other{8};
  const std::vector<Ref<Tensor>> a = {random_tensor({2, 4}, 2)}, b = {random_tensor({5, 4}, 3)};
  const std::vector<Ref<Tensor>> out_a = model_->capture(key_, a);
  const std::vector<Ref<Tensor>> out_b = model_->capture(other, b);
  EXPECT_EQ(out_b[0]->dims(), (std::vector<int64_t>{5, 3}));
  const std::vector<float> before = values(out_a[0]);
  model_->replay(other, b);
  EXPECT_EQ(values(out_a[0]), before);
  // Re-captured with batch 5, key 7 now refuses batch 2.
  model_->capture(key_, b);
  EXPECT_MAXC_ERROR(model_->replay(key_, a), Code::kInvalidArgument,
                    "the inputs bind batch=2 but graph key 7 was captured with batch=5");
}

TEST_F(Capture, BadCallsAreRefusedByNameAndTheModelStaysUsable) {
  const std::vector<Ref<Tensor>> a = {random_tensor({2, 4}, 2)};
  EXPECT_MAXC_ERROR(model_->replay(key_, a), Code::kFailedPrecondition, "nothing is captured under graph key 7");
  EXPECT_MAXC_ERROR(model_->debug_verify_replay(key_, a), Code::kFailedPrecondition,
                    "nothing is captured under graph key 7");
  const std::vector<uint64_t> two{1, 1};
  EXPECT_MAXC_ERROR(model_->capture(two, a), Code::kInvalidArgument,
                    "graph_keys has 2 keys but the model runs on one device (cpu:0)");
  EXPECT_MAXC_ERROR(model_->capture({}, a), Code::kInvalidArgument, "graph_keys has 0 keys");
  const std::vector<Ref<Tensor>> wide = {random_tensor({2, 5}, 2)};
  EXPECT_MAXC_ERROR(model_->capture(key_, wide), Code::kInvalidArgument, "input 0 'x'");
  const std::vector<Ref<Tensor>> out = model_->capture(key_, a);
  EXPECT_MAXC_ERROR(model_->replay(key_, wide), Code::kInvalidArgument, "input 0 'x'");
  const std::vector<float> before = values(out[0]);
  EXPECT_MAXC_ERROR(model_->replay(key_, std::vector<Ref<Tensor>>{}), Code::kInvalidArgument, "");
  EXPECT_EQ(values(out[0]), before) << "a refused replay wrote the outputs";
  EXPECT_NO_THROW(model_->replay(key_, a));
  EXPECT_EQ(values(model_->execute(a)[0]), before);
}

TEST_F(Capture, TheGraphKeepsTheWeightsItWasCapturedWith) {
  const std::vector<Ref<Tensor>> a = {random_tensor({2, 4}, 2)};
  const std::vector<Ref<Tensor>> out = model_->capture(key_, a);
  const std::vector<float> before = values(out[0]);
  model_->reload({{"w", random_tensor({4, 3}, 9)}});
  model_->replay(key_, a);
  EXPECT_EQ(values(out[0]), before);
  EXPECT_NE(values(model_->execute(a)[0]), before);
}

TEST_F(Capture, VerifyComparesTheEagerLaunchesWithTheRecordedOnes) {
  const std::vector<Ref<Tensor>> a = {random_tensor({3, 4}, 2)};
  model_->capture(key_, a);
  EXPECT_NO_THROW(model_->debug_verify_replay(key_, a));
  LaunchTrace trace;
  model_->execute(a);
  ASSERT_FALSE(trace.entries().empty());
  EXPECT_NE(trace.entries()[0].find("[3, 3]"), std::string::npos) << trace.entries()[0];
}

TEST(LaunchTraceCompare, NamesTheFirstDifference) {
  EXPECT_NO_THROW(expect_same_launches({"a", "b"}, {"a", "b"}, "graph key 1"));
  EXPECT_MAXC_ERROR(expect_same_launches({"a", "b"}, {"a", "c"}, "graph key 1"), Code::kFailedPrecondition,
                    "the eager run launched 2 kernels and graph key 1 holds 2; they differ at launch 1: eager "
                    "'b', recorded 'c'");
  EXPECT_MAXC_ERROR(expect_same_launches({"a"}, {"a", "c"}, "graph key 1"), Code::kFailedPrecondition,
                    "differ at launch 1: eager nothing, recorded 'c'");
}

TEST(LaunchTraceCompare, TracesNestAndOnlyTheInnermostRecords) {
  LaunchTrace outer;
  LaunchTrace::record("x");
  {
    LaunchTrace inner;
    LaunchTrace::record("y");
    EXPECT_EQ(inner.entries(), (std::vector<std::string>{"y"}));
  }
  LaunchTrace::record("z");
  EXPECT_EQ(outer.entries(), (std::vector<std::string>{"x", "z"}));
}

}  // namespace
}  // namespace maxc
