// CI's guard for the GPU kernels on machines without a GPU: every kernel source under
// kernels/cuda, with every instance of the catalog, compiles with NVRTC for sm_80 and sm_90
// through the project's own loader and compiler; so do generated fused kernels, and the
// kernel cache round-trips real compiler output. NVRTC comes from $MAX_C_NVRTC_LIBRARY, the
// system, or the nvidia-cuda-nvrtc-cu12 wheel in the source tree's .venv (scripts/setup.sh).
// Without NVRTC these tests skip with the reason, or fail when MAX_C_REQUIRE_NVRTC=1 (or
// MAX_C_REQUIRE_GPU=1) says it must be there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>

#include "driver/cuda/kernel_cache.h"
#include "driver/cuda/nvrtc_compiler.h"
#include "driver/test_util.h"
#include "gpu/catalog_compile_test_util.h"
#include "gpu/gpu_test_util.h"
#include "kernels/cuda/fused_elementwise.h"
#include "kernels/cuda/kernel_catalog.h"
#include "kernels/cuda/kernel_sources.h"

// NVRTC keeps process-wide state that a leak checker would report at exit; only frames
// inside libnvrtc are excused (a hook LeakSanitizer reads in the sanitizer build).
extern "C" const char* __lsan_default_suppressions() { return "leak:libnvrtc\n"; }

namespace maxc::testing {
namespace {

using namespace maxc::cuda;

const NvrtcLibrary& test_nvrtc() {
  static const NvrtcLibrary* lib = [] {
    std::vector<std::string> candidates = nvrtc_library_candidates();
    const std::string venv = venv_nvrtc_library();
    if (!std::getenv("MAX_C_NVRTC_LIBRARY") && !venv.empty()) candidates.push_back(venv);
    return load_nvrtc(candidates).release();
  }();
  return *lib;
}

std::string why_no_nvrtc() {
  return "NVRTC is not installed (" + test_nvrtc().unavailable_reason +
         "); scripts/setup.sh installs the nvidia-cuda-nvrtc-cu12 wheel into .venv";
}

#define MAXC_NEED_NVRTC() \
  if (!test_nvrtc().available) MAXC_SKIP_UNLESS_REQUIRED(nvrtc_required(), why_no_nvrtc())

const std::vector<std::string> kArchitectures = {"sm_80", "sm_90"};

class CatalogKernels : public ::testing::TestWithParam<SourceAndArchitecture> {};

TEST_P(CatalogKernels, Compile) {
  MAXC_NEED_NVRTC();
  const auto& [source, arch] = GetParam();
  const std::vector<std::string> instances = catalog_instances(source);
  ASSERT_FALSE(instances.empty()) << source << " has no instances in the catalog";
  CompileRequest r{gpu::kernel_source(source), arch, {}, instances};
  NvrtcCompiler compiler(test_nvrtc());
  const auto start = std::chrono::steady_clock::now();
  CompiledKernels k;
  try {
    k = compiler.compile(r);
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ nvrtc    ] " << source << " for " << arch << ": " << instances.size() << " instances, "
            << k.image.size() << " bytes of cubin in " << seconds << " s with NVRTC " << test_nvrtc().version() << "\n";
  if (!k.log.empty()) std::cout << k.log << "\n";
  EXPECT_EQ(k.format, CompiledKernels::Format::kCubin);
  EXPECT_FALSE(k.image.empty());
  expect_one_symbol_per_instance(k, instances);
}

INSTANTIATE_TEST_SUITE_P(EverySource, CatalogKernels,
                         ::testing::Combine(::testing::ValuesIn(gpu::kernel_source_paths()),
                                            ::testing::ValuesIn(kArchitectures)),
                         source_and_architecture_name);

cpu::ElemProgramSpec gelu_bias_spec() {
  // out0 = gelu(x + bias) as float16, out1 = x > 0; x [4, 64] f16, bias [64] f32.
  cpu::ElemProgramSpec s;
  s.compute = cpu::ElemCompute::kFloat32;
  s.dims = {4, 64};
  s.leaves = {{DType::kFloat16, {4, 64}}, {DType::kFloat32, {64}}, {DType::kFloat32, {}}};
  s.steps = {{cpu::ElemOp::kAdd, {0, 1, -1}},
             {cpu::ElemOp::kGeluTanh, {3, -1, -1}, 0, 0, DType::kFloat16},
             {cpu::ElemOp::kGreater, {0, 2, -1}},
             {cpu::ElemOp::kClamp, {4, -1, -1}, -1.0, 6.5}};
  s.outputs = {{4, DType::kFloat16}, {5, DType::kBool}, {6, DType::kBFloat16}};
  return s;
}

cpu::ElemProgramSpec integer_spec() {
  cpu::ElemProgramSpec s;
  s.compute = cpu::ElemCompute::kInt64;
  s.dims = {3, 1, 5};
  s.leaves = {{DType::kInt32, {3, 1, 5}}, {DType::kInt64, {1, 5}}, {DType::kBool, {3, 1, 1}}};
  s.steps = {{cpu::ElemOp::kMod, {0, 1, -1}},
             {cpu::ElemOp::kClamp, {3, -1, -1}, -2.5, 1e30},
             {cpu::ElemOp::kWhere, {2, 4, 0}, 0, 0, DType::kInt8}};
  s.outputs = {{5, DType::kInt32}};
  return s;
}

// ~a ^ (b & c) in u64, and bool masks (0/1 floats) combined in float32.
cpu::ElemProgramSpec bitwise_spec(cpu::ElemCompute compute, DType dtype) {
  cpu::ElemProgramSpec s;
  s.compute = compute;
  s.dims = {2, 9};
  s.leaves = {{dtype, {2, 9}}, {dtype, {9}}, {dtype, {}}};
  const bool bools = dtype == DType::kBool;
  s.steps = {{bools ? cpu::ElemOp::kLogicalNot : cpu::ElemOp::kBitwiseNot, {0, -1, -1}},
             {cpu::ElemOp::kBitwiseAnd, {1, 2, -1}},
             {cpu::ElemOp::kBitwiseXor, {3, 4, -1}},
             {cpu::ElemOp::kBitwiseOr, {5, 0, -1}}};
  s.outputs = {{6, dtype}};
  return s;
}

TEST(NvrtcFusedKernels, GeneratedKernelsCompile) {
  MAXC_NEED_NVRTC();
  NvrtcCompiler compiler(test_nvrtc());
  for (const cpu::ElemProgramSpec& spec :
       {gelu_bias_spec(), integer_spec(), bitwise_spec(cpu::ElemCompute::kUInt64, DType::kUInt64),
        bitwise_spec(cpu::ElemCompute::kFloat32, DType::kBool)}) {
    const gpu::FusedKernel fused = gpu::generate_fused_elementwise(spec);
    for (const std::string& arch : kArchitectures) {
      CompileRequest r{gpu::kernel_source_from_text(fused.name + ".cu", fused.source), arch, {}, {}};
      try {
        const CompiledKernels k = compiler.compile(r);
        EXPECT_NE(k.image.find(fused.name), std::string::npos) << "the cubin lacks the kernel's symbol";
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\n---- generated source ----\n" << fused.source;
      }
    }
  }
}

// NVRTC finds its builtins library through its own RUNPATH, which AddressSanitizer's dlopen
// interceptor defeats; the loader opens it first so the sanitizer build compiles too.
TEST(NvrtcCompile, BuiltinsArePreloadedFromNvrtcsDirectory) {
  MAXC_NEED_NVRTC();
  ASSERT_NE(test_nvrtc().builtins, nullptr) << "no libnvrtc-builtins.so." << test_nvrtc().version() << " next to "
                                            << test_nvrtc().path;
  EXPECT_NE(test_nvrtc().builtins->name().find("libnvrtc-builtins.so." + test_nvrtc().version()), std::string::npos);
}

TEST(NvrtcCompile, BrokenSourceReportsTheLog) {
  MAXC_NEED_NVRTC();
  NvrtcCompiler compiler(test_nvrtc());
  CompileRequest r{gpu::kernel_source_from_text("broken.cu", "__global__ void k() { undeclared_name = 1; }"), "sm_80",
                   {}, {}};
  EXPECT_MAXC_ERROR(compiler.compile(r), Code::kInternal, "could not compile broken.cu for sm_80",
                    "undeclared_name");
}

TEST(NvrtcCompile, NewerGpuThanNvrtcGetsPtx) {
  MAXC_NEED_NVRTC();
  NvrtcCompiler compiler(test_nvrtc());
  CompileRequest r{gpu::kernel_source("fill.cu"), "sm_999", {}, {gpu::fill_kernel(DType::kFloat32)}};
  const CompiledKernels k = compiler.compile(r);
  EXPECT_EQ(k.format, CompiledKernels::Format::kPtx);
  EXPECT_NE(k.image.find(".entry"), std::string::npos);
  EXPECT_NE(k.image.find(k.lowered(gpu::fill_kernel(DType::kFloat32))), std::string::npos);
}

TEST(NvrtcCompile, KernelCacheRoundTripsRealOutput) {
  MAXC_NEED_NVRTC();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("max_c_nvrtc_cache_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  NvrtcCompiler compiler(test_nvrtc());
  CompileRequest r{gpu::kernel_source("softmax.cu"), "sm_90", {}, {gpu::softmax_kernel(DType::kFloat16, true)}};
  std::shared_ptr<const CompiledKernels> first;
  {
    KernelCache cache(compiler, dir.string());
    first = cache.get(r);
    EXPECT_EQ(cache.stats().compiles, 1u);
  }
  KernelCache again(compiler, dir.string());
  auto second = again.get(r);
  EXPECT_EQ(again.stats().disk_hits, 1u);
  EXPECT_EQ(again.stats().compiles, 0u);
  EXPECT_EQ(second->image, first->image);
  EXPECT_EQ(second->lowered_names, first->lowered_names);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace maxc::testing
