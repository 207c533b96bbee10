// The HIP side of CI's kernel guard: every kernel source under kernels/cuda, with every
// instance of the catalog, compiles with hipRTC for a CDNA (wave64) and an RDNA (wave32)
// target through the project's loader and compiler, as tests/nvrtc does with NVRTC; so do
// generated fused kernels. hipRTC needs no GPU; scripts/setup.sh installs Debian's. Without
// it these tests skip with the reason, or fail when MAX_C_REQUIRE_HIPRTC=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "driver/hip/hiprtc_compiler.h"
#include "driver/test_util.h"
#include "gpu/catalog_compile_test_util.h"
#include "gpu/gpu_test_util.h"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"
#include "kernels/cuda/kernel_sources.h"

namespace maxc::testing {
namespace {

using namespace maxc::cuda;
using namespace maxc::hip;

std::string why_no_hiprtc() {
  return "hipRTC is not installed (" + hiprtc().unavailable_reason +
         "); scripts/setup.sh installs Debian's libamdhip64-5 and libhiprtc-builtins5";
}

#define MAXC_NEED_HIPRTC() \
  if (!hiprtc().available) MAXC_SKIP_UNLESS_REQUIRED(hiprtc_required(), why_no_hiprtc())

// MI200 (CDNA2, 64-wide wavefronts) and RX 6900 (RDNA2, 32-wide).
const std::vector<std::string> kArchitectures = {"gfx90a", "gfx1030"};

TEST(HiprtcLoader, CandidatesFollowTheEnvironment) {
  const char* old = std::getenv("MAX_C_HIPRTC_LIBRARY");
  const std::string saved = old ? old : "";
  unsetenv("MAX_C_HIPRTC_LIBRARY");
  const std::vector<std::string> defaults = hiprtc_library_candidates();
  ASSERT_FALSE(defaults.empty());
  EXPECT_EQ(defaults.front(), "libhiprtc.so.6");
  EXPECT_NE(std::find(defaults.begin(), defaults.end(), "libamdhip64.so.5"), defaults.end());
  setenv("MAX_C_HIPRTC_LIBRARY", "/opt/rocm/lib/libhiprtc.so.6", 1);
  EXPECT_EQ(hiprtc_library_candidates(), std::vector<std::string>{"/opt/rocm/lib/libhiprtc.so.6"});
  if (old) setenv("MAX_C_HIPRTC_LIBRARY", saved.c_str(), 1);
  else unsetenv("MAX_C_HIPRTC_LIBRARY");
}

TEST(HiprtcLoader, NothingFoundSaysWhereItLooked) {
  auto lib = load_hiprtc({"/nonexistent/libhiprtc.so.6", "libm.so.6"});
  EXPECT_FALSE(lib->available);
  EXPECT_NE(lib->unavailable_reason.find("MAX_C_HIPRTC_LIBRARY"), std::string::npos) << lib->unavailable_reason;
  EXPECT_NE(lib->unavailable_reason.find("/nonexistent/libhiprtc.so.6"), std::string::npos) << lib->unavailable_reason;
  EXPECT_NE(lib->unavailable_reason.find("libm.so.6 lacks hiprtcGetErrorString"), std::string::npos)
      << lib->unavailable_reason;
  HiprtcCompiler compiler(*lib);
  EXPECT_EQ(compiler.identity().rfind("hiprtc (unavailable)", 0), 0u);
  CompileRequest r;
  r.source = {"k.cu", "", {}};
  r.architecture = "gfx90a";
  EXPECT_MAXC_ERROR(compiler.compile(r), Code::kUnavailable, "cannot compile k.cu", "hipRTC not found");
}

TEST(HiprtcTarget, GfxTargetsWithFeatures) {
  EXPECT_EQ(hiprtc_target_option("gfx90a"), "--offload-arch=gfx90a");
  EXPECT_EQ(hiprtc_target_option("gfx942"), "--offload-arch=gfx942");
  EXPECT_EQ(hiprtc_target_option("gfx90a:sramecc+:xnack-"), "--offload-arch=gfx90a:sramecc+:xnack-");
  for (const char* bad : {"sm_90", "gfx", "gfx90z", "gfx90a:", "gfx90a:xnack", "gfx90a:XNACK+", ""})
    EXPECT_MAXC_ERROR(hiprtc_target_option(bad), Code::kInvalidArgument, "is not an AMD GPU target");
}

TEST(HiprtcCompilerOptions, IeeeArithmeticAlways) {
  const std::vector<std::string> o = HiprtcCompiler::base_options();
  EXPECT_NE(std::find(o.begin(), o.end(), "-fno-gpu-flush-denormals-to-zero"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-std=c++17"), o.end());
  EXPECT_EQ(std::find(o.begin(), o.end(), "-ffast-math"), o.end());
}

class HipCatalogKernels : public ::testing::TestWithParam<SourceAndArchitecture> {};

TEST_P(HipCatalogKernels, Compile) {
  MAXC_NEED_HIPRTC();
  const auto& [source, arch] = GetParam();
  const std::vector<std::string> instances = catalog_instances(source);
  ASSERT_FALSE(instances.empty()) << source << " has no instances in the catalog";
  HiprtcCompiler compiler(hiprtc());
  CompiledKernels k;
  try {
    k = compiler.compile(CompileRequest{gpu::kernel_source(source), arch, {}, instances});
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(k.format, CompiledKernels::Format::kCodeObject);
  ASSERT_GE(k.image.size(), 4u);
  EXPECT_EQ(k.image.substr(0, 4), "\x7f" "ELF") << "an AMD GPU code object is an ELF file";
  expect_one_symbol_per_instance(k, instances);
  for (const auto& [expression, symbol] : k.lowered_names)
    EXPECT_NE(k.image.find(symbol), std::string::npos) << "the code object lacks " << symbol;
}

INSTANTIATE_TEST_SUITE_P(EverySource, HipCatalogKernels,
                         ::testing::Combine(::testing::ValuesIn(gpu::kernel_source_paths()),
                                            ::testing::ValuesIn(kArchitectures)),
                         source_and_architecture_name);

// out0 = gelu(x + bias) as float16, out1 = x > 0, with x [4, 64] f16 and bias [64] f32: a
// generated kernel with a broadcast leaf, half storage and two outputs.
TEST(HiprtcFusedKernels, GeneratedKernelsCompile) {
  MAXC_NEED_HIPRTC();
  cpu::ElemProgramSpec s;
  s.compute = cpu::ElemCompute::kFloat32;
  s.dims = {4, 64};
  s.leaves = {{DType::kFloat16, {4, 64}}, {DType::kFloat32, {64}}, {DType::kFloat32, {}}};
  s.steps = {{cpu::ElemOp::kAdd, {0, 1, -1}},
             {cpu::ElemOp::kGeluTanh, {3, -1, -1}, 0, 0, DType::kFloat16},
             {cpu::ElemOp::kGreater, {0, 2, -1}}};
  s.outputs = {{4, DType::kFloat16}, {5, DType::kBool}};
  const gpu::FusedKernel fused = gpu::generate_fused_elementwise(s);
  HiprtcCompiler compiler(hiprtc());
  for (const std::string& arch : kArchitectures) {
    try {
      const CompiledKernels k =
          compiler.compile(CompileRequest{gpu::kernel_source_from_text(fused.name + ".cu", fused.source), arch, {}, {}});
      EXPECT_NE(k.image.find(fused.name), std::string::npos) << "the code object lacks the kernel's symbol";
    } catch (const Error& e) {
      ADD_FAILURE() << e.what() << "\n---- generated source ----\n" << fused.source;
    }
  }
}

TEST(HiprtcCompile, BrokenSourceReportsTheLog) {
  MAXC_NEED_HIPRTC();
  HiprtcCompiler compiler(hiprtc());
  CompileRequest r{gpu::kernel_source_from_text("broken.cu", "__global__ void k() { undeclared_name = 1; }"), "gfx90a",
                   {}, {}};
  EXPECT_MAXC_ERROR(compiler.compile(r), Code::kInternal, "could not compile broken.cu for gfx90a", "undeclared_name");
}

}  // namespace
}  // namespace maxc::testing
