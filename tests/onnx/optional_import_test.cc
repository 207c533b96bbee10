// Optional, OptionalHasElement and OptionalGetElement: an optional tensor input is imported as
// its tensor and always holds its element; only an omitted input has none; an empty Optional()
// and optionals of anything but a tensor are refused.
#include <gtest/gtest.h>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

TEST(OnnxOptional, AnOptionalTensorInputIsItsTensor) {
  GraphSpec g;
  g.inputs = {typed_value_info("x", optional_type(tensor_type(kFloat, {int64_t{3}})))};
  g.outputs = {value_info("has", kBool, {}), value_info("y", kFloat, {int64_t{3}})};
  g.nodes = {node("OptionalHasElement", {"x"}, {"has"}), node("Optional", {"x"}, {"o"}),
             node("OptionalGetElement", {"o"}, {"y"})};
  auto out = run_model(model(g, 18), {f32_tensor({3}, {1.f, -2.f, 3.5f})});
  ASSERT_EQ(out[0]->dtype(), DType::kBool);
  EXPECT_EQ(out[0]->data()[0], 1);
  expect_near(floats_of(out[1]), {1.f, -2.f, 3.5f}, 0.f);
}

TEST(OnnxOptional, AnOmittedInputHasNoElement) {
  GraphSpec g;
  g.outputs = {value_info("has", kBool, {})};
  g.nodes = {node("OptionalHasElement", {""}, {"has"})};
  auto out = run_model(model(g, 18), {});
  EXPECT_EQ(out[0]->data()[0], 0);
  g.nodes = {node("OptionalHasElement", {}, {"has"})};
  EXPECT_EQ(run_model(model(g, 18), {})[0]->data()[0], 0);
}

TEST(OnnxOptional, EmptyOptionalsAndOptionalSequencesAreRefused) {
  GraphSpec g;
  g.outputs = {value_info("y", kFloat, {int64_t{3}})};
  g.nodes = {node("Optional", {}, {"o"}, {}, "empty"), node("OptionalGetElement", {"o"}, {"y"})};
  expect_unimplemented_naming(model(g, 18), "'empty' (Optional)", "an empty optional");

  g.nodes = {node("OptionalGetElement", {}, {"y"}, {}, "get")};
  Error e = import_error(model(g, 18));
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("'get' (OptionalGetElement)"), std::string::npos) << e.what();

  Msg sequence_type;
  Msg sequence;
  sequence.msg(1, tensor_type(kFloat, {int64_t{3}}));
  sequence_type.msg(4, sequence);
  g.inputs = {typed_value_info("s", optional_type(sequence_type))};
  g.nodes = {node("OptionalGetElement", {"s"}, {"y"})};
  expect_unimplemented_naming(model(g, 18), "graph input 's'", "is not a tensor");
}

}  // namespace
}  // namespace maxc::onnx::testing
