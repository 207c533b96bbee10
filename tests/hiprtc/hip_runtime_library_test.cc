// The real HIP runtime library (Debian's libamdhip64.so.5, which scripts/setup.sh installs for
// hipRTC) bound into the driver table: every symbol the binding needs is there by its HIP
// name, and on a machine without an AMD GPU the runtime is unavailable with HIP's own reason,
// never an abort. Skips where the library is absent, or fails under MAX_C_REQUIRE_HIPRTC=1.
// (In its own binary: binding the real runtime sets the process's adapter targets, which
// gpu_tests' fake HIP must own.)
#include <gtest/gtest.h>

#include "driver/cuda/cuda_driver.h"
#include "driver/cuda/dynamic_library.h"
#include "driver/hip/hip_runtime.h"
#include "gpu/gpu_test_util.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

TEST(HipRuntimeLibrary, EveryEntryBindsAndWithoutAGpuItSaysWhy) {
  std::string why;
  if (!DynamicLibrary::open("libamdhip64.so.5", &why))
    MAXC_SKIP_UNLESS_REQUIRED(hiprtc_required(), "no HIP runtime: " + why);
  auto d = load_hip_driver({"libamdhip64.so.5"});
  EXPECT_EQ(d->api.backend, GpuBackend::kHip);
  EXPECT_EQ(d->unavailable_reason.find("lacks"), std::string::npos) << d->unavailable_reason;
  if (d->available) {
    EXPECT_GT(d->device_count, 0);
    GTEST_SKIP() << "this machine has " << d->device_count << " HIP device(s)";
  }
  EXPECT_NE(d->unavailable_reason.find("libamdhip64.so.5"), std::string::npos) << d->unavailable_reason;
  EXPECT_NE(d->unavailable_reason.find("hipError"), std::string::npos) << d->unavailable_reason;
}

}  // namespace
}  // namespace maxc::testing
