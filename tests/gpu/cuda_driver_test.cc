// Loading the CUDA driver: the "no driver" answers (no library, not a driver, cuInit
// failing) are ordinary results, never aborts, and the Device layer reports them; a driver
// that loads is bound and counted. Runs on any machine: fakes stand in for libcuda.
#include "driver/cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include "driver/cuda/cuda_error.h"
#include "driver/cuda/cuda_platform.h"
#include "driver/device.h"
#include "driver/test_util.h"
#include "gpu/fake_cuda.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

TEST(CudaDriver, MissingLibraryIsUnavailable) {
  auto d = load_cuda_driver("/nonexistent/dir/libcuda.so.1");
  EXPECT_FALSE(d->available);
  EXPECT_EQ(d->device_count, 0);
  EXPECT_NE(d->unavailable_reason.find("no CUDA driver"), std::string::npos) << d->unavailable_reason;
  EXPECT_NE(d->unavailable_reason.find("/nonexistent/dir/libcuda.so.1"), std::string::npos) << d->unavailable_reason;
}

TEST(CudaDriver, LibraryThatIsNoDriverIsUnavailable) {
  // libm opens fine but has none of the driver's symbols.
  auto d = load_cuda_driver("libm.so.6");
  EXPECT_FALSE(d->available);
  EXPECT_NE(d->unavailable_reason.find("libm.so.6 lacks cuGetErrorName"), std::string::npos) << d->unavailable_reason;
  EXPECT_EQ(d->api.cuInit, nullptr);  // an incomplete table is not left half-filled
}

TEST(CudaDriver, MissingSymbolNamesIt) {
  auto d = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n, {"cuMemcpyPeerAsync"}); }, "fake");
  EXPECT_FALSE(d->available);
  EXPECT_NE(d->unavailable_reason.find("fake lacks cuMemcpyPeerAsync"), std::string::npos) << d->unavailable_reason;
}

TEST(CudaDriver, FailingInitIsUnavailableWithTheDriversWords) {
  reset_fake();
  fake().init_result = result::kNoDevice;
  auto d = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake libcuda");
  EXPECT_FALSE(d->available);
  EXPECT_EQ(d->device_count, 0);
  EXPECT_NE(d->unavailable_reason.find("cuInit of fake libcuda failed: CUDA_ERROR_NO_DEVICE"), std::string::npos)
      << d->unavailable_reason;
}

TEST(CudaDriver, NoDevicesIsUnavailable) {
  reset_fake();
  fake().device_count = 0;
  auto d = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake");
  EXPECT_FALSE(d->available);
  EXPECT_NE(d->unavailable_reason.find("sees no device"), std::string::npos) << d->unavailable_reason;
}

TEST(CudaDriver, WorkingDriverIsCounted) {
  reset_fake();
  auto d = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake");
  ASSERT_TRUE(d->available) << d->unavailable_reason;
  EXPECT_EQ(d->device_count, 2);
  EXPECT_EQ(d->version, 12040);
  EXPECT_EQ(driver_version_string(GpuBackend::kCuda, d->version), "12.4");
  EXPECT_TRUE(d->unavailable_reason.empty());
}

TEST(CudaDriver, PlatformOfAnUnavailableDriverHasNoDevices) {
  auto d = load_cuda_driver("/nonexistent/libcuda.so.1");
  CudaPlatform platform(*d);
  EXPECT_EQ(platform.device_count(), 0);
  EXPECT_MAXC_ERROR(platform.device(0), Code::kNotFound, "no CUDA device 0", "/nonexistent/libcuda.so.1");
}

TEST(CudaDriver, PlatformMakesEachDeviceOnce) {
  reset_fake();
  auto d = init_cuda_driver([](const char* n) { return fake_cuda_symbol(n); }, "fake");
  CudaPlatform platform(*d);
  ASSERT_EQ(platform.device_count(), 2);
  EXPECT_EQ(fake().contexts_retained, 0);  // nothing is opened before it is asked for
  CudaDevice& a = platform.device(1);
  EXPECT_EQ(&platform.device(1), &a);
  EXPECT_EQ(a.ordinal(), 1);
  EXPECT_EQ(fake().contexts_retained, 1);
  EXPECT_MAXC_ERROR(platform.device(2), Code::kNotFound, "no CUDA device 2", "the driver sees 2");
  EXPECT_MAXC_ERROR(platform.device(-1), Code::kNotFound, "no CUDA device -1");
}

TEST(CudaDriver, DefaultLibraryHonoursTheEnvironment) {
  const char* old = std::getenv("MAX_C_CUDA_LIBRARY");
  const std::string saved = old ? old : "";
  setenv("MAX_C_CUDA_LIBRARY", "/opt/driver/libcuda.so.1", 1);
  EXPECT_EQ(default_cuda_library(), "/opt/driver/libcuda.so.1");
  unsetenv("MAX_C_CUDA_LIBRARY");
  EXPECT_EQ(default_cuda_library(), "libcuda.so.1");
  if (old) setenv("MAX_C_CUDA_LIBRARY", saved.c_str(), 1);
}

// The process's own driver: whatever this machine has, asking never aborts, and without a
// GPU the CPU stays the only device with a clear reason for the rest.
TEST(CudaDriver, ProcessDriverWithoutAGpuExplainsItself) {
  const int32_t count = Device::accelerator_count();
  ASSERT_GE(count, 0);
  EXPECT_EQ(count, CudaPlatform::process().device_count());
  if (count > 0) GTEST_SKIP() << "this machine has " << count << " CUDA device(s); the no-driver path is not its";
  EXPECT_FALSE(cuda_driver().unavailable_reason.empty());
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCuda, 0), Code::kNotFound, "no CUDA device with id 0",
                    "sees 0 accelerators", cuda_driver().unavailable_reason.c_str());
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCuda, -1), Code::kNotFound, "sees 0 accelerators");
  EXPECT_EQ(Device::get(Device::Kind::kCpu, 0)->name(), "cpu:0");
}

TEST(CudaError, CodesFollowWhatTheCallerCanDo) {
  EXPECT_EQ(cuda_status_code(result::kOutOfMemory), Code::kResourceExhausted);
  EXPECT_EQ(cuda_status_code(result::kNoDevice), Code::kNotFound);
  EXPECT_EQ(cuda_status_code(result::kInvalidDevice), Code::kNotFound);
  EXPECT_EQ(cuda_status_code(result::kStubLibrary), Code::kUnavailable);
  EXPECT_EQ(cuda_status_code(result::kNotSupported), Code::kUnimplemented);
  EXPECT_EQ(cuda_status_code(result::kIllegalAddress), Code::kInternal);
  EXPECT_EQ(cuda_status_code(result::kLaunchTimeout), Code::kDeadlineExceeded);
  EXPECT_EQ(cuda_status_code(12345), Code::kInternal);
}

TEST(CudaError, TextPrefersTheDriversNamesAndFallsBackToOurs) {
  CudaApi api;
  ASSERT_EQ(bind_cuda_api([](const char* n) { return fake_cuda_symbol(n); }, api), "");
  EXPECT_EQ(cuda_error_text(&api, result::kIllegalAddress),
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
  // The fake driver cannot name these: our table can, and a number is the last resort.
  EXPECT_EQ(cuda_error_text(&api, result::kLaunchFailed), "CUDA_ERROR_LAUNCH_FAILED");
  EXPECT_EQ(cuda_error_text(nullptr, result::kStubLibrary), "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_EQ(cuda_error_text(&api, 4242), "CUDA error 4242");
  EXPECT_MAXC_ERROR(check_cuda(api, result::kOutOfMemory, "cuMemAlloc_v2 of 64 bytes"), Code::kResourceExhausted,
                    "cuMemAlloc_v2 of 64 bytes failed: CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_NO_THROW(check_cuda(api, result::kSuccess, "anything"));
}

}  // namespace
}  // namespace maxc::testing
