// Type inference of the reductions, scans and sorts: sum, mean, argmax, argmin, cumsum,
// top_k, argsort.
#include <gtest/gtest.h>

#include "graph/op_test_util.h"

namespace maxc {
namespace {

using testing::axis;
using testing::expect_error;
using testing::infer1;
using testing::infer_all;
using testing::tensor;
using D = DType;

TEST(ReductionOps, KeepTheAxisAsOne) {
  TensorType x = tensor(D::kFloat32, {"batch", Dim("seq") + 1, 8});
  for (const char* op : {"sum", "mean"}) {
    EXPECT_EQ(infer1(op, {x}), tensor(D::kFloat32, {"batch", Dim("seq") + 1, 1})) << op;  // axis -1
    EXPECT_EQ(infer1(op, {x}, axis(0)), tensor(D::kFloat32, {1, Dim("seq") + 1, 8})) << op;
    EXPECT_EQ(infer1(op, {x}, axis(-2)), tensor(D::kFloat32, {"batch", 1, 8})) << op;
    EXPECT_EQ(infer1(op, {tensor(D::kInt32, {2, 3}, DeviceRef::gpu())}), tensor(D::kInt32, {2, 1}, DeviceRef::gpu()));
  }
}

TEST(ReductionOps, ArgReductionsGiveInt64) {
  for (const char* op : {"argmax", "argmin"}) {
    EXPECT_EQ(infer1(op, {tensor(D::kBFloat16, {"b", 7})}), tensor(D::kInt64, {"b", 1})) << op;
    EXPECT_EQ(infer1(op, {tensor(D::kUInt8, {Dim("n") * 2, 7})}, axis(0)), tensor(D::kInt64, {1, 7})) << op;
  }
}

TEST(ReductionOps, Errors) {
  for (const char* op : {"sum", "mean", "argmax", "argmin", "cumsum"}) {
    std::string name = std::string("op '") + op + "'";
    expect_error([&] { infer1(op, {tensor(D::kFloat32, {2, 3})}, axis(2)); }, Code::kInvalidArgument,
                 {name, "attribute 'axis' is 2", "rank 2", "-2 to 1"});
    expect_error([&] { infer1(op, {tensor(D::kFloat32, {2, 3})}, axis(-3)); }, Code::kInvalidArgument,
                 {name, "attribute 'axis' is -3", "rank 2"});
    expect_error([&] { infer1(op, {tensor(D::kFloat32, {})}); }, Code::kInvalidArgument, {name, "rank 0"});
    expect_error([&] { infer1(op, {tensor(D::kBool, {2})}); }, Code::kInvalidArgument,
                 {name, "input 0 'x' must have a numeric", "got bool"});
  }
  expect_error([] { infer1("sum", {tensor(D::kFloat32, {2})}, Attrs{{"axis", 0.5}}); }, Code::kInvalidArgument,
               {"op 'sum'", "attribute 'axis' must be int"});
}

TEST(Cumsum, KeepsTheType) {
  TensorType x = tensor(D::kFloat16, {"b", Dim("s") * 4});
  EXPECT_EQ(infer1("cumsum", {x}), x);
  EXPECT_EQ(infer1("cumsum", {x}, Attrs{{"axis", int64_t{0}}, {"exclusive", true}, {"reverse", true}}), x);
  expect_error([&] { infer1("cumsum", {x}, Attrs{{"exclusive", int64_t{1}}}); }, Code::kInvalidArgument,
               {"op 'cumsum'", "attribute 'exclusive' must be bool"});
}

TEST(TopK, ValuesAndInt64Indices) {
  std::vector<TensorType> out = infer_all("top_k", {tensor(D::kFloat32, {"b", 100})}, Attrs{{"k", int64_t{5}}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], tensor(D::kFloat32, {"b", 5}));
  EXPECT_EQ(out[1], tensor(D::kInt64, {"b", 5}));
  out = infer_all("top_k", {tensor(D::kInt32, {"vocab", 3})}, Attrs{{"k", int64_t{2}}, {"axis", int64_t{0}}});
  EXPECT_EQ(out[0], tensor(D::kInt32, {2, 3}));  // a symbolic axis: k is checked at run time
  EXPECT_EQ(out[1], tensor(D::kInt64, {2, 3}));
}

TEST(TopK, Errors) {
  expect_error([] { infer_all("top_k", {tensor(D::kFloat32, {2, 4})}); }, Code::kInvalidArgument,
               {"op 'top_k'", "missing required attribute 'k'"});
  expect_error([] { infer_all("top_k", {tensor(D::kFloat32, {2, 4})}, Attrs{{"k", int64_t{5}}}); },
               Code::kInvalidArgument, {"op 'top_k'", "attribute 'k' is 5", "axis 1 of input 0 'input' [2, 4]", "only 4"});
  expect_error([] { infer_all("top_k", {tensor(D::kFloat32, {4})}, Attrs{{"k", int64_t{-1}}}); },
               Code::kInvalidArgument, {"op 'top_k'", "attribute 'k' is -1", ">= 0"});
}

TEST(Argsort, Rank1Int64) {
  EXPECT_EQ(infer1("argsort", {tensor(D::kFloat32, {"n"})}), tensor(D::kInt64, {"n"}));
  EXPECT_EQ(infer1("argsort", {tensor(D::kInt8, {Dim("n") + 2})}, Attrs{{"ascending", false}}),
            tensor(D::kInt64, {Dim("n") + 2}));
  expect_error([] { infer1("argsort", {tensor(D::kFloat32, {2, 3})}); }, Code::kInvalidArgument,
               {"op 'argsort'", "input 0 'x' must have rank 1, got rank 2 [2, 3]"});
}

}  // namespace
}  // namespace maxc
