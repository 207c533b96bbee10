// Model::capture / replay on the emulated GPU (tests/emulated_gpu): the run is recorded as a
// CUDA graph (one cuGraphLaunch per replay, nothing launched behind it), every address in it
// is fixed (a replay copies its inputs into the graph's own buffers and rewrites the
// capture's outputs), and work that cannot be captured is refused without leaving the stream
// in capture mode. The emulated driver keeps a capture's launches with their parameter values
// and runs the real softmax kernel when the graph launches, as the driver does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/cuda_graph.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "gpu_engine/engine_on_emulated.h"

namespace maxc::testing {
namespace {

std::vector<float> softmax_rows(const std::vector<float>& x, int64_t cols) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(std::exp(x[r * cols + c]) / sum);
  }
  return y;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const char* why = "") {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i << ": " << why;
}

class GpuCapture : public EngineOnEmulatedGpu {
 protected:
  void SetUp() override {
    EngineOnEmulatedGpu::SetUp();
    if (HasFatalFailure()) return;
    Graph g("softmax");
    ValueId x = g.add_input("x", TensorType{DType::kFloat32, {2, 3}, DeviceRef::gpu(0)});
    g.set_outputs({{"y", g.add_op("softmax", {x})[0]}});
    model_ = compile(g);
  }
  Ref<Tensor> on_gpu(std::vector<float> v) { return host_tensor({2, 3}, std::move(v))->copy(gpu_); }

  Ref<Model> model_;
  const std::vector<uint64_t> key_{3};
};

TEST_F(GpuCapture, ReplayLaunchesTheGraphOnceAndRewritesTheCapturedOutputs) {
  const std::vector<float> a = {0, 1, 2, 3, 4, 5}, b = {5, 0, 0, -1, -1, 2};
  const int graphs_before = driver_log().graph_execs_live, launches_before = driver_log().graph_launches;
  std::vector<Ref<Tensor>> out = model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu(a)});
  EXPECT_EQ(driver_log().graph_execs_live, graphs_before + 1);
  EXPECT_EQ(driver_log().graph_launches, launches_before + 1) << "capture records the run, then launches it once";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  expect_near(values_of(*out[0]), softmax_rows(a, 3));

  Ref<Tensor> in_b = on_gpu(b);
  driver_log().launches.clear();
  model_->replay(key_, std::vector<Ref<Tensor>>{in_b});
  EXPECT_EQ(driver_log().graph_launches, launches_before + 2);
  EXPECT_EQ(driver_log().launches.size(), 1u) << "the graph's one kernel, and nothing launched outside it";
  expect_near(values_of(*out[0]), softmax_rows(b, 3), "the replay read its input through the graph's buffer");
  EXPECT_EQ(values_of(*in_b), b) << "a replay only reads its inputs";
  EXPECT_NO_THROW(model_->debug_verify_replay(key_, std::vector<Ref<Tensor>>{in_b}));
}

TEST_F(GpuCapture, AGraphIsFreedWithItsModelOrWhenItsKeyIsCapturedAgain) {
  const int execs_before = driver_log().graph_execs_live, graphs_before = driver_log().graphs_live;
  model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu({1, 2, 3, 4, 5, 6})});
  model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu({1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(driver_log().graph_execs_live, execs_before + 1);
  model_ = Ref<Model>();
  EXPECT_EQ(driver_log().graph_execs_live, execs_before);
  EXPECT_EQ(driver_log().graphs_live, graphs_before);
}

TEST_F(GpuCapture, HostInputsAreRefusedByNameBeforeAnythingIsRecorded) {
  Ref<Tensor> host = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const int launches_before = driver_log().graph_launches;
  EXPECT_MAXC_ERROR(model_->capture(key_, std::vector<Ref<Tensor>>{host}), Code::kInvalidArgument,
                    "input 0 'x' is on cpu:0 but the model runs on gpu:0");
  EXPECT_EQ(driver_log().graph_launches, launches_before);
  EXPECT_MAXC_ERROR(model_->replay(key_, std::vector<Ref<Tensor>>{host->copy(gpu_)}), Code::kFailedPrecondition,
                    "nothing is captured under graph key 3");
}

// A synchronous copy inside a capture would wait for work that has not run: the driver
// refuses it, the capture fails naming why, and the stream takes ordinary work again.
TEST_F(GpuCapture, WorkThatCannotBeCapturedFailsAndLeavesTheStreamUsable) {
  const cuda::CudaDevice& device = *gpu_->cuda();
  cuda::CudaStream stream(device);
  Ref<Tensor> t = on_gpu({1, 2, 3, 4, 5, 6});
  float host[6];
  const int graphs_before = driver_log().graphs_live, invalidated_before = driver_log().captures_invalidated;
  EXPECT_MAXC_ERROR(cuda::CudaGraph::capture(stream, [&] { device.copy_to_host(host, t->data(), sizeof host); }),
                    Code::kFailedPrecondition, "CUDA_ERROR_STREAM_CAPTURE");
  EXPECT_EQ(driver_log().graphs_live, graphs_before);
  EXPECT_EQ(driver_log().captures_invalidated, invalidated_before + 1);
  EXPECT_NO_THROW(device.copy_to_host(host, t->data(), sizeof host, &stream));
  EXPECT_EQ(host[5], 6.f);
  // An error from the recorded code comes back as it was, the capture ended.
  EXPECT_MAXC_ERROR(cuda::CudaGraph::capture(stream, [] { fail(Code::kUnimplemented, "no kernel"); }),
                    Code::kUnimplemented, "no kernel");
  EXPECT_NO_THROW(stream.synchronize());
}

}  // namespace
}  // namespace maxc::testing
