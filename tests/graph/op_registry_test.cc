#include "graph/op_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;
using testing::tensor;

OpSchema identity_schema(std::string name, int32_t version = 1) {
  return OpSchema{.name = std::move(name),
                  .version = version,
                  .inputs = {{"x"}},
                  .infer = [](const InferContext& ctx) -> std::vector<TensorType> { return {ctx.input(0)}; }};
}

TEST(OpRegistry, HasEveryOpOfThisFamilySet) {
  const char* expected[] = {
      // unary (20)
      "abs", "acos", "atanh", "cos", "erf", "exp", "floor", "log", "log1p", "negate", "relu", "round", "rsqrt",
      "sigmoid", "silu", "sin", "sqrt", "tanh", "trunc", "gelu",
      // binary (8)
      "add", "sub", "mul", "div", "mod", "pow", "max", "min",
      // comparison (6)
      "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
      // logical (6)
      "logical_and", "logical_or", "logical_xor", "logical_not", "is_inf", "is_nan",
      // the rest
      "where", "cast", "clamp", "constant", "constant_external", "range"};
  for (const char* name : expected) EXPECT_NE(OpRegistry::global().find(name), nullptr) << name;
}

TEST(OpRegistry, ListIsSortedAndIntrospectable) {
  std::vector<const OpSchema*> all = OpRegistry::global().list();
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1]->name, all[i]->name);
  const OpSchema& gelu = OpRegistry::global().get("gelu", 1);
  ASSERT_EQ(gelu.inputs.size(), 1u);
  EXPECT_EQ(gelu.inputs[0].name, "x");
  ASSERT_EQ(gelu.attrs.size(), 1u);
  EXPECT_EQ(gelu.attrs[0].name, "approximate");
  EXPECT_EQ(gelu.attrs[0].kind, AttrKind::kString);
  EXPECT_EQ(gelu.attrs[0].presence, AttrPresence::kDefaulted);
  const OpSchema& max = OpRegistry::global().get("max");
  EXPECT_EQ(max.min_inputs(), 1u);
  EXPECT_EQ(max.max_inputs(), 2u);
  EXPECT_EQ(max.signature(), "max(x, y?)");
}

TEST(OpRegistry, VersionsAndLookup) {
  OpRegistry r;
  r.add(identity_schema("id", 1));
  r.add(identity_schema("id", 3));
  EXPECT_EQ(r.find("id")->version, 3);  // 0 = newest
  EXPECT_EQ(r.find("id", 1)->version, 1);
  EXPECT_EQ(r.find("id", 2), nullptr);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_EQ(r.get("id", 3).label(), "op 'id' v3");
  expect_error([&] { r.get("id", 2); }, Code::kNotFound, {"op 'id' has no version 2", "known versions: 1, 3"});
  expect_error([&] { r.get("nope"); }, Code::kNotFound, {"unknown op 'nope'"});
}

TEST(OpRegistry, RejectsDuplicatesAndMalformedSchemas) {
  OpRegistry r;
  r.add(identity_schema("id"));
  expect_error([&] { r.add(identity_schema("id")); }, Code::kAlreadyExists, {"op 'id'", "already registered"});
  expect_error([&] { r.add(identity_schema("")); }, Code::kInvalidArgument, {"no name"});
  expect_error([&] { r.add(identity_schema("v0", 0)); }, Code::kInvalidArgument, {"version must be >= 1"});
  OpSchema no_infer = identity_schema("no_infer");
  no_infer.infer = nullptr;
  expect_error([&] { r.add(no_infer); }, Code::kInvalidArgument, {"no infer function"});
  OpSchema bad_inputs = identity_schema("bad_inputs");
  bad_inputs.inputs = {{"xs", Arity::kVariadic}, {"y"}};
  expect_error([&] { r.add(bad_inputs); }, Code::kInvalidArgument, {"input 0 'xs' is not last"});
  OpSchema twice = identity_schema("twice");
  twice.attrs = {AttrSpec::required("a", AttrKind::kInt), AttrSpec::optional("a", AttrKind::kInt)};
  expect_error([&] { r.add(twice); }, Code::kInvalidArgument, {"attribute 'a' is declared twice"});
  OpSchema bad_default = identity_schema("bad_default");
  bad_default.attrs = {AttrSpec{"a", AttrKind::kInt, AttrPresence::kDefaulted, AttrValue(1.0)}};
  expect_error([&] { r.add(bad_default); }, Code::kInvalidArgument, {"'a' has an inconsistent default"});
}

TEST(InferOp, ChecksArity) {
  const OpSchema& add = OpRegistry::global().get("add");
  std::vector<TensorType> one{tensor(DType::kFloat32, {2})};
  expect_error([&] { infer_op(add, one, {}); }, Code::kInvalidArgument,
               {"op 'add'", "expected 2 inputs as in add(lhs, rhs), got 1"});
  OpSchema concat{.name = "concat",
                  .inputs = {{"values", Arity::kVariadic}},
                  .infer = [](const InferContext& ctx) -> std::vector<TensorType> { return {ctx.input(0)}; }};
  expect_error([&] { infer_op(concat, {}, {}); }, Code::kInvalidArgument, {"expected at least 1 inputs"});
  std::vector<TensorType> three(3, tensor(DType::kFloat32, {2}));
  EXPECT_EQ(infer_op(concat, three, {}).outputs.size(), 1u);
  InferContext ctx(concat, three, {});
  EXPECT_EQ(ctx.input_label(2), "input 2 'values'");
}

TEST(InferOp, ChecksAttributes) {
  const OpSchema& gelu = OpRegistry::global().get("gelu");
  std::vector<TensorType> x{tensor(DType::kFloat32, {2})};
  expect_error([&] { infer_op(gelu, x, Attrs{{"aproximate", std::string("tanh")}}); }, Code::kInvalidArgument,
               {"op 'gelu'", "unknown attribute 'aproximate'", "known attributes: approximate"});
  expect_error([&] { infer_op(gelu, x, Attrs{{"approximate", int64_t{1}}}); }, Code::kInvalidArgument,
               {"op 'gelu'", "attribute 'approximate' must be string, got int 1"});
  expect_error([&] { infer_op(OpRegistry::global().get("cast"), x, {}); }, Code::kInvalidArgument,
               {"op 'cast'", "missing required attribute 'dtype' (dtype)"});
  expect_error([&] { infer_op(OpRegistry::global().get("exp"), x, Attrs{{"axis", int64_t{0}}}); },
               Code::kInvalidArgument, {"op 'exp'", "unknown attribute 'axis'", "it takes no attributes"});
  // Defaults are filled in; optional attributes stay absent.
  EXPECT_EQ(infer_op(gelu, x, {}).attrs.get<std::string>("approximate"), "none");
  EXPECT_FALSE(infer_op(OpRegistry::global().get("clamp"), x, {}).attrs.has("min"));
}

TEST(InferOp, RejectsBuffers) {
  TensorType buffer = tensor(DType::kFloat32, {2});
  buffer.is_buffer = true;
  std::vector<TensorType> x{buffer};
  expect_error([&] { infer_op(OpRegistry::global().get("exp"), x, {}); }, Code::kInvalidArgument,
               {"op 'exp'", "input 0 'x' is a buffer"});
}

}  // namespace
}  // namespace maxc
