// Finding NVRTC and choosing its target, without needing NVRTC: the search order, the
// answer when nothing is found, and how an architecture maps to a cubin or PTX target.
#include "driver/cuda/nvrtc_api.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/cuda/nvrtc_compiler.h"
#include "driver/test_util.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

TEST(NvrtcLoader, CandidatesFollowTheEnvironment) {
  const char* old = std::getenv("MAX_C_NVRTC_LIBRARY");
  const std::string saved = old ? old : "";
  unsetenv("MAX_C_NVRTC_LIBRARY");
  const std::vector<std::string> defaults = nvrtc_library_candidates();
  ASSERT_FALSE(defaults.empty());
  EXPECT_EQ(defaults.front(), "libnvrtc.so.12");
  EXPECT_NE(std::find(defaults.begin(), defaults.end(), "libnvrtc.so"), defaults.end());
  setenv("MAX_C_NVRTC_LIBRARY", "/opt/nvrtc/libnvrtc.so.12", 1);
  EXPECT_EQ(nvrtc_library_candidates(), std::vector<std::string>{"/opt/nvrtc/libnvrtc.so.12"});
  if (old) setenv("MAX_C_NVRTC_LIBRARY", saved.c_str(), 1);
  else unsetenv("MAX_C_NVRTC_LIBRARY");
}

TEST(NvrtcLoader, NothingFoundSaysWhereItLooked) {
  auto lib = load_nvrtc({"/nonexistent/libnvrtc.so.12", "libm.so.6"});
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("MAX_C_NVRTC_LIBRARY"), std::string::npos) << lib->unavailable_reason;
  EXPECT_NE(lib->unavailable_reason.find("/nonexistent/libnvrtc.so.12"), std::string::npos) << lib->unavailable_reason;
  EXPECT_NE(lib->unavailable_reason.find("libm.so.6 lacks nvrtcGetErrorString"), std::string::npos)
      << lib->unavailable_reason;
}

TEST(NvrtcLoader, CompilerWithoutNvrtcIsUnavailable) {
  auto lib = load_nvrtc({"/nonexistent/libnvrtc.so"});
  NvrtcCompiler compiler(*lib);
  EXPECT_EQ(compiler.identity().rfind("nvrtc (unavailable)", 0), 0u);
  CompileRequest r;
  r.source = {"k.cu", "", {}};
  r.architecture = "sm_90";
  EXPECT_MAXC_ERROR(compiler.compile(r), Code::kUnavailable, "cannot compile k.cu", "NVRTC not found");
}

TEST(NvrtcTarget, KnownArchitecturesGetACubin) {
  const std::vector<int> supported = {75, 80, 86, 89, 90};
  NvrtcTarget t = choose_nvrtc_target("sm_90", supported, "12.4");
  EXPECT_EQ(t.option, "--gpu-architecture=sm_90");
  EXPECT_EQ(t.format, CompiledKernels::Format::kCubin);
  EXPECT_EQ(choose_nvrtc_target("sm_90a", supported, "12.4").option, "--gpu-architecture=sm_90a");
}

TEST(NvrtcTarget, NewerArchitecturesGetPtxOfTheNewestBelow) {
  const std::vector<int> supported = {75, 80, 86, 89, 90};
  NvrtcTarget t = choose_nvrtc_target("sm_120", supported, "12.4");
  EXPECT_EQ(t.option, "--gpu-architecture=compute_90");
  EXPECT_EQ(t.format, CompiledKernels::Format::kPtx);
  EXPECT_EQ(choose_nvrtc_target("sm_87", supported, "12.4").option, "--gpu-architecture=compute_86");
}

TEST(NvrtcTarget, OlderOrMalformedArchitecturesAreRefused) {
  const std::vector<int> supported = {75, 80, 90};
  EXPECT_MAXC_ERROR(choose_nvrtc_target("sm_70", supported, "12.4"), Code::kUnimplemented,
                    "NVRTC 12.4 cannot compile for sm_70", "oldest architecture is sm_75");
  for (const char* bad : {"sm_", "90", "compute_90", "sm_9x0", "gfx942", ""})
    EXPECT_MAXC_ERROR(choose_nvrtc_target(bad, supported, "12.4"), Code::kInvalidArgument, "is not of the form sm_XY");
}

TEST(NvrtcCompilerOptions, IeeeArithmeticAlways) {
  const std::vector<std::string> o = NvrtcCompiler::base_options();
  EXPECT_NE(std::find(o.begin(), o.end(), "--ftz=false"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-std=c++17"), o.end());
  EXPECT_EQ(std::find(o.begin(), o.end(), "--use_fast_math"), o.end());
}

}  // namespace
}  // namespace maxc::testing
