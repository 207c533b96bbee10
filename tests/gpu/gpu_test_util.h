// Helpers shared by the GPU tests: skipping with a reason (or failing, when the environment
// says the thing must be there), and where to find NVRTC on a machine without a GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace maxc::testing {

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// MAX_C_REQUIRE_GPU=1 (a GPU machine in CI) turns every GPU skip into a failure.
inline bool gpu_required() { return env_flag("MAX_C_REQUIRE_GPU"); }
// MAX_C_REQUIRE_NVRTC=1 (set by scripts/test.sh when setup installed the NVRTC wheel) turns
// the kernel-compile skips into failures, so a broken kernel source fails CI.
inline bool nvrtc_required() { return env_flag("MAX_C_REQUIRE_NVRTC") || gpu_required(); }
// MAX_C_REQUIRE_HIPRTC=1 (set by scripts/test.sh when hipRTC is installed) does the same for
// the HIP compile of every kernel source.
inline bool hiprtc_required() { return env_flag("MAX_C_REQUIRE_HIPRTC"); }

// Skips the current test with `reason`, or fails it when `required`.
#define MAXC_SKIP_UNLESS_REQUIRED(required, reason)             \
  do {                                                          \
    if (required) {                                             \
      FAIL() << (reason);                                       \
    } else {                                                    \
      GTEST_SKIP() << (reason);                                 \
    }                                                           \
  } while (0)

// libnvrtc.so.12 of the nvidia-cuda-nvrtc-cu12 wheel in the source tree's .venv (what
// scripts/setup.sh installs), or "" when there is none.
inline std::string venv_nvrtc_library() {
#ifdef MAX_C_SOURCE_DIR
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path lib_dir = fs::path(MAX_C_SOURCE_DIR) / ".venv" / "lib";
  for (const auto& python : fs::directory_iterator(lib_dir, ec)) {
    const fs::path candidate = python.path() / "site-packages" / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12";
    if (fs::exists(candidate, ec)) return candidate.string();
  }
#endif
  return "";
}

}  // namespace maxc::testing
