// The kernel catalog and the embedded sources: every .cu under kernels/cuda is carried by
// the library as it is on disk and has instances in the catalog (so CI compiles it), and the
// instance names are spelled as the kernels declare them.
#include "kernels/cuda/kernel_catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "driver/test_util.h"
#include "kernels/cuda/kernel_sources.h"

namespace maxc::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> catalog_of(const std::string& source) {
  for (const gpu::KernelFamily& f : gpu::kernel_catalog())
    if (f.source == source) return f.instances;
  return {};
}

#ifdef MAX_C_SOURCE_DIR
TEST(KernelSources, EmbeddedSourcesAreTheFilesOnDisk) {
  const fs::path root = fs::path(MAX_C_SOURCE_DIR) / "kernels" / "cuda";
  std::map<std::string, std::string> on_disk;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cu" && ext != ".cuh") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    on_disk[fs::relative(e.path(), root).generic_string()] = text.str();
  }
  std::map<std::string, std::string> embedded;
  for (const gpu::EmbeddedSource& s : gpu::embedded_sources()) embedded[s.path] = s.text;
  EXPECT_EQ(embedded.size(), on_disk.size());
  for (const auto& [path, text] : on_disk) {
    auto it = embedded.find(path);
    ASSERT_NE(it, embedded.end()) << path << " is not embedded: rebuild";
    EXPECT_EQ(it->second, text) << path << " differs from its embedded copy: rebuild";
  }
}
#endif

TEST(KernelSources, EveryHeaderUnderBothItsNames) {
  const cuda::KernelSource s = gpu::kernel_source("softmax.cu");
  EXPECT_EQ(s.name, "softmax.cu");
  EXPECT_NE(s.text.find("softmax_rows"), std::string::npos);
  std::set<std::string> names;
  for (const auto& [name, text] : s.headers) names.insert(name);
  for (const char* h : {"common/cast.cuh", "cast.cuh", "common/platform.cuh", "platform.cuh", "common/block_reduce.cuh"})
    EXPECT_TRUE(names.count(h)) << h;
  EXPECT_MAXC_ERROR(gpu::kernel_source("nope.cu"), Code::kNotFound, "no CUDA kernel source 'nope.cu'", "softmax.cu");
  EXPECT_MAXC_ERROR(gpu::kernel_source("common/cast.cuh"), Code::kNotFound, "no CUDA kernel source");
}

TEST(KernelCatalog, EverySourceHasInstancesAndNoInstanceRepeats) {
  std::set<std::string> sources;
  std::set<std::string> instances;
  size_t total = 0;
  for (const gpu::KernelFamily& f : gpu::kernel_catalog()) {
    EXPECT_TRUE(sources.insert(f.source).second) << f.source << " twice";
    EXPECT_FALSE(f.instances.empty()) << f.source;
    for (const std::string& i : f.instances) {
      EXPECT_TRUE(instances.insert(i).second) << i << " twice";
      ++total;
    }
  }
  const std::vector<std::string> paths = gpu::kernel_source_paths();
  EXPECT_EQ(sources, std::set<std::string>(paths.begin(), paths.end()))
      << "every kernel source needs catalog instances, or CI never compiles it";
  EXPECT_GT(total, 300u);
}

TEST(KernelCatalog, InstanceSpellings) {
  using cpu::ElemOp;
  EXPECT_EQ(gpu::unary_kernel(ElemOp::kExp, DType::kFloat16, DType::kFloat16),
            "maxc::gpu::unary<maxc::gpu::op::Exp, maxc::gpu::half, maxc::gpu::half>");
  EXPECT_EQ(gpu::unary_kernel(ElemOp::kClamp, DType::kInt32, DType::kInt32),
            "maxc::gpu::unary<maxc::gpu::op::Clamp<long long>, int, int>");
  EXPECT_EQ(gpu::binary_kernel(ElemOp::kLess, DType::kBFloat16, DType::kBool),
            "maxc::gpu::binary<maxc::gpu::op::Less, maxc::gpu::bfloat16, maxc::gpu::bool8>");
  EXPECT_EQ(gpu::where_kernel(DType::kFloat16), "maxc::gpu::where<unsigned short>");
  EXPECT_EQ(gpu::cast_kernel(DType::kFloat64, DType::kInt8), "maxc::gpu::cast<double, signed char>");
  EXPECT_EQ(gpu::cast_kernel(DType::kFloat32, DType::kFloat8E4M3Fn),
            "maxc::gpu::cast<float, maxc::gpu::float8_e4m3fn>");
  EXPECT_EQ(gpu::cast_kernel(DType::kFloat8E5M2Fnuz, DType::kFloat16),
            "maxc::gpu::cast<maxc::gpu::float8_e5m2fnuz, maxc::gpu::half>");
  EXPECT_EQ(gpu::cast_kernel(DType::kBFloat16, DType::kFloat8E8M0Fnu),
            "maxc::gpu::cast<maxc::gpu::bfloat16, maxc::gpu::float8_e8m0fnu>");
  EXPECT_EQ(gpu::cast_packed_kernel(DType::kFloat32, DType::kFloat4E2M1Fn),
            "maxc::gpu::cast_packed<float, maxc::gpu::float4_e2m1fn>");
  EXPECT_EQ(gpu::cast_packed_kernel(DType::kInt4, DType::kFloat8E4M3Fn),
            "maxc::gpu::cast_packed<maxc::gpu::packed_int4, maxc::gpu::float8_e4m3fn>");
  EXPECT_EQ(gpu::cast_packed_kernel(DType::kUInt2, DType::kInt2),
            "maxc::gpu::cast_packed<maxc::gpu::packed_uint2, maxc::gpu::packed_int2>");
  EXPECT_EQ(gpu::gather_kernel(DType::kFloat32, DType::kInt64), "maxc::gpu::gather<unsigned int, long long>");
  EXPECT_EQ(gpu::reduce_kernel(gpu::Reduction::kMean, DType::kFloat32, false),
            "maxc::gpu::reduce_columns<maxc::gpu::Mean<float>, float>");
  EXPECT_EQ(gpu::softmax_kernel(DType::kBFloat16, true), "maxc::gpu::softmax_rows<maxc::gpu::bfloat16, true>");
  EXPECT_EQ(gpu::layer_norm_kernel(DType::kFloat32), "maxc::gpu::layer_norm<float>");
  EXPECT_EQ(gpu::transpose_tiles_kernel(DType::kInt64), "maxc::gpu::transpose_tiles<unsigned long long>");
  EXPECT_EQ(gpu::fill_kernel(DType::kBool), "maxc::gpu::fill<unsigned char>");
}

TEST(KernelCatalog, CastsCoverFloat8BothWays) {
  const std::vector<std::string> casts = catalog_of("cast.cu");
  const std::set<std::string> have(casts.begin(), casts.end());
  for (DType f8 : {DType::kFloat8E4M3Fn, DType::kFloat8E4M3Fnuz, DType::kFloat8E5M2, DType::kFloat8E5M2Fnuz})
    for (DType other : {DType::kBool, DType::kInt8, DType::kInt64, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                        DType::kFloat8E5M2, DType::kFloat8E4M3Fnuz}) {
      if (other == f8) continue;
      EXPECT_TRUE(have.count(gpu::cast_kernel(f8, other))) << gpu::cast_kernel(f8, other);
      EXPECT_TRUE(have.count(gpu::cast_kernel(other, f8))) << gpu::cast_kernel(other, f8);
    }
}

TEST(KernelCatalog, PackedCastsCoverEverySubByteDtypeBothWays) {
  const std::vector<std::string> casts = catalog_of("cast_packed.cu");
  const std::set<std::string> have(casts.begin(), casts.end());
  const DType packed[] = {DType::kFloat4E2M1Fn, DType::kUInt2, DType::kInt2, DType::kUInt4, DType::kInt4};
  for (DType p : packed) {
    for (DType other : {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64, DType::kFloat16,
                        DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
      EXPECT_TRUE(have.count(gpu::cast_packed_kernel(p, other))) << gpu::cast_packed_kernel(p, other);
      EXPECT_TRUE(have.count(gpu::cast_packed_kernel(other, p))) << gpu::cast_packed_kernel(other, p);
    }
    for (DType q : packed)
      if (q != p) EXPECT_TRUE(have.count(gpu::cast_packed_kernel(p, q))) << gpu::cast_packed_kernel(p, q);
  }
  EXPECT_TRUE(have.count(gpu::cast_packed_kernel(DType::kFloat8E4M3Fn, DType::kFloat4E2M1Fn)));
}

TEST(KernelCatalog, UnsupportedDtypesAreRefused) {
  EXPECT_MAXC_ERROR(gpu::unary_kernel(cpu::ElemOp::kExp, DType::kFloat8E5M2, DType::kFloat8E5M2),
                    Code::kUnimplemented, "do not handle float8_e5m2");
  EXPECT_MAXC_ERROR(gpu::fill_kernel(DType::kFloat4E2M1Fn), Code::kUnimplemented, "do not move float4_e2m1fn");
  // Only casts take float8; float4 (two elements per byte) only cast_packed.
  EXPECT_MAXC_ERROR(gpu::softmax_kernel(DType::kFloat8E4M3Fn, false), Code::kUnimplemented,
                    "do not handle float8_e4m3fn");
  EXPECT_MAXC_ERROR(gpu::cast_kernel(DType::kFloat32, DType::kFloat4E2M1Fn), Code::kUnimplemented,
                    "cast output: the GPU cast kernel does not handle float4_e2m1fn");
  EXPECT_MAXC_ERROR(gpu::cast_kernel(DType::kFloat4E2M1Fn, DType::kFloat8E5M2), Code::kUnimplemented,
                    "cast input: the GPU cast kernel does not handle float4_e2m1fn");
  // The sub-byte integers pack like float4: no kernel but cast_packed moves or casts them,
  // and it takes only casts with a sub-byte side.
  EXPECT_MAXC_ERROR(gpu::fill_kernel(DType::kInt4), Code::kUnimplemented, "do not move int4");
  EXPECT_MAXC_ERROR(gpu::cast_kernel(DType::kFloat32, DType::kUInt2), Code::kUnimplemented,
                    "cast output: the GPU cast kernel does not handle uint2");
  EXPECT_MAXC_ERROR(gpu::cast_packed_kernel(DType::kFloat32, DType::kInt8), Code::kInvalidArgument,
                    "cast_packed: a cast from float32 to int8 has no sub-byte side");
  EXPECT_MAXC_ERROR(gpu::cast_packed_kernel(DType::kInt4, DType::kInvalid), Code::kUnimplemented,
                    "packed cast output: the GPU cast kernel does not handle invalid");
  EXPECT_MAXC_ERROR(gpu::unary_kernel(cpu::ElemOp::kNegate, DType::kInt4, DType::kInt4), Code::kUnimplemented,
                    "int4");
  EXPECT_MAXC_ERROR(gpu::gather_kernel(DType::kFloat32, DType::kFloat32), Code::kInvalidArgument,
                    "gather indices of float32");
}

}  // namespace
}  // namespace maxc::testing
