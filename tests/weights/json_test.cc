// The strict JSON reader under the safetensors header and index files.
#include "weights/json.h"

#include "test_util.h"

namespace maxc::testing {
namespace {

JsonValue parse(std::string_view text) { return parse_json(text, "doc.json"); }

TEST(Json, Scalars) {
  EXPECT_TRUE(parse("null").is_null());
  EXPECT_TRUE(parse(" true ").as_bool());
  EXPECT_FALSE(parse("false").as_bool());
  EXPECT_EQ(parse("0").as_int(), 0);
  EXPECT_EQ(parse("-12").as_int(), -12);
  EXPECT_EQ(parse("9223372036854775807").as_int(), INT64_MAX);
  EXPECT_EQ(parse("-9223372036854775808").as_int(), INT64_MIN);
  // Past int64: kept as a double, so callers that need an integer refuse it.
  EXPECT_FALSE(parse("9223372036854775808").is_int());
  EXPECT_TRUE(parse("9223372036854775808").is_number());
  EXPECT_DOUBLE_EQ(parse("1.5e3").as_double(), 1500.0);
  EXPECT_DOUBLE_EQ(parse("-0.25").as_double(), -0.25);
  EXPECT_FALSE(parse("1.0").is_int());
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20ac")").as_string(), "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parse(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");  // U+1F600, a surrogate pair
  EXPECT_EQ(parse(R"("\u0000")").as_string(), std::string(1, '\0'));
  EXPECT_EQ(parse("\"\xe2\x82\xac\"").as_string(), "\xe2\x82\xac");  // raw UTF-8 passes through
}

TEST(Json, ObjectsKeepDocumentOrder) {
  JsonValue v = parse(R"({"b": 1, "a": [1, "x", {"c": null}], "e": {}})");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.as_object().size(), 3u);
  EXPECT_EQ(v.as_object()[0].first, "b");
  EXPECT_EQ(v.as_object()[1].first, "a");
  EXPECT_EQ(v.find("a")->as_array().size(), 3u);
  EXPECT_TRUE(v.find("a")->as_array()[2].find("c")->is_null());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(v.find("a")->offset(), 14u);
}

TEST(Json, OffsetsIncludeTheBase) {
  JsonValue v = parse_json(R"({"k": 5})", "f", 100);
  EXPECT_EQ(v.offset(), 100u);
  EXPECT_EQ(v.find("k")->offset(), 106u);
  EXPECT_MAXC_ERROR(parse_json("{\"k\": }", "f.bin", 8), Code::kDataLoss, "f.bin", "offset 14");
}

TEST(Json, RejectsWhatIsNotStrictJson) {
  for (const char* bad : {"", " ", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", ".5", "+1", "NaN",
                          "Infinity", "tru", "nul", "'a'", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
                          "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\nb\"", "\"\xff\"", "\"\xc0\xaf\"",
                          "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"", "{\"a\" 1}", "{1:2}",
                          "[1 2]", "1 2", "{} x", "1e999", "/*c*/1", "[\"a\"]]"}) {
    EXPECT_MAXC_ERROR(parse(bad), Code::kDataLoss, "doc.json", "invalid JSON at offset");
  }
}

TEST(Json, RejectsDuplicateKeys) {
  EXPECT_MAXC_ERROR(parse(R"({"w": 1, "v": 2, "w": 3})"), Code::kDataLoss, "duplicate key \"w\"", "offset 17");
}

TEST(Json, DepthIsLimited) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_MAXC_ERROR(parse(deep), Code::kDataLoss, "nesting deeper than 64");
  std::string ok(64, '[');
  ok += std::string(64, ']');
  EXPECT_NO_THROW(parse(ok));
  // A million brackets must not reach the stack's end either.
  std::string huge(1 << 20, '[');
  EXPECT_MAXC_ERROR(parse(huge), Code::kDataLoss, "nesting");
}

TEST(JsonReader, PullsTokensAndSkipsWhatItDoesNotNeed) {
  JsonReader r(R"( {"skip": {"a": [1, {"b": null}, "s"]}, "n": [3, -4.5], "t": true} )", "doc.json");
  r.begin_object();
  std::string key;
  ASSERT_TRUE(r.next_key(key));
  EXPECT_EQ(key, "skip");
  r.skip_value();
  ASSERT_TRUE(r.next_key(key));
  EXPECT_EQ(key, "n");
  r.begin_array();
  ASSERT_TRUE(r.next_item());
  EXPECT_EQ(r.read_number().i, 3);
  ASSERT_TRUE(r.next_item());
  JsonReader::Number n = r.read_number();
  EXPECT_FALSE(n.is_int);
  EXPECT_EQ(n.d, -4.5);
  EXPECT_FALSE(r.next_item());
  ASSERT_TRUE(r.next_key(key));
  EXPECT_EQ(r.peek(), JsonReader::Kind::kBool);
  EXPECT_EQ(r.offset(), 61u);
  EXPECT_TRUE(r.read_bool());
  EXPECT_FALSE(r.next_key(key));
  r.end();
}

TEST(JsonReader, KindMismatchesAreErrors) {
  EXPECT_MAXC_ERROR(JsonReader("1", "d").read_string(), Code::kDataLoss, "expected a string", "offset 0");
  EXPECT_MAXC_ERROR(JsonReader("\"x\"", "d").read_number(), Code::kDataLoss, "expected a number");
  EXPECT_MAXC_ERROR(JsonReader("[]", "d").begin_object(), Code::kDataLoss, "expected an object");
  EXPECT_MAXC_ERROR(JsonReader("{}", "d").begin_array(), Code::kDataLoss, "expected an array");
  EXPECT_MAXC_ERROR(JsonReader("null", "d").read_bool(), Code::kDataLoss, "expected true or false");
  EXPECT_MAXC_ERROR(JsonReader("  ", "d", 10).peek(), Code::kDataLoss, "unexpected end", "offset 12");
}

TEST(Json, QuoteAndPrintRoundTrip) {
  const std::string s = std::string("q\"b\\n\n\x01\x1f/") + "\xe2\x82\xac";
  EXPECT_EQ(parse(json_quote(s)).as_string(), s);
  EXPECT_EQ(json_quote("\x01"), "\"\\u0001\"");
  const char* doc = R"({"a":[1,-2,0.5,true,false,null,"x"],"b":{"c":1e+20}})";
  JsonValue v = parse(doc);
  EXPECT_EQ(to_json(v), R"({"a":[1,-2,0.5,true,false,null,"x"],"b":{"c":1e+20}})");
  EXPECT_EQ(to_json(parse("2.0")), "2.0");  // stays a double
}

}  // namespace
}  // namespace maxc::testing
