// The wire reader and the message decoding: values round-trip, unknown fields are skipped,
// and no prefix or corruption of a message crashes or escapes as anything but maxc::Error.
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "onnx/model_proto.h"
#include "onnx/proto_reader.h"
#include "proto_writer.h"

namespace maxc::onnx {
namespace {

using testing::Msg;

std::span<const uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(ProtoReader, ReadsEveryWireType) {
  Msg m;
  m.varint(1, 300).fixed32(2, 0xdeadbeef).fixed64(3, 0x0123456789abcdefULL).bytes(4, "hi").varint(5, ~0ULL);
  ProtoReader r(span_of(m.data));
  uint32_t f;
  WireType t;
  r.next_tag(&f, &t);
  EXPECT_EQ(f, 1u);
  EXPECT_EQ(r.read_varint(), 300u);
  r.next_tag(&f, &t);
  EXPECT_EQ(r.read_fixed32(), 0xdeadbeefu);
  r.next_tag(&f, &t);
  EXPECT_EQ(r.read_fixed64(), 0x0123456789abcdefULL);
  r.next_tag(&f, &t);
  EXPECT_EQ(r.read_string(), "hi");
  r.next_tag(&f, &t);
  EXPECT_EQ(r.read_int64(), -1);
  EXPECT_TRUE(r.done());
}

TEST(ProtoReader, AcceptsPackedAndUnpackedRepeats) {
  Msg m;
  m.packed_varints(1, {1, -2, 3}).varint(1, 4).packed_floats(2, {1.5f, -2.f});
  ProtoReader r(span_of(m.data));
  std::vector<int64_t> ints;
  std::vector<float> floats;
  uint32_t f;
  WireType t;
  while (!r.done()) {
    r.next_tag(&f, &t);
    if (f == 1) r.read_repeated_int64(t, &ints);
    else r.read_repeated_float(t, &floats);
  }
  EXPECT_EQ(ints, (std::vector<int64_t>{1, -2, 3, 4}));
  EXPECT_EQ(floats, (std::vector<float>{1.5f, -2.f}));
}

TEST(ProtoReader, RejectsBadLengthsWithOffsets) {
  std::string s = "\x0a\x05" "ab";  // field 1, length 5, two bytes
  ProtoReader r(span_of(s));
  uint32_t f;
  WireType t;
  r.next_tag(&f, &t);
  try {
    r.read_bytes();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kDataLoss);
    EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
  }
  std::string group = "\x0b";  // wire type 3 (start group)
  ProtoReader g(span_of(group));
  EXPECT_THROW(g.next_tag(&f, &t), Error);
  std::string long_varint(11, '\xff');
  ProtoReader v(span_of(long_varint));
  EXPECT_THROW(v.read_varint(), Error);
}

TEST(ProtoReader, LimitsNesting) {
  Msg inner;
  inner.varint(1, 1);
  for (int i = 0; i < kMaxDepth + 2; ++i) {
    Msg outer;
    outer.msg(1, inner);
    inner = outer;
  }
  std::function<void(ProtoReader)> walk = [&](ProtoReader r) {
    uint32_t f;
    WireType t;
    while (!r.done()) {
      r.next_tag(&f, &t);
      if (t == WireType::kLengthDelimited) walk(r.read_message());
      else r.skip(t);
    }
  };
  try {
    walk(ProtoReader(span_of(inner.data)));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
  }
}

std::string sample_model() {
  using namespace testing;
  GraphSpec g;
  g.inputs = {value_info("x", kFloat, {std::string("batch"), int64_t{4}})};
  g.outputs = {value_info("y", kFloat, {std::string("batch"), int64_t{3}})};
  g.initializers = {tensor_f32("w", {4, 3}, std::vector<float>(12, 0.5f)), tensor_f32("b", {3}, {1, 2, 3})};
  g.nodes = {node("Gemm", {"x", "w", "b"}, {"h"}, {attr_float("alpha", 2.f), attr_int("transB", 0)}, "gemm"),
             node("Relu", {"h"}, {"y"})};
  return model(g, 17);
}

TEST(ModelProto, DecodesTheMessagesTheImporterNeeds) {
  std::string bytes = sample_model();
  ModelProto m = decode_model(span_of(bytes));
  EXPECT_EQ(m.ir_version, 8);
  ASSERT_EQ(m.opset_import.size(), 1u);
  EXPECT_EQ(m.opset_import[0].version, 17);
  ASSERT_TRUE(m.has_graph);
  const GraphProto& g = m.graph;
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Gemm");
  EXPECT_EQ(g.nodes[0].name, "gemm");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "w", "b"}));
  ASSERT_NE(g.nodes[0].attr("alpha"), nullptr);
  EXPECT_EQ(g.nodes[0].attr("alpha")->type, AttrType::kFloat);
  EXPECT_FLOAT_EQ(g.nodes[0].attr("alpha")->f, 2.f);
  ASSERT_EQ(g.initializers.size(), 2u);
  EXPECT_EQ(g.initializers[0].name, "w");
  EXPECT_EQ(g.initializers[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(g.initializers[0].raw_data.size(), 48u);
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.inputs[0].dims.size(), 2u);
  EXPECT_EQ(g.inputs[0].dims[0].param, "batch");
  EXPECT_EQ(g.inputs[0].dims[1].value, 4);
  EXPECT_EQ(g.inputs[0].elem_type, 1);
}

TEST(ModelProto, SkipsUnknownFields) {
  Msg t;
  t.varint(1, 2).varint(2, 7).fixed64(99, 5).bytes(100, "future").packed_varints(7, {10, 20}).fixed32(101, 1);
  TensorProto tp = decode_tensor(span_of(t.data));
  EXPECT_EQ(tp.dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(tp.int64_data, (std::vector<int64_t>{10, 20}));
}

TEST(ModelProto, EveryPrefixFailsCleanly) {
  std::string bytes = sample_model();
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      decode_model(span_of(bytes.substr(0, n)));
      // Some prefixes end exactly between fields: those are valid, shorter messages.
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == Code::kDataLoss || e.code() == Code::kInvalidArgument) << e.what();
    }
  }
}

TEST(ModelProto, RandomCorruptionNeverCrashes) {
  std::string bytes = sample_model();
  std::mt19937 rng(42);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) b[rng() % b.size()] = static_cast<char>(rng());
    try {
      decode_model(span_of(b));
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace maxc::onnx
