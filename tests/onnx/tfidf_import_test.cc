// TfIdfVectorizer over an integer pool (an import-time composition of equal, slices, mul,
// sum and a placement matmul) against hand-counted n-grams: TF, IDF and TFIDF, with and
// without weights, 1-D and 2-D inputs, skips, rows shorter than an n-gram's span (static and
// symbolic), pool duplicates and shared coordinates; and the models it refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "proto_writer.h"

namespace maxc::onnx::testing {
namespace {

Msg attr_floats(const std::string& name, const std::vector<float>& v) {
  Msg a;
  a.bytes(1, name).varint(20, 6).packed_floats(7, v);
  return a;
}

Msg attr_strings(const std::string& name, const std::vector<std::string>& v) {
  Msg a;
  a.bytes(1, name).varint(20, 8);
  for (const std::string& s : v) a.bytes(9, s);
  return a;
}

// Pool: unigrams 2, 5, 9; bigrams [5, 9], [2, 2]; trigram [5, 2, 9] (six n-grams).
const std::vector<int64_t> kPool = {2, 5, 9, 5, 9, 2, 2, 5, 2, 9};
const std::vector<int64_t> kCounts = {0, 3, 7};
const std::vector<int64_t> kIdentity = {0, 1, 2, 3, 4, 5};
const std::vector<int64_t> kReversed = {5, 4, 3, 2, 1, 0};

struct Tfidf {
  std::string mode = "TF";
  int64_t min_len = 1, max_len = 3, max_skip = 0;
  std::vector<int64_t> pool = kPool, counts = kCounts, indexes = kIdentity;
  std::optional<std::vector<float>> weights;

  std::vector<Msg> attrs() const {
    std::vector<Msg> a = {attr_string("mode", mode),        attr_int("min_gram_length", min_len),
                          attr_int("max_gram_length", max_len), attr_int("max_skip_count", max_skip),
                          attr_ints("pool_int64s", pool),   attr_ints("ngram_counts", counts),
                          attr_ints("ngram_indexes", indexes)};
    if (weights) a.push_back(attr_floats("weights", *weights));
    return a;
  }
};

std::string tfidf_model(const std::vector<Msg>& attrs, const std::vector<DimSpec>& in, int32_t elem = kInt64) {
  GraphSpec g;
  g.inputs = {value_info("x", elem, in)};
  g.outputs = {value_info("y", kFloat, {})};
  g.nodes = {node("TfIdfVectorizer", {"x"}, {"y"}, attrs, "vec")};
  return model(g, 9);
}

Ref<Tensor> int_tensor(DType dt, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  auto t = Tensor::create(Device::cpu(), dt, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::kInt32) reinterpret_cast<int32_t*>(t->data())[i] = static_cast<int32_t>(v[i]);
    else reinterpret_cast<int64_t*>(t->data())[i] = v[i];
  }
  return t;
}

// Runs `spec` on x (int64 unless dt says otherwise) and checks the output's dims and values.
void expect_output(const Tfidf& spec, const std::vector<int64_t>& dims, const std::vector<int64_t>& x,
                   const std::vector<int64_t>& want_dims, const std::vector<float>& want, DType dt = DType::kInt64,
                   std::optional<std::vector<DimSpec>> declared = std::nullopt) {
  std::vector<DimSpec> in(dims.begin(), dims.end());
  const auto out = run_model(tfidf_model(spec.attrs(), declared.value_or(in), dt == DType::kInt32 ? kInt32 : kInt64),
                             {int_tensor(dt, dims, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->dtype(), DType::kFloat32);
  EXPECT_EQ(std::vector<int64_t>(out[0]->dims().begin(), out[0]->dims().end()), want_dims);
  expect_near(floats_of(out[0]), want, 0);
}

// x = [5, 9, 2, 2, 2, 5, 2, 9, 9]: unigrams 2 x4, 5 x2, 9 x3; with consecutive tokens
// [5, 9] x1 and [2, 2] x2 (positions 2 and 3), [5, 2, 9] x1 (position 5).
const std::vector<int64_t> kX = {5, 9, 2, 2, 2, 5, 2, 9, 9};

TEST(OnnxTfIdf, TfCountsEveryLengthAtItsCoordinate) {
  Tfidf s;
  expect_output(s, {9}, kX, {6}, {4, 2, 3, 1, 2, 1});
  s.indexes = kReversed;
  expect_output(s, {9}, kX, {6}, {1, 2, 1, 3, 2, 4});
}

TEST(OnnxTfIdf, SkipsCountLongerGramsOncePerDistance) {
  // Distance 2 pairs (x[p], x[p+2]): [5, 9] at p=5, [2, 2] at p=2 and p=4: bigrams 2 and 4.
  // Distance 2 triples (x[p], x[p+2], x[p+4]) hold no [5, 2, 9]: the trigram stays 1.
  Tfidf s;
  s.min_len = 2;
  s.max_skip = 1;
  expect_output(s, {9}, kX, {6}, {0, 0, 0, 2, 4, 1});
  // Unigrams count once, whatever the skips.
  s.min_len = 1;
  expect_output(s, {9}, kX, {6}, {4, 2, 3, 2, 4, 1});
  // Distance 3 pairs add [2, 2] at p=3 and [5, 9] at p=5; its triples (5, 2, 2), (9, 5, 9)
  // and (2, 2, 9) add no trigram.
  s.max_skip = 2;
  expect_output(s, {9}, kX, {6}, {4, 2, 3, 3, 5, 1});
}

// Row 0 [2, 2, 5, 9, 2]: 2 x3, 5, 9, [5, 9], [2, 2]. Row 1 [9, 9, 9, 1, 5]: 5, 9 x3.
const std::vector<int64_t> kBatch = {2, 2, 5, 9, 2, 9, 9, 9, 1, 5};
const std::vector<float> kWeights = {0.5f, 1.5f, 2, 3, 4, 5};

TEST(OnnxTfIdf, BatchOfInt32RowsInEachMode) {
  Tfidf s;
  s.max_len = 2;
  expect_output(s, {2, 5}, kBatch, {2, 6}, {3, 1, 1, 1, 1, 0, 0, 1, 3, 0, 0, 0}, DType::kInt32);
  s.mode = "IDF";
  expect_output(s, {2, 5}, kBatch, {2, 6}, {1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0}, DType::kInt32);
  s.weights = kWeights;
  expect_output(s, {2, 5}, kBatch, {2, 6}, {0.5f, 1.5f, 2, 3, 4, 0, 0, 1.5f, 2, 0, 0, 0}, DType::kInt32);
  s.mode = "TFIDF";
  expect_output(s, {2, 5}, kBatch, {2, 6}, {1.5f, 1.5f, 2, 3, 4, 0, 0, 1.5f, 6, 0, 0, 0}, DType::kInt32);
  s.weights.reset();
  expect_output(s, {2, 5}, kBatch, {2, 6}, {3, 1, 1, 1, 1, 0, 0, 1, 3, 0, 0, 0}, DType::kInt32);
}

TEST(OnnxTfIdf, TfIgnoresWeights) {
  Tfidf s;
  s.weights = kWeights;
  expect_output(s, {9}, kX, {6}, {4, 2, 3, 1, 2, 1});
}

TEST(OnnxTfIdf, RowsShorterThanAGramsSpanHaveNoWindowForIt) {
  Tfidf s;
  s.max_skip = 2;
  // [5, 9]: the bigram at distance 1 only; no trigram fits.
  expect_output(s, {2}, {5, 9}, {6}, {0, 1, 1, 1, 0, 0});
  s.min_len = 2;
  expect_output(s, {1}, {5}, {6}, {0, 0, 0, 0, 0, 0});
  expect_output(s, {2, 1}, {5, 9}, {2, 6}, std::vector<float>(12, 0));
}

TEST(OnnxTfIdf, SymbolicRowLengthsMatchTheStaticCounts) {
  Tfidf s;
  s.max_skip = 2;
  const std::vector<DimSpec> symbolic = {"n", "c"};
  expect_output(s, {1, 9}, kX, {1, 6}, {4, 2, 3, 3, 5, 1}, DType::kInt64, symbolic);
  expect_output(s, {2, 2}, {5, 9, 2, 2}, {2, 6}, {0, 1, 1, 1, 0, 0, 2, 0, 0, 0, 1, 0}, DType::kInt64, symbolic);
  expect_output(s, {1, 1}, {2}, {1, 6}, {1, 0, 0, 0, 0, 0}, DType::kInt64, symbolic);
}

TEST(OnnxTfIdf, ARepeatedGramCountsAtItsLastCoordinateAndSharedCoordinatesAdd) {
  Tfidf s;
  s.max_len = 1;
  s.pool = {7, 8, 7};
  s.counts = {0};
  s.indexes = {0, 1, 2};
  expect_output(s, {4}, {7, 8, 7, 3}, {3}, {0, 1, 2});
  s.indexes = {1, 1, 3};
  expect_output(s, {4}, {7, 8, 7, 3}, {4}, {0, 1, 0, 2});
  s.pool = {7, 8};
  s.indexes = {1, 1};
  expect_output(s, {4}, {7, 8, 7, 3}, {2}, {0, 3});
}

TEST(OnnxTfIdf, GramLengthsOutsideTheRangeKeepTheirCoordinates) {
  // Only bigrams: unigram and trigram coordinates stay 0, bigrams keep theirs.
  Tfidf s;
  s.min_len = s.max_len = 2;
  s.indexes = kReversed;
  expect_output(s, {9}, kX, {6}, {0, 2, 1, 0, 0, 0});
}

// ---- refusals ----

Error import_tfidf_error(const std::vector<Msg>& attrs, const std::vector<DimSpec>& in = {4}, int32_t elem = kInt64) {
  return import_error(tfidf_model(attrs, in, elem));
}

void expect_invalid(const Tfidf& s, const std::string& mention, const std::vector<DimSpec>& in = {4},
                    int32_t elem = kInt64) {
  Error e = import_tfidf_error(s.attrs(), in, elem);
  EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
  EXPECT_NE(std::string(e.what()).find("'vec' (TfIdfVectorizer)"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
}

TEST(OnnxTfIdf, StringPoolsAreUnimplementedNamingTheNode) {
  Tfidf s;
  std::vector<Msg> attrs = s.attrs();
  attrs.erase(attrs.begin() + 4);  // pool_int64s
  attrs.push_back(attr_strings("pool_strings", {"a", "b", "c", "a", "b", "c", "c", "a", "c", "b"}));
  expect_unimplemented_naming(tfidf_model(attrs, {4}), "'vec' (TfIdfVectorizer)", "strings are not supported");
}

TEST(OnnxTfIdf, StringInputsStayUnimplemented) {
  std::vector<Msg> attrs = Tfidf().attrs();
  attrs.erase(attrs.begin() + 4);
  attrs.push_back(attr_strings("pool_strings", {"a", "b", "c", "a", "b", "c", "c", "a", "c", "b"}));
  EXPECT_EQ(import_tfidf_error(attrs, {4}, kString).code(), Code::kUnimplemented);
}

TEST(OnnxTfIdf, BadAttributesAreInvalidNamingTheNode) {
  Tfidf s;
  s.mode = "BM25";
  expect_invalid(s, "'mode'");
  s = Tfidf();
  s.min_len = 3;
  s.max_len = 2;
  expect_invalid(s, "min_gram_length");
  s = Tfidf();
  s.min_len = 0;
  expect_invalid(s, "min_gram_length");
  s = Tfidf();
  s.max_skip = -1;
  expect_invalid(s, "max_skip_count");
  s = Tfidf();
  s.indexes = {0, 1, 2, 3, 4};
  expect_invalid(s, "ngram_indexes");
  s.indexes = {0, 1, 2, 3, 4, 5, 6};
  expect_invalid(s, "ngram_indexes");
  s.indexes = {0, 1, -2, 3, 4, 5};
  expect_invalid(s, "negative");
  s = Tfidf();
  s.counts = {0, 3, 5};  // five items left for the trigrams
  expect_invalid(s, "not a multiple of 3");
  s.counts = {0, 7, 3};
  expect_invalid(s, "ngram_counts");
  s.counts = {0, 3, 11};
  expect_invalid(s, "ngram_counts");
  s = Tfidf();
  s.mode = "TFIDF";
  s.weights = std::vector<float>{1, 2, 3};
  expect_invalid(s, "weights");
  s.weights = std::vector<float>(6, 1);
  s.indexes = {0, 1, 2, 3, 4, 9};  // coordinate 9 has no weight
  expect_invalid(s, "weights");
}

TEST(OnnxTfIdf, MissingAttributesAreInvalid) {
  for (size_t drop = 0; drop < 7; ++drop) {
    std::vector<Msg> attrs = Tfidf().attrs();
    attrs.erase(attrs.begin() + static_cast<std::ptrdiff_t>(drop));
    Error e = import_tfidf_error(attrs);
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << "attribute " << drop << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("'vec' (TfIdfVectorizer)"), std::string::npos) << e.what();
  }
}

TEST(OnnxTfIdf, InputsOfOtherTypesOrRanksAreInvalid) {
  expect_invalid(Tfidf(), "float32", {4}, kFloat);
  expect_invalid(Tfidf(), "rank", {2, 2, 2});
  expect_invalid(Tfidf(), "rank", {});
}

}  // namespace
}  // namespace maxc::onnx::testing
