// Type inference of dequantize and qmatmul (graph/ops/quantized.cc).
#include <gtest/gtest.h>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::infer1;
using testing::tensor;
using D = DType;

TensorType f32(std::vector<Dim> dims) { return tensor(D::kFloat32, std::move(dims)); }
TensorType u8(std::vector<Dim> dims) { return tensor(D::kUInt8, std::move(dims)); }
Attrs encoding(const char* name) { return Attrs{{"encoding", std::string(name)}}; }

TEST(Dequantize, RowBytesBecomeElements) {
  EXPECT_EQ(infer1("dequantize", {u8({4096, 2304})}, encoding("q4_k")), f32({4096, 4096}));  // 16 blocks of 144
  EXPECT_EQ(infer1("dequantize", {u8({3, 18})}, encoding("q4_0")), f32({3, 32}));
  EXPECT_EQ(infer1("dequantize", {u8({"n", 2, 68})}, encoding("q8_0")), f32({"n", 2, 64}));
  EXPECT_EQ(infer1("dequantize", {u8({176})}, encoding("Q5_K")), f32({256}));
  EXPECT_EQ(infer1("dequantize", {u8({2, 420})}, encoding("q6_k")), f32({2, 512}));
  EXPECT_EQ(infer1("dequantize", {u8({2, 0})}, encoding("q6_k")), f32({2, 0}));
}

TEST(Dequantize, Errors) {
  expect_error([] { infer1("dequantize", {u8({2, 18})}, encoding("q3_k")); }, Code::kInvalidArgument,
               {"op 'dequantize'", "'q3_k'", "q4_0, q4_k, q5_k, q6_k, q8_0"});
  expect_error([] { infer1("dequantize", {u8({2, 20})}, encoding("q4_0")); }, Code::kInvalidArgument,
               {"op 'dequantize'", "input 0 'quantized' is 20 bytes", "q4_0's block of 18 bytes"});
  expect_error([] { infer1("dequantize", {f32({2, 18})}, encoding("q4_0")); }, Code::kInvalidArgument,
               {"op 'dequantize'", "input 0 'quantized'", "must be uint8, got float32"});
  expect_error([] { infer1("dequantize", {u8({2, "b"})}, encoding("q4_0")); }, Code::kInvalidArgument,
               {"op 'dequantize'", "must be static, got b"});
  expect_error([] { infer1("dequantize", {u8({})}, encoding("q4_0")); }, Code::kInvalidArgument,
               {"op 'dequantize'", "rank >= 1"});
  expect_error([] { infer1("dequantize", {u8({18})}); }, Code::kInvalidArgument, {"op 'dequantize'", "encoding"});
}

TEST(Qmatmul, PreTransposedRhs) {
  EXPECT_EQ(infer1("qmatmul", {f32({1, 4096}), u8({11008, 2304})}, encoding("q4_k")), f32({1, 11008}));
  EXPECT_EQ(infer1("qmatmul", {f32({"batch", "seq", 64}), u8({"n", 68})}, encoding("q8_0")),
            f32({"batch", "seq", "n"}));
  EXPECT_EQ(infer1("qmatmul", {f32({32}), u8({5, 18})}, encoding("q4_0")), f32({5}));
  EXPECT_EQ(infer1("qmatmul", {f32({32, 64}), u8({32, 36})}, encoding("q4_0")), f32({32, 32}));  // MAX's example
}

TEST(Qmatmul, Errors) {
  expect_error([] { infer1("qmatmul", {f32({2, 256}), u8({4, 144})}, encoding("gptq")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "'gptq'", "valid: q4_0, q4_k, q5_k, q6_k, q8_0"});
  expect_error([] { infer1("qmatmul", {f32({2, 512}), u8({4, 144})}, encoding("q4_k")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "the last dim (K) of input 0 'lhs' is 512", "of input 1 'rhs' as q4_k is 256"});
  expect_error([] { infer1("qmatmul", {f32({2, "k"}), u8({4, 144})}, encoding("q4_k")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "is k but"});
  expect_error([] { infer1("qmatmul", {f32({2, 256}), u8({4, 100})}, encoding("q4_k")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "100 bytes", "q4_k's block of 144 bytes"});
  expect_error([] { infer1("qmatmul", {tensor(D::kFloat16, {2, 256}), u8({4, 144})}, encoding("q4_k")); },
               Code::kInvalidArgument, {"op 'qmatmul'", "input 0 'lhs' must be float32, got float16"});
  expect_error([] { infer1("qmatmul", {f32({2, 256}), f32({4, 144})}, encoding("q4_k")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "input 1 'rhs'", "must be uint8, got float32"});
  expect_error([] { infer1("qmatmul", {f32({2, 256}), u8({2, 4, 144})}, encoding("q4_k")); }, Code::kInvalidArgument,
               {"op 'qmatmul'", "input 1 'rhs' must have rank 2"});
}

}  // namespace
}  // namespace maxc
