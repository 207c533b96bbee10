#include "graph/promotion.h"

#include <gtest/gtest.h>

#include "graph/test_util.h"

namespace maxc {
namespace {

using D = DType;

struct Case {
  D a, b;
  std::optional<D> want;
};

TEST(Promotion, Table) {
  const Case cases[] = {
      // same dtype
      {D::kFloat32, D::kFloat32, D::kFloat32},
      {D::kBool, D::kBool, D::kBool},
      // across categories the higher one wins, whatever the width
      {D::kBool, D::kUInt8, D::kUInt8},
      {D::kBool, D::kFloat16, D::kFloat16},
      {D::kInt64, D::kFloat16, D::kFloat16},
      {D::kUInt64, D::kBFloat16, D::kBFloat16},
      // integers of one signedness: the wider
      {D::kInt8, D::kInt32, D::kInt32},
      {D::kUInt16, D::kUInt64, D::kUInt64},
      // signed with unsigned: a signed type that holds both
      {D::kUInt8, D::kInt8, D::kInt16},
      {D::kUInt8, D::kInt32, D::kInt32},
      {D::kUInt16, D::kInt16, D::kInt32},
      {D::kUInt32, D::kInt32, D::kInt64},
      {D::kUInt32, D::kInt8, D::kInt64},
      {D::kUInt16, D::kInt64, D::kInt64},
      {D::kUInt64, D::kInt8, std::nullopt},
      {D::kUInt64, D::kInt64, std::nullopt},
      // the sub-byte integers take part by their widths like the others
      {D::kInt4, D::kInt8, D::kInt8},
      {D::kUInt2, D::kUInt4, D::kUInt4},
      {D::kUInt2, D::kInt2, D::kInt4},
      {D::kUInt2, D::kInt4, D::kInt4},
      {D::kUInt4, D::kInt4, D::kInt8},
      {D::kBool, D::kUInt2, D::kUInt2},
      {D::kInt4, D::kFloat4E2M1Fn, D::kFloat4E2M1Fn},
      // floats: the wider; equal widths of different formats go up
      {D::kFloat16, D::kFloat32, D::kFloat32},
      {D::kBFloat16, D::kFloat64, D::kFloat64},
      {D::kFloat8E4M3Fn, D::kBFloat16, D::kBFloat16},
      {D::kFloat4E2M1Fn, D::kFloat8E5M2, D::kFloat8E5M2},
      {D::kFloat16, D::kBFloat16, D::kFloat32},
      {D::kFloat8E4M3Fn, D::kFloat8E5M2, D::kFloat16},
      // invalid codes
      {static_cast<D>(2), D::kInt8, std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.want) << dtype_name(c.b);
    EXPECT_EQ(promote_types(c.b, c.a), c.want) << "not symmetric for " << dtype_name(c.b);
  }
}

TEST(Promotion, ErrorNamesBothInputs) {
  testing::expect_error(
      [] { testing::infer1("add", {testing::tensor(D::kUInt64, {2}), testing::tensor(D::kInt32, {2})}); },
      Code::kInvalidArgument,
      {"op 'add'", "input 0 'lhs' (uint64)", "input 1 'rhs' (int32)", "no common dtype"});
}

}  // namespace
}  // namespace maxc
