#include "graph/attrs.h"

#include <gtest/gtest.h>

#include "graph/test_util.h"

namespace maxc {
namespace {

using testing::expect_error;

TEST(Attrs, KindsFollowTheVariant) {
  EXPECT_EQ(attr_kind(AttrValue(int64_t{1})), AttrKind::kInt);
  EXPECT_EQ(attr_kind(AttrValue(1.5)), AttrKind::kFloat);
  EXPECT_EQ(attr_kind(AttrValue(std::string("s"))), AttrKind::kString);
  EXPECT_EQ(attr_kind(AttrValue(DType::kInt8)), AttrKind::kDType);
  EXPECT_EQ(attr_kind(AttrValue(std::vector<int64_t>{1})), AttrKind::kInts);
  EXPECT_EQ(attr_kind(AttrValue(std::vector<double>{1})), AttrKind::kFloats);
  EXPECT_EQ(attr_kind(AttrValue(std::vector<Dim>{"b"})), AttrKind::kDims);
  EXPECT_EQ(attr_kind(AttrValue(GraphRef{2})), AttrKind::kGraph);
  EXPECT_EQ(attr_kind(AttrValue(true)), AttrKind::kBool);
  EXPECT_EQ(attr_kind(AttrValue(DeviceRef::gpu())), AttrKind::kDevice);
  EXPECT_STREQ(attr_kind_name(AttrKind::kInts), "int list");
  EXPECT_STREQ(attr_kind_name(static_cast<AttrKind>(99)), "unknown");
}

TEST(Attrs, TypedGetters) {
  Attrs a{{"axis", int64_t{-1}}, {"mode", std::string("tanh")}, {"shape", std::vector<Dim>{"b", 4}}};
  EXPECT_EQ(a.get<int64_t>("axis"), -1);
  EXPECT_EQ(a.get<std::string>("mode"), "tanh");
  EXPECT_EQ(a.get<std::vector<Dim>>("shape"), (std::vector<Dim>{"b", 4}));
  a.set("axis", int64_t{2});  // replaces
  EXPECT_EQ(a.get<int64_t>("axis"), 2);
  EXPECT_EQ(a.size(), 3u);
}

TEST(Attrs, GetterErrorsNameOwnerAttributeAndKinds) {
  Attrs a{{"axis", std::string("x")}};
  expect_error([&] { a.get<int64_t>("axis", "op 'sum'"); }, Code::kInvalidArgument,
               {"op 'sum'", "attribute 'axis' must be int, got string \"x\""});
  expect_error([&] { a.get<double>("eps", "op 'layer_norm'"); }, Code::kInvalidArgument,
               {"op 'layer_norm'", "missing attribute 'eps' (float)"});
}

TEST(Attrs, PrintsSortedByName) {
  Attrs a{{"b", true}, {"a", std::vector<int64_t>{1, 2}}, {"c", GraphRef{0}}, {"d", DType::kBFloat16}};
  EXPECT_EQ(a.to_string(), "{a = [1, 2], b = true, c = @graph0, d = bfloat16}");
  EXPECT_EQ(Attrs{}.to_string(), "{}");
}

}  // namespace
}  // namespace maxc
