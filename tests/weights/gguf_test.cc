// GGUF: round trips through the writer (every metadata value type, every supported tensor
// type, versions 2 and 3, custom alignment), files built by hand from the format's
// description, and the reader's refusals of well-formed but unsupported or wrong content.
#include "weights/gguf.h"

#include <cmath>
#include <limits>

#include "gguf_image.h"
#include "test_util.h"
#include "weights/ggml_type.h"
#include "weights/gguf_writer.h"

namespace maxc::testing {
namespace {

GgufKv kv(std::string key, GgufValue::Variant v) { return {std::move(key), GgufValue{std::move(v)}}; }
GgufArray arr(GgufArray::Elements e) { return GgufArray{std::move(e)}; }

std::vector<GgufKv> every_value_type() {
  std::vector<GgufKv> md = {
      kv("general.architecture", std::string("llama")),
      kv("u8", uint8_t{200}),
      kv("i8", int8_t{-100}),
      kv("u16", uint16_t{60000}),
      kv("i16", int16_t{-30000}),
      kv("u32", uint32_t{4000000000u}),
      kv("i32", int32_t{-2000000000}),
      kv("f32", 1.5f),
      kv("f32.nan", std::numeric_limits<float>::quiet_NaN()),
      kv("bool.true", true),
      kv("bool.false", false),
      kv("string", std::string("h\xc3\xa9llo \"world\"")),
      kv("string.empty", std::string()),
      kv("string.nul", std::string("a\0b", 3)),
      kv("u64", uint64_t{1} << 63),
      kv("i64", int64_t{-(int64_t{1} << 62)}),
      kv("f64", 3.25),
      kv("f64.inf", -std::numeric_limits<double>::infinity()),
      kv("arr.u8", arr(std::vector<uint8_t>{1, 2, 255})),
      kv("arr.i8", arr(std::vector<int8_t>{-1, 0, 1})),
      kv("arr.u16", arr(std::vector<uint16_t>{65535})),
      kv("arr.i16", arr(std::vector<int16_t>{-5, 5})),
      kv("arr.u32", arr(std::vector<uint32_t>{7, 8})),
      kv("arr.i32", arr(std::vector<int32_t>{-7, 8, 9})),
      kv("arr.f32", arr(std::vector<float>{0.5f, -2.0f})),
      kv("arr.bool", arr(std::vector<bool>{true, false, true})),
      kv("arr.string", arr(std::vector<std::string>{"<s>", "", "\xe2\x96\x81the"})),
      kv("arr.u64", arr(std::vector<uint64_t>{UINT64_MAX})),
      kv("arr.i64", arr(std::vector<int64_t>{INT64_MIN, 0})),
      kv("arr.f64", arr(std::vector<double>{1e300, -0.0})),
      kv("arr.nested", arr(std::vector<GgufArray>{arr(std::vector<int32_t>{1, 2}),
                                                   arr(std::vector<std::string>{"x"}),
                                                   GgufArray::of(GgufType::kFloat64),
                                                   arr(std::vector<GgufArray>{arr(std::vector<bool>{false})})})),
  };
  // An empty array of every element type, arrays of arrays included.
  for (uint32_t t = 0; t < kGgufTypeCount; ++t)
    md.push_back(kv(std::string("arr.empty.") + gguf_type_name(static_cast<GgufType>(t)),
                    GgufArray::of(static_cast<GgufType>(t))));
  return md;
}

struct Owned {
  std::string name;
  DType dtype;
  QuantEncoding encoding;
  std::vector<int64_t> logical;
  std::vector<uint8_t> data;
  uint32_t ggml_type;
};

Owned plain(std::string name, DType dtype, std::vector<int64_t> dims, uint32_t ggml_type, uint8_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  auto data = pattern(static_cast<size_t>(n) * dtype_size_in_bytes(dtype), seed);
  return {std::move(name), dtype, QuantEncoding::kNone, std::move(dims), std::move(data), ggml_type};
}

Owned quant(std::string name, QuantEncoding enc, std::vector<int64_t> dims, uint32_t ggml_type, uint8_t seed) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) rows *= dims[i];
  auto data = pattern(static_cast<size_t>(rows * quant_row_bytes(enc, dims.back())), seed);
  return {std::move(name), DType::kUInt8, enc, std::move(dims), std::move(data), ggml_type};
}

std::vector<Owned> every_tensor_type() {
  return {
      plain("f32", DType::kFloat32, {3, 4}, 0, 1),
      plain("f16", DType::kFloat16, {2, 5}, 1, 2),
      quant("q4_0", QuantEncoding::kQ4_0, {2, 64}, 2, 3),
      quant("q8_0", QuantEncoding::kQ8_0, {3, 32}, 8, 4),
      quant("q4_k", QuantEncoding::kQ4_K, {2, 256}, 12, 5),
      quant("q5_k", QuantEncoding::kQ5_K, {1, 2, 512}, 13, 6),
      quant("q6_k", QuantEncoding::kQ6_K, {256}, 14, 7),
      plain("i8", DType::kInt8, {5}, 24, 8),
      plain("i16", DType::kInt16, {3, 3}, 25, 9),
      plain("i32", DType::kInt32, {1, 2, 3, 4}, 26, 10),
      plain("i64", DType::kInt64, {2}, 27, 11),
      plain("f64", DType::kFloat64, {2, 2, 2}, 28, 12),
      plain("bf16", DType::kBFloat16, {7}, 30, 13),
      plain("scalar", DType::kFloat32, {}, 0, 14),
      plain("empty", DType::kFloat32, {0, 3}, 0, 15),
  };
}

std::vector<GgufTensor> views(const std::vector<Owned>& owned) {
  std::vector<GgufTensor> out;
  for (const auto& o : owned) out.push_back({o.name, o.dtype, o.encoding, o.logical, o.data});
  return out;
}

void expect_tensors(const GgufFile& f, const std::vector<Owned>& tensors) {
  ASSERT_EQ(f.entries.size(), tensors.size());
  ASSERT_EQ(f.ggml_types.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const WeightEntry& e = f.entries[i];
    const Owned& o = tensors[i];
    SCOPED_TRACE(o.name);
    EXPECT_EQ(e.info.name, o.name);
    EXPECT_EQ(e.info.dtype, o.dtype);
    EXPECT_EQ(e.info.encoding, o.encoding);
    EXPECT_EQ(e.info.logical_dims, o.logical);
    std::vector<int64_t> dims = o.logical;
    if (o.encoding != QuantEncoding::kNone) dims.back() = quant_row_bytes(o.encoding, dims.back());
    EXPECT_EQ(e.info.dims, dims);
    EXPECT_EQ(f.ggml_types[i], o.ggml_type);
    EXPECT_EQ((e.offset - f.data_offset) % f.alignment, 0u);
    EXPECT_EQ(e.offset % f.alignment, 0u);
    ASSERT_EQ(e.bytes, o.data.size());
    EXPECT_TRUE(std::equal(o.data.begin(), o.data.end(), e.file->data() + e.offset));
  }
}

void expect_metadata(const GgufFile& f, const std::vector<GgufKv>& md) {
  ASSERT_GE(f.metadata.size(), md.size());
  for (size_t i = 0; i < md.size(); ++i) {
    EXPECT_EQ(f.metadata[i].key, md[i].key);
    EXPECT_TRUE(f.metadata[i].value == md[i].value) << md[i].key;
  }
}

TEST(Gguf, RoundTripEveryValueAndTensorType) {
  ScratchDir dir;
  const auto md = every_value_type();
  const auto tensors = every_tensor_type();
  for (uint32_t version : {2u, 3u}) {
    for (uint32_t alignment : {0u, 1u, 8u, 64u, 4096u}) {
      SCOPED_TRACE("version " + std::to_string(version) + ", alignment " + std::to_string(alignment));
      const std::string path = dir.path("m.gguf");
      write_gguf(path, md, views(tensors), {version, alignment});
      GgufFile f = read_gguf(path);
      EXPECT_EQ(f.version, version);
      EXPECT_EQ(f.alignment, alignment ? alignment : 32u);
      expect_metadata(f, md);
      // A general.alignment pair is added only where the alignment is not the default.
      const GgufValue* a = f.find("general.alignment");
      if (alignment == 0 || alignment == 32) {
        EXPECT_EQ(a, nullptr);
        EXPECT_EQ(f.metadata.size(), md.size());
      } else {
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(a->as_uint(), alignment);
      }
      expect_tensors(f, tensors);
      EXPECT_EQ(f.data_offset % f.alignment, 0u);
    }
  }
}

TEST(Gguf, AlignmentFromTheMetadata) {
  ScratchDir dir;
  std::vector<GgufKv> md = {kv("general.alignment", uint32_t{16})};
  const auto tensors = every_tensor_type();
  write_gguf(dir.path("a.gguf"), md, views(tensors));
  GgufFile f = read_gguf(dir.path("a.gguf"));
  EXPECT_EQ(f.alignment, 16u);
  EXPECT_EQ(f.metadata.size(), 1u);
  expect_tensors(f, tensors);
}

TEST(Gguf, ValueAccessors) {
  EXPECT_EQ(GgufValue{uint8_t{7}}.as_uint(), 7u);
  EXPECT_EQ(GgufValue{int32_t{-1}}.as_uint(), std::nullopt);
  EXPECT_EQ(GgufValue{int32_t{-1}}.as_int(), -1);
  EXPECT_EQ(GgufValue{uint64_t{UINT64_MAX}}.as_int(), std::nullopt);
  EXPECT_EQ(GgufValue{true}.as_uint(), std::nullopt);
  EXPECT_EQ(GgufValue{2.5f}.as_float(), 2.5);
  EXPECT_EQ(GgufValue{std::string("s")}.as_float(), std::nullopt);
  EXPECT_EQ(*GgufValue{std::string("s")}.as_string(), "s");
  EXPECT_EQ(GgufValue{uint8_t{1}}.as_string(), nullptr);
  EXPECT_EQ(GgufValue{arr(std::vector<int8_t>{1, 2})}.as_array()->size(), 2u);
  EXPECT_EQ(GgufValue{arr(std::vector<int8_t>{})}.as_array()->element_type(), GgufType::kInt8);
  EXPECT_EQ(GgufValue{GgufArray::of(GgufType::kArray)}.as_array()->element_type(), GgufType::kArray);
  EXPECT_FALSE(GgufValue{uint8_t{1}} == GgufValue{int8_t{1}});
  EXPECT_FALSE(GgufValue{GgufArray::of(GgufType::kUInt8)} == GgufValue{GgufArray::of(GgufType::kInt8)});
}

// A file laid out by hand: ne is innermost first, so ne = [4, 3] is our [3, 4].
TEST(Gguf, ReadsAHandMadeFileAndTheWriterMatchesIt) {
  ScratchDir dir;
  const auto f32 = pattern(48, 1);
  const auto q8 = pattern(2 * 68, 2);
  std::vector<uint8_t> data = f32;
  data.resize(64, 0);  // padding to the next multiple of 32
  data.insert(data.end(), q8.begin(), q8.end());
  data.resize(64 + 160, 0);
  const std::vector<uint8_t> image = GgufImage()
                                         .kv_str("general.name", "tiny")
                                         .tensor("w", {4, 3}, 0, 0)
                                         .tensor("q", {64, 2}, 8, 64)
                                         .data(data)
                                         .build();
  GgufFile f = read_gguf(in_memory(image, "tiny.gguf"));
  EXPECT_EQ(f.version, 3u);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(*f.find("general.name")->as_string(), "tiny");
  EXPECT_EQ(f.entries[0].info.dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(f.entries[0].offset, f.data_offset);
  EXPECT_EQ(f.entries[1].info.dims, (std::vector<int64_t>{2, 68}));
  EXPECT_EQ(f.entries[1].info.logical_dims, (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(f.entries[1].info.encoding, QuantEncoding::kQ8_0);
  EXPECT_EQ(f.entries[1].offset, f.data_offset + 64);
  EXPECT_EQ(f.data_offset + data.size(), image.size());

  write_gguf(dir.path("w.gguf"), {kv("general.name", std::string("tiny"))},
             {{"w", DType::kFloat32, QuantEncoding::kNone, {3, 4}, f32},
              {"q", DType::kUInt8, QuantEncoding::kQ8_0, {2, 64}, q8}});
  EXPECT_EQ(read_bytes(dir.path("w.gguf")), image);
}

TEST(Gguf, NoTensors) {
  ScratchDir dir;
  write_gguf(dir.path("e.gguf"), {}, {});
  GgufFile f = read_gguf(dir.path("e.gguf"));
  EXPECT_TRUE(f.entries.empty());
  EXPECT_TRUE(f.metadata.empty());
  // Without tensors the data section's padding is optional.
  EXPECT_NO_THROW(read_gguf(in_memory(GgufImage().alignment(1).build())));
}

TEST(Gguf, TypeTable) {
  for (uint32_t id : {0u, 1u, 2u, 8u, 12u, 13u, 14u, 24u, 25u, 26u, 27u, 28u, 30u}) {
    const GgmlTypeInfo* t = ggml_type_info(id);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->supported) << t->name;
    EXPECT_EQ(ggml_type_for(t->dtype, t->encoding), id);
  }
  for (uint32_t id : {3u, 4u, 5u, 6u, 7u, 9u, 10u, 11u, 15u, 16u, 23u, 29u, 31u, 34u, 35u, 39u}) {
    ASSERT_NE(ggml_type_info(id), nullptr) << id;
    EXPECT_FALSE(ggml_type_info(id)->supported) << id;
  }
  EXPECT_EQ(ggml_type_info(40), nullptr);
  EXPECT_EQ(ggml_type_for(DType::kUInt8, QuantEncoding::kNone), std::nullopt);
  EXPECT_EQ(ggml_type_for(DType::kBool, QuantEncoding::kNone), std::nullopt);
}

std::vector<uint8_t> one_tensor(uint32_t type, std::vector<uint64_t> ne, uint64_t offset = 0, size_t data = 256) {
  return GgufImage().tensor("blk.0.w", std::move(ne), type, offset).data(std::vector<uint8_t>(data)).build();
}

TEST(Gguf, UnsupportedAndUnknownTypes) {
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(3, {32}), "q41.gguf")), Code::kUnimplemented, "q41.gguf",
                    "tensor 'blk.0.w'", "Q4_1", "offset 24");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(10, {256}), "k.gguf")), Code::kUnimplemented, "Q2_K");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(16, {256}), "k.gguf")), Code::kUnimplemented, "IQ2_XXS");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(4, {32}), "k.gguf")), Code::kUnimplemented, "Q4_2");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(99, {32}), "u.gguf")), Code::kInvalidArgument, "u.gguf",
                    "tensor 'blk.0.w'", "unknown GGML type 99");
}

TEST(Gguf, VersionsAndMagic) {
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().version(1).build(), "v1.gguf")), Code::kUnimplemented,
                    "v1.gguf", "version 1");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().version(4).build())), Code::kUnimplemented, "version 4");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().version(0x03000000).build())), Code::kUnimplemented,
                    "big-endian");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().version(0).build())), Code::kDataLoss, "version 0");
  std::vector<uint8_t> bad = GgufImage().build();
  bad[3] = 'G';
  EXPECT_MAXC_ERROR(read_gguf(in_memory(bad, "bad.gguf")), Code::kDataLoss, "bad.gguf", "bad magic", "offset 0");
  EXPECT_TRUE(looks_like_gguf(GgufImage().build()));
  EXPECT_FALSE(looks_like_gguf(bad));
}

TEST(Gguf, AlignmentChecks) {
  auto with_alignment = [](auto&& value_writer, uint32_t type) {
    return GgufImage().kv("general.alignment", type, value_writer).alignment(1).build();
  };
  EXPECT_MAXC_ERROR(read_gguf(in_memory(with_alignment([](Bytes& b) { b.u32(48); }, 4), "al.gguf")),
                    Code::kDataLoss, "al.gguf", "general.alignment", "48 is not a power of two", "offset 53");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(with_alignment([](Bytes& b) { b.u32(0); }, 4))), Code::kDataLoss,
                    "0 is not a power of two");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(with_alignment([](Bytes& b) { b.u64(64); }, 10))), Code::kDataLoss,
                    "uint64, not a uint32");
  GgufFile f = read_gguf(in_memory(with_alignment([](Bytes& b) { b.u32(1); }, 4)));
  EXPECT_EQ(f.alignment, 1u);
}

TEST(Gguf, StructuralChecks) {
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {4}, 4), "mis.gguf")), Code::kDataLoss, "mis.gguf",
                    "tensor 'blk.0.w'", "data offset 4 is not a multiple of the alignment 32");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {1, 1, 1, 1, 1}), "d.gguf")), Code::kDataLoss,
                    "tensor 'blk.0.w'", "5 dims");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(12, {100}))), Code::kDataLoss, "tensor 'blk.0.w'",
                    "positive multiple of 256", "is 100");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(12, {}))), Code::kDataLoss, "tensor 'blk.0.w'", "Q4_K");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {65}), "past.gguf")), Code::kDataLoss, "past.gguf",
                    "tensor 'blk.0.w'", "260 bytes", "run past the end of the file");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {1}, 256), "past.gguf")), Code::kDataLoss,
                    "tensor 'blk.0.w'", "run past the end");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {uint64_t{1} << 63}))), Code::kDataLoss, "too large");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(one_tensor(0, {uint64_t{1} << 40, uint64_t{1} << 40}))), Code::kDataLoss,
                    "overflows");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage()
                                            .tensor("a", {8}, 0, 0)
                                            .tensor("b", {8}, 0, 0)
                                            .data(std::vector<uint8_t>(64))
                                            .build(),
                                        "ov.gguf")),
                    Code::kDataLoss, "ov.gguf", "overlap", "'a'", "'b'");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage()
                                            .tensor("a", {8}, 0, 0)
                                            .tensor("a", {8}, 0, 32)
                                            .data(std::vector<uint8_t>(64))
                                            .build())),
                    Code::kDataLoss, "tensor 'a'", "duplicate tensor name");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().kv_u32("k", 1).kv_u32("k", 2).build())), Code::kDataLoss,
                    "metadata key 'k'", "duplicate key");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().kv("b", 7, [](Bytes& b) { b.put<uint8_t>(2); }).build())),
                    Code::kDataLoss, "metadata key 'b'", "bool value 2");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().kv("x", 13, [](Bytes& b) { b.u32(0); }).build())),
                    Code::kDataLoss, "metadata key 'x'", "unknown value type 13");
  EXPECT_MAXC_ERROR(read_gguf(in_memory(GgufImage().kv("x", 9, [](Bytes& b) { b.u32(77).u64(0); }).build())),
                    Code::kDataLoss, "unknown array element type 77");
  // Empty tensors may share an offset with anything.
  GgufFile f = read_gguf(in_memory(GgufImage()
                                       .tensor("a", {8}, 0, 0)
                                       .tensor("z", {0, 5}, 0, 0)
                                       .data(std::vector<uint8_t>(32))
                                       .build()));
  EXPECT_EQ(f.entries[1].bytes, 0u);
  EXPECT_EQ(f.entries[1].info.dims, (std::vector<int64_t>{5, 0}));
}

TEST(Gguf, NestingIsLimited) {
  auto nested = [](int depth) {
    return GgufImage()
        .kv("deep", 9,
            [&](Bytes& b) {
              for (int i = 1; i < depth; ++i) b.u32(9).u64(1);
              b.u32(0).u64(0);
            })
        .build();
  };
  EXPECT_NO_THROW(read_gguf(in_memory(nested(kGgufMaxArrayDepth))));
  EXPECT_MAXC_ERROR(read_gguf(in_memory(nested(kGgufMaxArrayDepth + 1))), Code::kDataLoss, "metadata key 'deep'",
                    "nested deeper");
  // The writer refuses what the reader would.
  GgufArray a = GgufArray::of(GgufType::kUInt8);
  for (int i = 0; i < kGgufMaxArrayDepth; ++i) a = arr(std::vector<GgufArray>{a});
  ScratchDir dir;
  EXPECT_MAXC_ERROR(write_gguf(dir.path("n.gguf"), {kv("deep", a)}, {}), Code::kInvalidArgument, "nest");
}

TEST(Gguf, WriterRefusesBadInput) {
  ScratchDir dir;
  const std::string path = dir.path("bad.gguf");
  const std::vector<uint8_t> bytes(64);
  const std::span<const uint8_t> b16(bytes.data(), 16);
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {}, {1, 0}), Code::kInvalidArgument, "version 1");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {}, {3, 48}), Code::kInvalidArgument, "48", "power of two");
  EXPECT_MAXC_ERROR(write_gguf(path, {kv("general.alignment", uint32_t{16})}, {}, {3, 64}), Code::kInvalidArgument,
                    "disagrees");
  EXPECT_MAXC_ERROR(write_gguf(path, {kv("general.alignment", uint64_t{16})}, {}), Code::kInvalidArgument,
                    "uint32");
  EXPECT_MAXC_ERROR(write_gguf(path, {kv("k", true), kv("k", false)}, {}), Code::kInvalidArgument, "duplicate",
                    "'k'");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {{"t", DType::kFloat32, QuantEncoding::kNone, {4}, b16},
                                          {"t", DType::kFloat32, QuantEncoding::kNone, {4}, b16}}),
                    Code::kInvalidArgument, "duplicate tensor name 't'");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {{"t", DType::kFloat32, QuantEncoding::kNone, {1, 1, 1, 1, 4}, b16}}),
                    Code::kInvalidArgument, "'t'", "at most 4 dims");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {{"t", DType::kUInt16, QuantEncoding::kNone, {8}, b16}}),
                    Code::kInvalidArgument, "'t'", "uint16");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {{"t", DType::kFloat32, QuantEncoding::kNone, {8}, b16}}),
                    Code::kInvalidArgument, "'t'", "needs 32 bytes", "got 16");
  EXPECT_MAXC_ERROR(write_gguf(path, {}, {{"t", DType::kUInt8, QuantEncoding::kQ4_0, {31}, b16}}),
                    Code::kInvalidArgument, "q4_0");
  EXPECT_TRUE(std::filesystem::is_empty(dir.dir()));
}

}  // namespace
}  // namespace maxc::testing
