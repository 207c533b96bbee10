// NonZero, Compress and Unique: outputs whose sizes the data decides, so the compiled model
// counts first and plans the rest per count (compiler/stages.h). One model runs with several
// counts, zero included; a count read only through its Shape is still learned; a condition
// known at import gives a static size; and the Unique forms we refuse name the node.
#include <gtest/gtest.h>

#include <cstring>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

using Ints = std::vector<int64_t>;
using Inputs = std::vector<Ref<Tensor>>;

Ints ints_of(const Ref<Tensor>& t) {
  const auto* p = reinterpret_cast<const int64_t*>(t->data());
  return {p, p + t->num_elements()};
}

Ref<Tensor> bool_tensor(const std::vector<bool>& v) {
  auto t = Tensor::create(Device::cpu(), DType::kBool, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t->data()[i] = v[i] ? 1 : 0;
  return t;
}

TEST(OnnxNonZero, OneModelRunsWithEveryCountItMeets) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {"rows", 2})};
  g.outputs = {value_info("y", kInt64, {2, ""})};
  g.nodes = {node("NonZero", {"x"}, {"y"})};
  Ref<Model> m = compile_imported(import_string(model(g)));
  EXPECT_EQ(m->compiled()->stages().size(), 2u) << "the count is learned in a stage of its own";
  auto out = m->execute(Inputs{f32_tensor({3, 2}, {0, 1, 2, 0, 0, 3})});
  EXPECT_EQ(out[0]->dims(), (Ints{2, 3}));
  EXPECT_EQ(ints_of(out[0]), (Ints{0, 1, 2, 1, 0, 1}));
  out = m->execute(Inputs{f32_tensor({2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(out[0]->dims(), (Ints{2, 0}));
  out = m->execute(Inputs{f32_tensor({1, 2}, {5, -1})});
  EXPECT_EQ(ints_of(out[0]), (Ints{0, 0, 0, 1}));
}

// Only the count is read (Shape, then arithmetic): the nonzero must still run to learn it.
TEST(OnnxNonZero, ACountReadOnlyThroughItsShapeIsStillLearned) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {5})};
  g.outputs = {value_info("n", kInt64, {1})};
  g.initializers = {tensor_i64("one", {1}, {1})};
  g.nodes = {node("NonZero", {"x"}, {"nz"}), node("Shape", {"nz"}, {"s"}, {attr_int("start", 1)}),
             node("Add", {"s", "one"}, {"n"})};
  Ref<Model> m = compile_imported(import_string(model(g)));
  EXPECT_EQ(ints_of(m->execute(Inputs{f32_tensor({5}, {1, 0, 2, 0, 3})})[0]), (Ints{4}));
  EXPECT_EQ(ints_of(m->execute(Inputs{f32_tensor({5}, {0, 0, 0, 0, 0})})[0]), (Ints{1}));
}

TEST(OnnxCompress, AShortRunTimeConditionSelectsAmongTheLeadingRows) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {4, 2}), value_info("c", kBool, {3})};
  g.outputs = {value_info("y", kFloat, {"", 2})};
  g.nodes = {node("Compress", {"x", "c"}, {"y"}, {attr_int("axis", 0)})};
  Ref<Model> m = compile_imported(import_string(model(g)));
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  auto out = m->execute(Inputs{f32_tensor({4, 2}, x), bool_tensor({true, false, true})});
  EXPECT_EQ(out[0]->dims(), (Ints{2, 2}));
  EXPECT_EQ(floats_of(out[0]), (std::vector<float>{0, 1, 4, 5}));
  out = m->execute(Inputs{f32_tensor({4, 2}, x), bool_tensor({false, false, false})});
  EXPECT_EQ(out[0]->dims(), (Ints{0, 2}));
}

TEST(OnnxCompress, AConditionKnownAtImportGivesAStaticSize) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {5})};
  g.outputs = {value_info("y", kFloat, {""})};
  const char keep[] = {1, 0, 0, 1};
  g.initializers = {tensor_raw("c", kBool, {4}, raw_of(keep, 4))};
  g.nodes = {node("Compress", {"x", "c"}, {"y"})};
  ImportedModel imported = import_string(model(g));
  EXPECT_EQ(imported.graph.type(imported.graph.outputs()[0].value).dims, (std::vector<Dim>{2}));
  auto out = compile_imported(std::move(imported))->execute(Inputs{f32_tensor({5}, {9, 8, 7, 6, 5})});
  EXPECT_EQ(floats_of(out[0]), (std::vector<float>{9, 6}));
}

TEST(OnnxUnique, ByFirstOccurrenceWithEveryOutput) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {"n"})};
  g.outputs = {value_info("y", kFloat, {""}), value_info("i", kInt64, {""}), value_info("inv", kInt64, {""}),
               value_info("k", kInt64, {""})};
  g.nodes = {node("Unique", {"x"}, {"y", "i", "inv", "k"}, {attr_int("sorted", 0)})};
  Ref<Model> m = compile_imported(import_string(model(g)));
  auto out = m->execute(Inputs{f32_tensor({7}, {2, 1, 1, 3, 4, 3, 2})});
  EXPECT_EQ(floats_of(out[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(ints_of(out[1]), (Ints{0, 1, 3, 4}));
  EXPECT_EQ(ints_of(out[2]), (Ints{0, 1, 1, 2, 3, 2, 0}));
  EXPECT_EQ(ints_of(out[3]), (Ints{2, 2, 2, 1}));
  out = m->execute(Inputs{f32_tensor({0}, {})});
  for (const auto& t : out) EXPECT_EQ(t->num_elements(), 0);
}

TEST(OnnxUnique, SlicesWeCannotSortAreUnimplementedNamingTheNode) {
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {3, "w"})};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("Unique", {"x"}, {"y"}, {attr_int("axis", 0)}, "rows")};
  expect_unimplemented_naming(model(g), "'rows' (Unique)", "static size");
  g.inputs = {value_info("x", kFloat, {3, 1000})};
  expect_unimplemented_naming(model(g), "'rows' (Unique)", "1000 elements");
}

}  // namespace
}  // namespace maxc::onnx::testing
