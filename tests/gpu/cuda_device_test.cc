// A CUDA device against the fake driver: properties, the caching allocator under a limit,
// zeroed allocation, pinned memory, copies, streams, events and modules, and the context
// discipline (every push popped, the primary context released).
#include "driver/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/cuda_event.h"
#include "driver/cuda/cuda_module.h"
#include "driver/cuda/cuda_stream.h"
#include "driver/test_util.h"
#include "gpu/fake_cuda.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_fake();
    driver_ = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake");
    ASSERT_TRUE(driver_->available) << driver_->unavailable_reason;
    device_ = std::make_unique<CudaDevice>(driver_->api, 0);
  }
  void TearDown() override {
    device_.reset();
    EXPECT_EQ(fake().context_depth, 0) << "a context push was not popped";
    EXPECT_EQ(fake().contexts_retained, 0) << "the primary context was not released";
    EXPECT_EQ(fake().bad_frees, 0);
  }
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaDevice> device_;
};

TEST_F(CudaDeviceTest, Properties) {
  const CudaDeviceProperties& p = device_->properties();
  EXPECT_EQ(p.name, "Fake GPU 0");
  EXPECT_EQ(p.architecture(), "sm_90");
  EXPECT_EQ(p.total_memory, size_t{80} << 30);
  EXPECT_EQ(p.multiprocessors, 132);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  EXPECT_TRUE(p.unified_addressing);
  EXPECT_EQ(device_->describe(), "cuda:0 (Fake GPU 0, sm_90)");
  size_t free_bytes = 0, total = 0;
  device_->memory_info(&free_bytes, &total);
  EXPECT_EQ(total, p.total_memory);
}

TEST_F(CudaDeviceTest, ArchitectureNamesTheComputeCapability) {
  fake().compute_major = 8;
  fake().compute_minor = 6;
  CudaDevice other(driver_->api, 1);
  EXPECT_EQ(other.properties().architecture(), "sm_86");
  EXPECT_EQ(other.describe(), "cuda:1 (Fake GPU 1, sm_86)");
}

TEST_F(CudaDeviceTest, FreedMemoryIsReusedNotFreed) {
  void* a = device_->allocate(1000, false);
  device_->deallocate(a);
  void* b = device_->allocate(900, false);  // the same size class
  EXPECT_EQ(a, b);
  EXPECT_EQ(fake().mem_allocs, 1);
  EXPECT_EQ(fake().mem_frees, 0);
  device_->deallocate(b);
  device_->allocator().release_cached();
  EXPECT_EQ(fake().mem_frees, 1);
  EXPECT_GE(fake().synchronizes, 1);  // the device is idle before memory goes back
}

TEST_F(CudaDeviceTest, ZeroedAllocationReadsAsZeros) {
  auto* p = static_cast<uint8_t*>(device_->allocate(256, false));
  std::memset(p, 0xab, 256);  // the fake's device memory is host memory
  device_->deallocate(p);
  auto* q = static_cast<uint8_t*>(device_->allocate(256, true));
  ASSERT_EQ(q, p);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(q[i], 0) << i;
  EXPECT_EQ(fake().memsets, 1);
  device_->deallocate(q);
}

TEST_F(CudaDeviceTest, MemoryLimitIsEnforced) {
  device_->set_memory_limit(1 << 20);
  void* a = device_->allocate(600 << 10, false);
  EXPECT_MAXC_ERROR(device_->allocate(600 << 10, false), Code::kResourceExhausted, "cuda:0 (Fake GPU 0, sm_90)",
                    "memory limit of 1048576 bytes");
  device_->deallocate(a);
  void* b = device_->allocate(600 << 10, false);  // fits once the first is back
  device_->deallocate(b);
}

TEST_F(CudaDeviceTest, DriverOutOfMemoryIsResourceExhausted) {
  fake().capacity = 4096;
  void* a = device_->allocate(4096, false);
  EXPECT_MAXC_ERROR(device_->allocate(4096, false), Code::kResourceExhausted, "out of memory on cuda:0",
                    "4096 bytes in use");
  device_->deallocate(a);
}

TEST_F(CudaDeviceTest, CopiesRoundTrip) {
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.5f);
  const size_t bytes = host.size() * sizeof(float);
  void* d1 = device_->allocate(bytes, false);
  void* d2 = device_->allocate(bytes, false);
  device_->copy_to_device(d1, host.data(), bytes);
  device_->copy_within(d2, d1, bytes);
  std::vector<float> back(host.size());
  device_->copy_to_host(back.data(), d2, bytes);
  EXPECT_EQ(back, host);
  device_->deallocate(d1);
  device_->deallocate(d2);
}

TEST_F(CudaDeviceTest, AsyncCopiesOnAStreamAndPinnedMemory) {
  CudaStream stream(*device_);
  auto* pinned = static_cast<int32_t*>(device_->allocate_pinned(64 * sizeof(int32_t)));
  for (int i = 0; i < 64; ++i) pinned[i] = i * i;
  void* d = device_->allocate(64 * sizeof(int32_t), false, &stream);
  device_->copy_to_device(d, pinned, 64 * sizeof(int32_t), &stream);
  std::memset(pinned, 0, 64 * sizeof(int32_t));
  device_->copy_to_host(pinned, d, 64 * sizeof(int32_t), &stream);
  stream.synchronize();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(pinned[i], i * i);
  device_->deallocate(d);
  device_->deallocate_pinned(pinned);
  EXPECT_EQ(fake().pinned_allocs, 1);
  device_->pinned_allocator().release_cached();
  EXPECT_EQ(fake().pinned_frees, 1);
}

TEST_F(CudaDeviceTest, PeerCopyBetweenDevices) {
  CudaDevice other(driver_->api, 1);
  const char text[] = "from device one";
  void* src = other.allocate(sizeof text, false);
  other.copy_to_device(src, text, sizeof text);
  void* dst = device_->allocate(sizeof text, false);
  device_->copy_from_peer(dst, other, src, sizeof text);
  char back[sizeof text] = {};
  device_->copy_to_host(back, dst, sizeof text);
  EXPECT_STREQ(back, text);
  other.deallocate(src);
  device_->deallocate(dst);
}

TEST_F(CudaDeviceTest, CopyFailureNamesTheCopyAndTheDriverError) {
  void* d = device_->allocate(16, false);
  char host[16] = {};
  fake().memcpy_result = result::kIllegalAddress;
  EXPECT_MAXC_ERROR(device_->copy_to_host(host, d, 16), Code::kInternal,
                    "copying 16 bytes from cuda:0 (Fake GPU 0, sm_90) to the host failed",
                    "CUDA_ERROR_ILLEGAL_ADDRESS");
  fake().memcpy_result = result::kSuccess;
  device_->deallocate(d);
}

TEST_F(CudaDeviceTest, ZeroByteCopiesTouchNothing) {
  fake().memcpy_result = result::kIllegalAddress;  // would fail if called
  EXPECT_NO_THROW(device_->copy_to_device(nullptr, nullptr, 0));
  EXPECT_NO_THROW(device_->copy_to_host(nullptr, nullptr, 0));
  fake().memcpy_result = result::kSuccess;
}

TEST_F(CudaDeviceTest, StreamsAndEvents) {
  {
    CudaStream blocking(*device_);
    CudaStream independent(*device_, /*non_blocking=*/true);
    EXPECT_EQ(fake().stream_flags, (std::vector<int>{0, static_cast<int>(kStreamNonBlocking)}));
    CudaEvent start(*device_, /*timing=*/true), end(*device_, /*timing=*/true), marker(*device_);
    start.record(&blocking);
    end.record(&blocking);
    independent.wait(end);
    end.synchronize();
    EXPECT_FLOAT_EQ(CudaEvent::elapsed_ms(start, end), 1.5f);
    EXPECT_MAXC_ERROR(CudaEvent::elapsed_ms(start, marker), Code::kInternal, "cuEventElapsedTime");
    marker.record(nullptr);
    EXPECT_TRUE(marker.done());
    fake().event_query_result = result::kNotReady;
    EXPECT_FALSE(marker.done());
    fake().event_query_result = result::kSuccess;
    EXPECT_EQ(fake().streams_live, 2);
    EXPECT_EQ(fake().events_live, 3);
  }
  EXPECT_EQ(fake().streams_live, 0);
  EXPECT_EQ(fake().events_live, 0);
}

TEST_F(CudaDeviceTest, StreamOfAnotherDeviceIsRefused) {
  CudaDevice other(driver_->api, 1);
  CudaStream stream(other);
  char host[4] = {};
  void* d = device_->allocate(4, false);
  EXPECT_MAXC_ERROR(device_->copy_to_host(host, d, 4, &stream), Code::kInvalidArgument, "a stream of cuda:1",
                    "was given to cuda:0");
  CudaEvent event(*device_);
  EXPECT_MAXC_ERROR(event.record(&stream), Code::kInvalidArgument, "cannot be recorded on a stream of cuda:1");
  device_->deallocate(d);
}

TEST_F(CudaDeviceTest, ModulesLoadLookUpAndLaunch) {
  {
    CudaModule module(*device_, "fake image with maxc_fused_1234 and _Z6kernelv", "test kernels");
    EXPECT_EQ(fake().modules_live, 1);
    CUfunction f = module.function("maxc_fused_1234");
    EXPECT_MAXC_ERROR(module.function("missing"), Code::kNotFound, "kernels test kernels have no function 'missing'");
    CudaStream stream(*device_);
    LaunchShape shape;
    shape.grid[0] = 4;
    shape.block[0] = 256;
    module.launch(f, shape, &stream, nullptr);
    EXPECT_EQ(fake().launches, std::vector<std::string>{"maxc_fused_1234"});
  }
  EXPECT_EQ(fake().modules_live, 0);
}

}  // namespace
}  // namespace maxc::testing
