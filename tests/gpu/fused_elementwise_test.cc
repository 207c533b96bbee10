// The fused elementwise generator, by its text: what each leaf kind reads, what each step and
// output becomes, the parameter list a launcher packs, stable names, and refused specs. NVRTC
// compiles the same generated sources in nvrtc_kernels_test.cc.
#include "kernels/cuda/fused_elementwise.h"

#include <gtest/gtest.h>

#include <string>

#include "driver/test_util.h"

namespace maxc::testing {
namespace {

using cpu::ElemCompute;
using cpu::ElemOp;
using cpu::ElemProgramSpec;
using gpu::FusedKernel;

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

// out0 = exp(x + bias) as float16; x [2, 8] f16, bias [8] f32, scale [] f32.
ElemProgramSpec bias_exp() {
  ElemProgramSpec s;
  s.compute = ElemCompute::kFloat32;
  s.dims = {2, 8};
  s.leaves = {{DType::kFloat16, {2, 8}}, {DType::kFloat32, {8}}, {DType::kFloat32, {1}}};
  s.steps = {{ElemOp::kAdd, {0, 1, -1}}, {ElemOp::kExp, {3, -1, -1}, 0, 0, DType::kFloat16},
             {ElemOp::kMul, {4, 2, -1}}};
  s.outputs = {{5, DType::kFloat16}, {4, DType::kFloat32}};
  return s;
}

TEST(FusedElementwise, LeavesAreReadByTheirKind) {
  const FusedKernel k = gpu::generate_fused_elementwise(bias_exp());
  ASSERT_EQ(k.leaf_kinds.size(), 3u);
  EXPECT_EQ(k.leaf_kinds[0], FusedKernel::LeafKind::kDense);
  EXPECT_EQ(k.leaf_kinds[1], FusedKernel::LeafKind::kBroadcast);
  EXPECT_EQ(k.leaf_kinds[2], FusedKernel::LeafKind::kScalar);
  EXPECT_TRUE(has(k.source, "const C v0 = load_as<C>(in0[i]);")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v1 = load_as<C>(in1[strided_offset(i, shape, layout1.strides)]);")) << k.source;
  // A scalar is read once, before the loop.
  const size_t scalar = k.source.find("const C v2 = load_as<C>(in2[0]);");
  ASSERT_NE(scalar, std::string::npos) << k.source;
  EXPECT_LT(scalar, k.source.find("for (i64 i"));
}

TEST(FusedElementwise, StepsCallTheSharedFunctorsAndNarrow) {
  const FusedKernel k = gpu::generate_fused_elementwise(bias_exp());
  EXPECT_TRUE(has(k.source, "typedef float C;")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v3 = op::Add()(v0, v1);")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v4 = narrow_to<maxc::gpu::half>(op::Exp()(v3));")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v5 = op::Mul()(v4, v2);")) << k.source;
  EXPECT_TRUE(has(k.source, "out0[i] = store_as<maxc::gpu::half>(v5);")) << k.source;
  EXPECT_TRUE(has(k.source, "out1[i] = store_as<float>(v4);")) << k.source;
  EXPECT_TRUE(has(k.source, "#include \"common/elementwise_ops.cuh\"")) << k.source;
  EXPECT_TRUE(has(k.source, "//   float32: v3 = add(v0, v1); v4 = exp(v3); v5 = mul(v4, v2) -> out0 = v5 float16"))
      << k.source;
}

TEST(FusedElementwise, ParametersListWhatTheLauncherPacks) {
  const FusedKernel k = gpu::generate_fused_elementwise(bias_exp());
  using P = FusedKernel::ParamKind;
  const std::vector<std::pair<P, int>> expected = {{P::kShape, 0}, {P::kLeaf, 0}, {P::kLeaf, 1}, {P::kLeafLayout, 1},
                                                   {P::kLeaf, 2},  {P::kOutput, 0}, {P::kOutput, 1}};
  ASSERT_EQ(k.params.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(k.params[i].kind, expected[i].first) << i;
    EXPECT_EQ(k.params[i].index, expected[i].second) << i;
  }
  EXPECT_TRUE(has(k.source, "extern \"C\" __global__ void " + k.name +
                                "(Shape shape, const maxc::gpu::half* in0, const float* in1, Layout layout1, "
                                "const float* in2, maxc::gpu::half* out0, float* out1)"))
      << k.source;
}

TEST(FusedElementwise, NamesFollowTheSourceNotTheSizes) {
  const FusedKernel a = gpu::generate_fused_elementwise(bias_exp());
  EXPECT_EQ(a.name.rfind("maxc_fused_", 0), 0u);
  EXPECT_EQ(a.name.size(), std::string("maxc_fused_").size() + 16);
  EXPECT_EQ(gpu::generate_fused_elementwise(bias_exp()).name, a.name);
  ElemProgramSpec bigger = bias_exp();
  bigger.dims = {64, 8};
  bigger.leaves[0].dims = {64, 8};
  EXPECT_EQ(gpu::generate_fused_elementwise(bigger).source, a.source) << "same structure, same kernel";
  ElemProgramSpec other = bias_exp();
  other.steps[0].op = ElemOp::kSub;
  EXPECT_NE(gpu::generate_fused_elementwise(other).name, a.name);
}

TEST(FusedElementwise, ClampBoundsAreExactLiteralsOfTheComputeType) {
  ElemProgramSpec s;
  s.dims = {4};
  s.leaves = {{DType::kFloat32, {4}}};
  s.steps = {{ElemOp::kClamp, {0, -1, -1}, 0.5, std::numeric_limits<double>::infinity()}};
  s.outputs = {{1, DType::kFloat32}};
  EXPECT_TRUE(has(gpu::generate_fused_elementwise(s).source,
                  "op::Clamp<float>{f32_from_bits(0x3f000000u), f32_from_bits(0x7f800000u)}(v0)"));
  s.compute = ElemCompute::kInt64;
  s.leaves[0].dtype = DType::kInt32;
  s.steps[0].p0 = -2.5;  // integers clamp to [ceil(lo), floor(hi)], saturated: [-2, INT64_MAX]
  s.outputs[0].dtype = DType::kInt32;
  EXPECT_TRUE(has(gpu::generate_fused_elementwise(s).source,
                  "op::Clamp<i64>{static_cast<i64>(0xfffffffffffffffeull), static_cast<i64>(0x7fffffffffffffffull)}"))
      << gpu::generate_fused_elementwise(s).source;
}

TEST(FusedElementwise, WhereAndBoolOutputs) {
  ElemProgramSpec s;
  s.compute = ElemCompute::kInt64;
  s.dims = {3};
  s.leaves = {{DType::kBool, {3}}, {DType::kInt64, {3}}, {DType::kInt64, {}}};
  s.steps = {{ElemOp::kWhere, {0, 1, 2}}, {ElemOp::kGreater, {3, 2, -1}}};
  s.outputs = {{3, DType::kInt64}, {4, DType::kBool}};
  const FusedKernel k = gpu::generate_fused_elementwise(s);
  EXPECT_TRUE(has(k.source, "typedef i64 C;")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v3 = op::Where()(v0, v1, v2);")) << k.source;
  EXPECT_TRUE(has(k.source, "out1[i] = store_as<maxc::gpu::bool8>(v4);")) << k.source;
  EXPECT_TRUE(has(k.source, "const maxc::gpu::bool8* in0")) << k.source;
}

TEST(FusedElementwise, BitwiseStepsCallTheirFunctors) {
  ElemProgramSpec s;
  s.compute = ElemCompute::kUInt64;
  s.dims = {4};
  s.leaves = {{DType::kUInt64, {4}}, {DType::kUInt64, {}}};
  s.steps = {{ElemOp::kBitwiseNot, {0, -1, -1}}, {ElemOp::kBitwiseXor, {2, 1, -1}}};
  s.outputs = {{3, DType::kUInt64}};
  const FusedKernel k = gpu::generate_fused_elementwise(s);
  EXPECT_TRUE(has(k.source, "const C v2 = op::BitwiseNot()(v0);")) << k.source;
  EXPECT_TRUE(has(k.source, "const C v3 = op::BitwiseXor()(v2, v1);")) << k.source;
}

TEST(FusedElementwise, MalformedSpecsAreRefusedByName) {
  ElemProgramSpec s = bias_exp();
  s.steps[1].args[0] = 7;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "step 1 reads value 7");
  s = bias_exp();
  s.outputs.clear();
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "no outputs");
  s = bias_exp();
  s.outputs[0].value = 99;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "output 0 is value 99");
  s = bias_exp();
  s.leaves[1].dims = {3};
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "leaf 1 has dim 3",
                    "does not broadcast");
  s = bias_exp();
  s.leaves[1].dims = {1, 2, 8};
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "leaf 1 has rank 3");
  s = bias_exp();
  s.compute = ElemCompute::kInt64;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "step 1 (exp) needs a float compute");
  s = bias_exp();
  s.steps[1].op = ElemOp::kBitwiseNot;  // no float form: bools take logical_not
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument,
                    "step 1 (bitwise_not) needs an integer compute");
  s = bias_exp();
  s.leaves[0].dtype = DType::kFloat8E4M3Fn;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "leaf 0 has dtype float8_e4m3fn");
  // The sub-byte dtypes have no element of their own to load or store: only casts
  // (cast_packed.cu) read and write them.
  s = bias_exp();
  s.leaves[0].dtype = DType::kInt4;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "leaf 0 has dtype int4");
  s = bias_exp();
  s.outputs[0].dtype = DType::kFloat4E2M1Fn;
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "float4_e2m1fn");
  s = bias_exp();
  s.steps[2].op = static_cast<ElemOp>(200);
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "step 2 has an unknown op 200");
  s = bias_exp();
  s.dims = std::vector<int64_t>(9, 1);
  EXPECT_MAXC_ERROR(gpu::generate_fused_elementwise(s), Code::kInvalidArgument, "output rank 9");
}

TEST(FusedElementwise, LaunchStructs) {
  const gpu::Shape shape = gpu::fused_shape({2, 3, 4});
  EXPECT_EQ(shape.rank, 3);
  EXPECT_EQ(shape.numel, 24);
  EXPECT_EQ(shape.dims[2], 4);
  const gpu::Layout bias = gpu::broadcast_layout({4}, {2, 3, 4});
  EXPECT_EQ(bias.dense, 0);
  EXPECT_EQ(bias.strides[0], 0);
  EXPECT_EQ(bias.strides[1], 0);
  EXPECT_EQ(bias.strides[2], 1);
  const gpu::Layout column = gpu::broadcast_layout({2, 3, 1}, {2, 3, 4});
  EXPECT_EQ(column.strides[0], 3);
  EXPECT_EQ(column.strides[1], 1);
  EXPECT_EQ(column.strides[2], 0);
  // The element a broadcast leaf gives output element 23 ([1, 2, 3]) is its [1, 2, 0] = 5.
  EXPECT_EQ(gpu::offset_of(23, shape, column), 5);
  EXPECT_EQ(gpu::fused_shape({}).numel, 1);
  EXPECT_MAXC_ERROR(gpu::broadcast_layout({5}, {2, 3, 4}), Code::kInvalidArgument, "does not broadcast");
  EXPECT_MAXC_ERROR(gpu::fused_shape(std::vector<int64_t>(9, 2)), Code::kInvalidArgument, "rank 9");
}

}  // namespace
}  // namespace maxc::testing
