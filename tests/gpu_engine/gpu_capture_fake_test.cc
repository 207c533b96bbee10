// Model::capture / replay on the fake CUDA driver (gpu/fake_cuda.h): the run is recorded as a
// CUDA graph (one cuGraphLaunch per replay, nothing launched behind it), every address in it
// is fixed (a replay copies its inputs into the graph's own buffers and rewrites the
// capture's outputs), and work that cannot be captured is refused without leaving the stream
// in capture mode. The fake records a capture's launches with their parameter values and runs
// them when the graph launches, as the driver does; softmax is emulated on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/cuda_graph.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/cuda/nvrtc_api.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "engine/compiled_model.h"
#include "engine/model.h"
#include "gpu/fake_cuda.h"
#include "gpu/gpu_test_util.h"
#include "gpu_engine/engine_on_fake.h"

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

// softmax_rows(x, y, rows, cols, inner) over the last axis (inner 1), its parameters bound by
// value as a graph node holds them.
std::function<void()> bind_softmax(const std::string& name, void** args) {
  EXPECT_NE(name.find("softmax_rows"), std::string::npos) << name;
  const auto* x = arg<const float*>(args, 0);
  auto* y = arg<float*>(args, 1);
  const auto rows = arg<int64_t>(args, 2), cols = arg<int64_t>(args, 3);
  return [=] {
    const std::vector<float> out = softmax_rows(std::vector<float>(x, x + rows * cols), cols);
    std::memcpy(y, out.data(), out.size() * sizeof(float));
  };
}

class GpuCaptureOnFake : public EngineOnFake {
 protected:
  void SetUp() override {
    EngineOnFake::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    fake().bind_launch = bind_softmax;
    Graph g("softmax");
    ValueId x = g.add_input("x", TensorType{DType::kFloat32, {2, 3}, DeviceRef::gpu(0)});
    g.set_outputs({{"y", g.add_op("softmax", {x})[0]}});
    model_ = compile(g);
  }
  void TearDown() override { fake().bind_launch = nullptr; }

  Ref<Tensor> on_gpu(std::vector<float> v) { return host_tensor({2, 3}, std::move(v))->copy(gpu_); }

  Ref<Model> model_;
  const std::vector<uint64_t> key_{3};
};

TEST_F(GpuCaptureOnFake, ReplayLaunchesTheGraphOnceAndRewritesTheCapturedOutputs) {
  const std::vector<float> a = {0, 1, 2, 3, 4, 5}, b = {5, 0, 0, -1, -1, 2};
  const int graphs_before = fake().graph_execs_live, launches_before = fake().graph_launches;
  std::vector<Ref<Tensor>> out = model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu(a)});
  EXPECT_EQ(fake().graph_execs_live, graphs_before + 1);
  EXPECT_EQ(fake().graph_launches, launches_before + 1) << "capture records the run, then launches it once";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->device().get(), gpu_.get());
  EXPECT_EQ(values_of(*out[0]), softmax_rows(a, 3));

  Ref<Tensor> in_b = on_gpu(b);
  fake().launches.clear();
  model_->replay(key_, std::vector<Ref<Tensor>>{in_b});
  EXPECT_EQ(fake().graph_launches, launches_before + 2);
  EXPECT_EQ(fake().launches.size(), 1u) << "the graph's one kernel, and nothing launched outside it";
  EXPECT_EQ(values_of(*out[0]), softmax_rows(b, 3)) << "the replay read its input through the graph's buffer";
  EXPECT_EQ(values_of(*in_b), b) << "a replay only reads its inputs";
  EXPECT_NO_THROW(model_->debug_verify_replay(key_, std::vector<Ref<Tensor>>{in_b}));
}

TEST_F(GpuCaptureOnFake, AGraphIsFreedWithItsModelOrWhenItsKeyIsCapturedAgain) {
  const int graphs_before = fake().graph_execs_live;
  model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu({1, 2, 3, 4, 5, 6})});
  model_->capture(key_, std::vector<Ref<Tensor>>{on_gpu({1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(fake().graph_execs_live, graphs_before + 1);
  model_ = Ref<Model>();
  EXPECT_EQ(fake().graph_execs_live, graphs_before);
  EXPECT_EQ(fake().graphs_live, 0);
}

TEST_F(GpuCaptureOnFake, HostInputsAreRefusedByNameBeforeAnythingIsRecorded) {
  Ref<Tensor> host = host_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const int launches_before = fake().graph_launches;
  EXPECT_MAXC_ERROR(model_->capture(key_, std::vector<Ref<Tensor>>{host}), Code::kInvalidArgument,
                    "input 0 'x' is on cpu:0 but the model runs on gpu:0");
  EXPECT_EQ(fake().graph_launches, launches_before);
  EXPECT_MAXC_ERROR(model_->replay(key_, std::vector<Ref<Tensor>>{host->copy(gpu_)}), Code::kFailedPrecondition,
                    "nothing is captured under graph key 3");
}

// A synchronous copy inside a capture would wait for work that has not run: the driver
// refuses it, the capture fails naming why, and the stream takes ordinary work again.
TEST_F(GpuCaptureOnFake, WorkThatCannotBeCapturedFailsAndLeavesTheStreamUsable) {
  const cuda::CudaDevice& device = *gpu_->cuda();
  cuda::CudaStream stream(device);
  Ref<Tensor> t = on_gpu({1, 2, 3, 4, 5, 6});
  float host[6];
  EXPECT_MAXC_ERROR(cuda::CudaGraph::capture(stream, [&] { device.copy_to_host(host, t->data(), sizeof host); }),
                    Code::kFailedPrecondition, "CUDA_ERROR_STREAM_CAPTURE");
  EXPECT_EQ(fake().graphs_live, 0);
  EXPECT_NO_THROW(device.copy_to_host(host, t->data(), sizeof host, &stream));
  EXPECT_EQ(host[5], 6.f);
  // An error from the recorded code comes back as it was, the capture ended.
  EXPECT_MAXC_ERROR(cuda::CudaGraph::capture(stream, [] { fail(Code::kUnimplemented, "no kernel"); }),
                    Code::kUnimplemented, "no kernel");
  EXPECT_NO_THROW(stream.synchronize());
}

}  // namespace
}  // namespace maxc::testing
