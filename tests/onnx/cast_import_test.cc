// ONNX Cast: to and from FLOAT8E8M0 (the round_mode attribute), and casts folded at import,
// whose known values must be what the same cast computes at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

constexpr int32_t kInt16 = 5, kFloat8E8M0 = 24;

Ref<Tensor> i64_tensor(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, std::move(dims));
  std::memcpy(t->data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

std::vector<int64_t> i64s_of(const Ref<Tensor>& t) {
  EXPECT_EQ(t->dtype(), DType::kInt64);
  const int64_t* p = reinterpret_cast<const int64_t*>(t->data());
  return {p, p + t->num_elements()};
}

// ---- float8_e8m0fnu ----

// x -> FLOAT8E8M0 -> FLOAT with the given Cast attributes on the first cast.
std::string e8m0_round_trip(const std::vector<Msg>& attrs, int64_t n) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {n})};
  g.outputs = {value_info("y", kFloat, {n})};
  std::vector<Msg> to_e8m0 = {attr_int("to", kFloat8E8M0)};
  to_e8m0.insert(to_e8m0.end(), attrs.begin(), attrs.end());
  g.nodes = {node("Cast", {"x"}, {"e"}, to_e8m0, "to_e8m0"), node("Cast", {"e"}, {"y"}, {attr_int("to", kFloat)})};
  return model(g, 24);
}

TEST(OnnxCastImport, Float8E8M0RoundsUpAndSaturates) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.f, 0.124f, 1.1f, -3.f, 0x1.8p127f, inf};
  for (int64_t saturate : {1, 0}) {
    const std::vector<float> y =
        floats_of(run_model(e8m0_round_trip({attr_int("saturate", saturate), attr_string("round_mode", "up")}, 6),
                            {f32_tensor({6}, x)})[0]);
    EXPECT_EQ(y[0], 0x1p-127f);
    EXPECT_EQ(y[1], 0.125f);
    EXPECT_EQ(y[2], 2.f);
    EXPECT_EQ(y[3], 4.f);  // the sign is dropped
    if (saturate) EXPECT_EQ(y[4], 0x1p127f);
    else EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_TRUE(std::isnan(y[5])) << "infinity is NaN, saturated or not";
  }
}

TEST(OnnxCastImport, Float8E8M0OtherRoundModesAreUnimplemented) {
  for (const char* mode : {"down", "nearest"})
    expect_unimplemented_naming(e8m0_round_trip({attr_string("round_mode", mode)}, 2),
                                {"node 0 'to_e8m0' (Cast)", "attribute 'round_mode'", mode});
}

// round_mode only concerns casts to FLOAT8E8M0.
TEST(OnnxCastImport, RoundModeOfOtherCastsIsIgnored) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{2}})};
  g.outputs = {value_info("y", kInt64, {int64_t{2}})};
  g.nodes = {node("Cast", {"x"}, {"y"}, {attr_int("to", kInt64), attr_string("round_mode", "down")})};
  EXPECT_EQ(i64s_of(run_model(model(g, 24), {f32_tensor({2}, {2.5f, -7.9f})})[0]), (std::vector<int64_t>{2, -7}));
}

// ---- casts folded at import ----

// v -> Cast(to) -> Cast(INT64) -> Add(itself): folded when v is an initializer, run when it is
// an input.
GraphSpec narrowing_graph(int32_t to, bool v_known, const std::vector<int64_t>& v) {
  const int64_t n = static_cast<int64_t>(v.size());
  GraphSpec g;
  if (v_known) g.initializers = {tensor_i64("v", {n}, v)};
  else g.inputs = {value_info("v", kInt64, {n})};
  g.outputs = {value_info("sum", kInt64, {n})};
  g.nodes = {node("Cast", {"v"}, {"narrow"}, {attr_int("to", to)}),
             node("Cast", {"narrow"}, {"wide"}, {attr_int("to", kInt64)}), node("Add", {"wide", "wide"}, {"sum"})};
  return g;
}

// The known int8 of 300 is 44, as the cast at run time makes it, so the folded Add that reads
// the known value gives the run-time sum.
TEST(OnnxCastImport, FoldedNarrowingCastWrapsLikeTheRunTimeCast) {
  const std::vector<int64_t> v = {300, -129, 1000, 127, -1};
  struct Case {
    int32_t to;
    std::vector<int64_t> want;
  } cases[] = {{kInt8, {88, 254, -48, 254, -2}},
               {kUInt8, {88, 254, 464, 254, 510}},
               {kInt16, {600, -258, 2000, 254, -2}},
               {kBool, {2, 2, 2, 2, 2}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    const auto folded = run_model(model(narrowing_graph(c.to, true, v)), {});
    const auto at_run_time = run_model(model(narrowing_graph(c.to, false, v)), {i64_tensor({5}, v)});
    EXPECT_EQ(i64s_of(at_run_time[0]), c.want);
    EXPECT_EQ(i64s_of(folded[0]), c.want);
  }
}

// A shape computed through a narrowing cast: int8(300) = 44 elements, not 300.
TEST(OnnxCastImport, ReshapeToAFoldedNarrowedShape) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {int64_t{4}, int64_t{11}})};
  g.outputs = {value_info("y", kFloat, {})};
  g.initializers = {tensor_i64("n", {1}, {300})};
  g.nodes = {node("Cast", {"n"}, {"n8"}, {attr_int("to", kInt8)}),
             node("Cast", {"n8"}, {"shape"}, {attr_int("to", kInt64)}), node("Reshape", {"x", "shape"}, {"y"})};
  std::vector<float> x(44);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const auto out = run_model(model(g), {f32_tensor({4, 11}, x)});
  EXPECT_EQ(out[0]->dims(), (std::vector<int64_t>{44}));
  EXPECT_EQ(floats_of(out[0]), x);
}

// A float folded to an integer truncates and then wraps, as at run time (300.7 -> int8 44).
TEST(OnnxCastImport, FoldedFloatToNarrowIntegerWraps) {
  GraphSpec g;
  g.outputs = {value_info("y", kInt64, {int64_t{3}})};
  g.initializers = {tensor_f32("f", {3}, {300.7f, -129.5f, 200.f})};
  g.nodes = {node("Cast", {"f"}, {"f8"}, {attr_int("to", kInt8)}),
             node("Cast", {"f8"}, {"y"}, {attr_int("to", kInt64)})};
  EXPECT_EQ(i64s_of(run_model(model(g), {})[0]), (std::vector<int64_t>{44, 127, -56}));
}

}  // namespace
}  // namespace maxc::onnx::testing
