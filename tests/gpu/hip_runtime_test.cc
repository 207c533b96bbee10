// HIP's runtime bound into the driver table (driver/hip/hip_runtime.h), against a fake HIP
// (gpu/fake_hip.h): every entry binds by its HIP name, the five adapted calls translate
// (error names, attribute numbers, the gfx target, peer copies), and a CudaDevice over the
// table is a HIP device: "hip:0", its gfx target as the architecture, HIP's words in errors.
#include "driver/hip/hip_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "driver/cuda/cuda_device.h"
#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/cuda_error.h"
#include "driver/test_util.h"
#include "gpu/fake_hip.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

std::unique_ptr<CudaDriver> fake_hip_driver(std::set<std::string> hidden = {}) {
  return init_hip_driver([hidden](const char* n) { return fake_hip_symbol(n, hidden); }, "fake HIP");
}

TEST(HipRuntime, BindsEveryEntryAndInitializes) {
  reset_fake_hip();
  auto d = fake_hip_driver();
  ASSERT_TRUE(d->available) << d->unavailable_reason;
  EXPECT_EQ(d->api.backend, GpuBackend::kHip);
  EXPECT_EQ(d->device_count, 2);
  EXPECT_EQ(driver_version_string(GpuBackend::kHip, d->version), "5.2");
  EXPECT_NE(d->api.device_arch_name, nullptr);
#define MAXC_EXPECT_BOUND(name, params) EXPECT_NE(d->api.name, nullptr) << #name;
  MAXC_CUDA_DRIVER_FUNCTIONS(MAXC_EXPECT_BOUND)
#undef MAXC_EXPECT_BOUND
}

TEST(HipRuntime, MissingSymbolNamesItsHipName) {
  for (const char* hidden : {"hipModuleLaunchKernel", "hipMemcpyAsync", "hipGetDeviceProperties"}) {
    auto d = fake_hip_driver({hidden});
    EXPECT_FALSE(d->available);
    EXPECT_NE(d->unavailable_reason.find(std::string("fake HIP lacks ") + hidden + " (not a HIP runtime"),
              std::string::npos)
        << d->unavailable_reason;
    EXPECT_EQ(d->api.cuInit, nullptr);
    EXPECT_EQ(d->api.backend, GpuBackend::kHip);
  }
}

TEST(HipRuntime, FailingInitSpeaksHip) {
  reset_fake_hip();
  fake().init_result = result::kNoDevice;
  auto d = fake_hip_driver();
  EXPECT_FALSE(d->available);
  EXPECT_NE(d->unavailable_reason.find("hipInit of fake HIP failed: hipErrorNoDevice"), std::string::npos)
      << d->unavailable_reason;
  reset_fake_hip();
  fake().device_count = 0;
  EXPECT_NE(fake_hip_driver()->unavailable_reason.find("the HIP driver of fake HIP sees no device"), std::string::npos);
}

TEST(HipRuntime, AttributesTranslateToHipNumbers) {
  EXPECT_EQ(hip::hip_attribute(attribute::kWarpSize), hip::attribute::kWarpSize);
  EXPECT_EQ(hip::hip_attribute(attribute::kComputeCapabilityMajor), 23);
  EXPECT_EQ(hip::hip_attribute(attribute::kMaxSharedMemoryPerBlock), 74);
  EXPECT_EQ(hip::hip_attribute(9999), -1);
  reset_fake_hip();
  auto d = fake_hip_driver();
  int value = 0;
  EXPECT_EQ(d->api.cuDeviceGetAttribute(&value, attribute::kWarpSize, 0), result::kSuccess);
  EXPECT_EQ(value, 64);
  EXPECT_EQ(d->api.cuDeviceGetAttribute(&value, 9999, 0), result::kInvalidValue) << "an untranslated attribute";
}

TEST(HipRuntime, ErrorTextIsHipsAndNotRepeated) {
  reset_fake_hip();
  auto d = fake_hip_driver();
  EXPECT_EQ(cuda_error_text(&d->api, result::kOutOfMemory), "hipErrorOutOfMemory (out of memory)");
  EXPECT_EQ(cuda_error_text(&d->api, result::kNoDevice), "hipErrorNoDevice");
}

class HipDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_fake_hip();
    driver_ = fake_hip_driver();
    ASSERT_TRUE(driver_->available) << driver_->unavailable_reason;
    device_ = std::make_unique<CudaDevice>(driver_->api, 0);
  }
  void TearDown() override {
    device_.reset();
    EXPECT_EQ(fake().context_depth, 0) << "a context push was not popped";
    EXPECT_EQ(fake().bad_frees, 0);
  }
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaDevice> device_;
};

TEST_F(HipDeviceTest, PropertiesAreHipsWithTheGfxTarget) {
  const CudaDeviceProperties& p = device_->properties();
  EXPECT_EQ(p.backend, GpuBackend::kHip);
  EXPECT_EQ(p.architecture(), "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(p.warp_size, 64);
  EXPECT_EQ(p.multiprocessors, 104);
  EXPECT_EQ(p.label(), "HIP device 0");
  EXPECT_EQ(device_->describe(), "hip:0 (Fake GPU 0, gfx90a:sramecc+:xnack-)");
}

TEST_F(HipDeviceTest, AnUnknownPropertiesLayoutIsAnErrorNotAGuess) {
  fake_hip().gcn_arch_name = "";  // what a runtime with another layout would show at that offset
  EXPECT_MAXC_ERROR(CudaDevice(driver_->api, 1), Code::kUnimplemented, "the architecture of HIP device 1",
                    "hipErrorNotSupported");
}

TEST_F(HipDeviceTest, CopiesRoundTripAndPeerCopiesUseHipMemcpyDefault) {
  CudaDevice other(driver_->api, 1);
  const char text[] = "across AMD GPUs";
  void* src = other.allocate(sizeof text, false);
  other.copy_to_device(src, text, sizeof text);
  void* dst = device_->allocate(sizeof text, false);
  device_->copy_from_peer(dst, other, src, sizeof text);
  EXPECT_EQ(fake_hip().memcpy_async_calls, 1);
  EXPECT_EQ(fake_hip().last_memcpy_kind, hip::kMemcpyDefault);
  char back[sizeof text] = {};
  device_->copy_to_host(back, dst, sizeof text);
  EXPECT_STREQ(back, text);
  other.deallocate(src);
  device_->deallocate(dst);
}

TEST_F(HipDeviceTest, OutOfMemoryNamesTheHipDevice) {
  fake().capacity = 1024;
  EXPECT_MAXC_ERROR(device_->allocate(size_t{1} << 20, false), Code::kResourceExhausted, "out of memory on hip:0");
  void* small = device_->allocate(64, false);  // the device stays usable
  device_->deallocate(small);
}

TEST(HipRuntime, CandidatesFollowTheEnvironment) {
  const char* old = std::getenv("MAX_C_HIP_LIBRARY");
  const std::string saved = old ? old : "";
  setenv("MAX_C_HIP_LIBRARY", "/opt/rocm/lib/libamdhip64.so", 1);
  EXPECT_EQ(hip::hip_runtime_candidates(), std::vector<std::string>{"/opt/rocm/lib/libamdhip64.so"});
  setenv("MAX_C_HIP_LIBRARY", "", 1);
  EXPECT_TRUE(hip::hip_runtime_candidates().empty());
  EXPECT_NE(load_hip_driver({})->unavailable_reason.find("MAX_C_HIP_LIBRARY is empty"), std::string::npos);
  unsetenv("MAX_C_HIP_LIBRARY");
  EXPECT_EQ(hip::hip_runtime_candidates().front(), "libamdhip64.so.6");
  if (old) setenv("MAX_C_HIP_LIBRARY", saved.c_str(), 1);
}

TEST(HipRuntime, MissingLibraryIsUnavailableNamingEveryCandidate) {
  auto d = load_hip_driver({"/nonexistent/libamdhip64.so.6", "libm.so.6"});
  EXPECT_FALSE(d->available);
  EXPECT_EQ(d->api.backend, GpuBackend::kHip);
  for (const char* part : {"no HIP runtime: ", "/nonexistent/libamdhip64.so.6", "libm.so.6 lacks hipGetErrorName"})
    EXPECT_NE(d->unavailable_reason.find(part), std::string::npos) << d->unavailable_reason;
}

}  // namespace
}  // namespace maxc::testing
