// safetensors: writer and reader round trips, sharded index files, and the reader's checks
// on well-formed but wrong headers (hostile_test.cc covers damaged bytes).
#include "weights/safetensors.h"

#include <sys/stat.h>

#include "driver/tensor.h"
#include "test_util.h"
#include "weights/safetensors_writer.h"

namespace maxc::testing {
namespace {

const DType kAllDTypes[] = {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                            DType::kInt64,   DType::kInt32,   DType::kInt16,   DType::kInt8,
                            DType::kUInt64,  DType::kUInt32,  DType::kUInt16,  DType::kUInt8,
                            DType::kBool,    DType::kFloat8E4M3Fn, DType::kFloat8E5M2, DType::kFloat8E8M0Fnu};

struct Owned {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

std::vector<SafetensorsTensor> views(const std::vector<Owned>& owned) {
  std::vector<SafetensorsTensor> out;
  for (const auto& o : owned) out.push_back({o.name, o.dtype, o.dims, o.data});
  return out;
}

Owned make(std::string name, DType dtype, std::vector<int64_t> dims, uint8_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<uint8_t> data = pattern(static_cast<size_t>(n) * dtype_size_in_bytes(dtype), seed);
  if (dtype == DType::kBool)
    for (auto& b : data) b &= 1;
  return {std::move(name), dtype, std::move(dims), std::move(data)};
}

void expect_entry(const WeightEntry& e, const Owned& o) {
  SCOPED_TRACE(o.name);
  EXPECT_EQ(e.info.name, o.name);
  EXPECT_EQ(e.info.dtype, o.dtype);
  EXPECT_EQ(e.info.dims, o.dims);
  EXPECT_EQ(e.info.logical_dims, o.dims);
  EXPECT_EQ(e.info.encoding, QuantEncoding::kNone);
  ASSERT_EQ(e.bytes, o.data.size());
  ASSERT_LE(e.offset + e.bytes, e.file->size());
  EXPECT_TRUE(std::equal(o.data.begin(), o.data.end(), e.file->data() + e.offset));
  // The writer keeps every tensor aligned to its element size within the file.
  EXPECT_EQ(e.offset % static_cast<uint64_t>(dtype_size_in_bytes(o.dtype)), 0u);
}

TEST(Safetensors, DTypeCodes) {
  for (DType d : kAllDTypes) {
    const char* code = safetensors_dtype_code(d);
    ASSERT_NE(code, nullptr) << dtype_name(d);
    EXPECT_EQ(dtype_from_safetensors(code), d);
  }
  EXPECT_EQ(safetensors_dtype_code(DType::kFloat4E2M1Fn), nullptr);
  EXPECT_EQ(dtype_from_safetensors("C64"), std::nullopt);
  EXPECT_EQ(dtype_from_safetensors("f32"), std::nullopt);  // codes are case-sensitive
}

TEST(Safetensors, RoundTripEveryDType) {
  ScratchDir dir;
  std::vector<Owned> tensors;
  uint8_t seed = 1;
  for (DType d : kAllDTypes) tensors.push_back(make(std::string("t.") + dtype_name(d), d, {2, 3}, seed++));
  tensors.push_back(make("scalar", DType::kFloat32, {}, 90));
  tensors.push_back(make("empty", DType::kInt16, {0, 4}, 91));
  tensors.push_back(make("odd", DType::kUInt8, {7}, 92));
  tensors.push_back(make("rank5", DType::kFloat64, {1, 2, 1, 2, 1}, 93));
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "quote \" and \\ and \xe2\x82\xac"}};
  write_safetensors(dir.path("m.safetensors"), views(tensors), metadata);

  SafetensorsFile f = read_safetensors(dir.path("m.safetensors"));
  EXPECT_EQ(f.metadata, metadata);
  ASSERT_EQ(f.entries.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) expect_entry(f.entries[i], tensors[i]);
  // The data section starts 8-byte aligned: the header is padded with spaces.
  const std::vector<uint8_t> bytes = read_bytes(dir.path("m.safetensors"));
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ((8 + header_len) % 8, 0u);
  // And the tensors fill it with no holes, as the reference implementation insists.
  uint64_t total = 0;
  for (const auto& t : tensors) total += t.data.size();
  EXPECT_EQ(bytes.size(), 8 + header_len + total);
}

TEST(Safetensors, NoTensorsNoMetadata) {
  ScratchDir dir;
  write_safetensors(dir.path("e.safetensors"), std::vector<SafetensorsTensor>{});
  SafetensorsFile f = read_safetensors(dir.path("e.safetensors"));
  EXPECT_TRUE(f.entries.empty());
  EXPECT_TRUE(f.metadata.empty());
}

TEST(Safetensors, WritesTensorsOfAnyStrides) {
  ScratchDir dir;
  auto t = Tensor::create(Device::cpu(), DType::kInt32, {2, 3});
  auto* p = reinterpret_cast<int32_t*>(t->data());
  for (int i = 0; i < 6; ++i) p[i] = i;
  // The transpose [3, 2] as a strided view of the same storage.
  auto tt = Tensor::view_of(t->storage(), 0, DType::kInt32, {3, 2}, {1, 3}, true);
  write_safetensors(dir.path("s.safetensors"), {{"t", t}, {"tt", tt}});
  SafetensorsFile f = read_safetensors(dir.path("s.safetensors"));
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[1].info.dims, (std::vector<int64_t>{3, 2}));
  std::vector<int32_t> got(6);
  std::memcpy(got.data(), f.entries[1].file->data() + f.entries[1].offset, 24);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

TEST(Safetensors, WriterRefusesBadInput) {
  ScratchDir dir;
  const std::string path = dir.path("bad.safetensors");
  std::vector<uint8_t> four(4);
  EXPECT_MAXC_ERROR(write_safetensors(path, {{"x", DType::kFloat32, {2}, four}}), Code::kInvalidArgument,
                    "'x'", "needs 8 bytes", "got 4");
  EXPECT_MAXC_ERROR(write_safetensors(path, {{"x", DType::kFloat8E4M3Fnuz, {4}, four}}), Code::kInvalidArgument,
                    "'x'", "float8_e4m3fnuz");
  EXPECT_MAXC_ERROR(write_safetensors(path, {{"__metadata__", DType::kUInt8, {4}, four}}), Code::kInvalidArgument,
                    "reserved");
  EXPECT_MAXC_ERROR(write_safetensors(path, {{"a", DType::kUInt8, {4}, four}, {"a", DType::kUInt8, {4}, four}}),
                    Code::kInvalidArgument, "duplicate", "'a'");
  EXPECT_MAXC_ERROR(write_safetensors(path, {{"", DType::kUInt8, {4}, four}}), Code::kInvalidArgument, "name");
  EXPECT_MAXC_ERROR(write_safetensors(dir.path("no/such/dir.safetensors"), {{"a", DType::kUInt8, {4}, four}}),
                    Code::kNotFound, "no/such/dir.safetensors");
  // Nothing was left behind: no target, no temporary file.
  EXPECT_TRUE(std::filesystem::is_empty(dir.dir()));
}

TEST(Safetensors, UnknownDTypeIsInvalidArgument) {
  auto file = in_memory(safetensors_image(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", pattern(8, 0)),
                        "odd.safetensors");
  EXPECT_MAXC_ERROR(read_safetensors(file), Code::kInvalidArgument, "odd.safetensors", "tensor 'w'", "\"C64\"",
                    "offset 22");
}

TEST(Safetensors, HeaderChecks) {
  const std::vector<uint8_t> data = pattern(16, 0);
  auto read = [&](const std::string& header) {
    return read_safetensors(in_memory(safetensors_image(header, data), "h.safetensors"));
  };
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}})"), Code::kDataLoss,
                    "h.safetensors", "tensor 'w'", "hold 12 bytes", "needs 8");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})"), Code::kDataLoss,
                    "tensor 'w'", "[8, 0]");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})"), Code::kDataLoss,
                    "tensor 'w'", "run past the data section", "16 bytes");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})"), Code::kDataLoss,
                    "tensor 'w'", "non-negative");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0.0,8]}})"), Code::kDataLoss,
                    "tensor 'w'");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})"), Code::kDataLoss,
                    "tensor 'w'", "two integers");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})"), Code::kDataLoss,
                    "tensor 'w'", "non-negative");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":"2","data_offsets":[0,8]}})"), Code::kDataLoss,
                    "tensor 'w'", "\"shape\" is not an array");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":32,"shape":[2],"data_offsets":[0,8]}})"), Code::kDataLoss,
                    "tensor 'w'", "\"dtype\" is not a string");
  EXPECT_MAXC_ERROR(read(R"({"w":{"shape":[2],"data_offsets":[0,8]}})"), Code::kDataLoss, "tensor 'w'",
                    "no \"dtype\"");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})"), Code::kDataLoss, "no \"shape\"");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2]}})"), Code::kDataLoss, "no \"data_offsets\"");
  EXPECT_MAXC_ERROR(read(R"({"w":[1]})"), Code::kDataLoss, "tensor 'w'", "not a JSON object");
  EXPECT_MAXC_ERROR(read(R"([1,2])"), Code::kDataLoss, "not a JSON object", "offset 8");
  EXPECT_MAXC_ERROR(read(R"({"__metadata__":{"a":1}})"), Code::kDataLoss, "__metadata__", "'a'");
  EXPECT_MAXC_ERROR(read(R"({"__metadata__":[]})"), Code::kDataLoss, "__metadata__");
  // numel * 4 overflows uint64: refused without computing a wrapped size.
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})"),
                    Code::kDataLoss, "tensor 'w'", "overflows");
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})"),
                    Code::kDataLoss, "h.safetensors", "duplicate key \"w\"");
  EXPECT_MAXC_ERROR(read(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"),
                    Code::kDataLoss, "tensor 'b'", "overlap", "tensor 'a'", "at offset");
  // Even an empty tensor's extents must stay within what a tensor can describe.
  EXPECT_MAXC_ERROR(read(R"({"w":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})"),
                    Code::kDataLoss, "tensor 'w'", "overflows");
  // Holes, trailing bytes, empty tensors anywhere and a large dim times zero are all fine.
  const std::string lenient =
      R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"z":{"dtype":"F32","shape":[0,1099511627776],"data_offsets":[3,3],"later":{"x":[1,{"y":null}]}},"__metadata__":{}})";
  SafetensorsFile ok = read(lenient);
  ASSERT_EQ(ok.entries.size(), 2u);
  EXPECT_EQ(ok.entries[0].offset, 8 + lenient.size() + 2);
  EXPECT_EQ(ok.entries[1].bytes, 0u);
}

// An index and two shards, one of them holding a tensor the index does not list.
class SafetensorsIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = {make("embed", DType::kFloat32, {4, 2}, 1), make("norm", DType::kBFloat16, {4}, 2)};
    b_ = {make("head", DType::kFloat16, {2, 4}, 3), make("unlisted", DType::kUInt8, {3}, 4)};
    write_safetensors(dir_.path("model-00001-of-00002.safetensors"), views(a_), {{"format", "pt"}});
    write_safetensors(dir_.path("model-00002-of-00002.safetensors"), views(b_), {{"format", "np"}, {"x", "y"}});
  }
  std::string write_index(const std::string& text) {
    write_bytes(dir_.path("model.safetensors.index.json"), std::vector<uint8_t>(text.begin(), text.end()));
    return dir_.path("model.safetensors.index.json");
  }

  ScratchDir dir_;
  std::vector<Owned> a_, b_;
};

TEST_F(SafetensorsIndex, ReadsEveryShardInWeightMapOrder) {
  const std::string index = write_index(R"({
    "metadata": {"total_size": 56, "format": "pt", "nested": {"k": [1, "two"]}},
    "weight_map": {
      "head": "model-00002-of-00002.safetensors",
      "embed": "model-00001-of-00002.safetensors",
      "norm": "model-00001-of-00002.safetensors"
    }
  })");
  SafetensorsFile f = read_safetensors_index(index);
  ASSERT_EQ(f.entries.size(), 3u);
  expect_entry(f.entries[0], b_[0]);
  expect_entry(f.entries[1], a_[0]);
  expect_entry(f.entries[2], a_[1]);
  // Each shard opened once: entries of one shard share one mapping.
  EXPECT_EQ(f.entries[1].file, f.entries[2].file);
  EXPECT_NE(f.entries[0].file, f.entries[1].file);
  EXPECT_EQ(f.entries[0].file->path(), dir_.path("model-00002-of-00002.safetensors"));
  const std::map<std::string, std::string> metadata = {
      {"total_size", "56"}, {"format", "pt"}, {"nested", R"({"k":[1,"two"]})"}, {"x", "y"}};
  EXPECT_EQ(f.metadata, metadata);
}

TEST_F(SafetensorsIndex, Errors) {
  EXPECT_MAXC_ERROR(read_safetensors_index(dir_.path("none.safetensors.index.json")), Code::kNotFound,
                    "none.safetensors.index.json");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"w": "missing.safetensors"}})")),
                    Code::kNotFound, "missing.safetensors");
  EXPECT_MAXC_ERROR(
      read_safetensors_index(write_index(R"({"weight_map": {"ghost": "model-00001-of-00002.safetensors"}})")),
      Code::kDataLoss, "model.safetensors.index.json", "tensor 'ghost'", "model-00001-of-00002.safetensors");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"w": "../model.safetensors"}})")),
                    Code::kInvalidArgument, "outside");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"w": "/etc/passwd"}})")),
                    Code::kInvalidArgument, "outside");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"w": 3}})")), Code::kDataLoss,
                    "shard file name");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"metadata": {}})")), Code::kDataLoss, "weight_map");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"metadata": 1, "weight_map": {}})")), Code::kDataLoss,
                    "\"metadata\"");
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {)")), Code::kDataLoss,
                    "model.safetensors.index.json", "invalid JSON");
}

// A shard is checked where it really is, as ONNX external data is (base/file_inside.h): a
// symlink out of the index's directory is refused, one that stays inside is followed.
TEST_F(SafetensorsIndex, SymlinkedShardsMustStayInTheIndexDirectory) {
  ScratchDir outside;
  write_safetensors(outside.path("elsewhere.safetensors"), views(a_), {});
  std::filesystem::create_symlink(outside.path("elsewhere.safetensors"), dir_.path("escape.safetensors"));
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"embed": "escape.safetensors"}})")),
                    Code::kInvalidArgument, "shard (at offset", "escape.safetensors", "resolves outside",
                    "elsewhere.safetensors");
  std::filesystem::create_directory_symlink(outside.dir(), dir_.path("linked_dir"));
  EXPECT_MAXC_ERROR(
      read_safetensors_index(write_index(R"({"weight_map": {"embed": "linked_dir/elsewhere.safetensors"}})")),
      Code::kInvalidArgument, "resolves outside");
  std::filesystem::create_directory(dir_.path("shards"));
  std::filesystem::create_symlink("../model-00001-of-00002.safetensors", dir_.path("shards/first.safetensors"));
  SafetensorsFile f = read_safetensors_index(write_index(R"({"weight_map": {"embed": "shards/first.safetensors"}})"));
  ASSERT_EQ(f.entries.size(), 1u);
  expect_entry(f.entries[0], a_[0]);
  EXPECT_EQ(f.entries[0].file->path(), dir_.path("model-00001-of-00002.safetensors"));
  ASSERT_EQ(::mkfifo(dir_.path("fifo.safetensors").c_str(), 0600), 0);
  EXPECT_MAXC_ERROR(read_safetensors_index(write_index(R"({"weight_map": {"embed": "fifo.safetensors"}})")),
                    Code::kInvalidArgument, "not a regular file");
}

TEST(Safetensors, LooksLike) {
  EXPECT_TRUE(looks_like_safetensors(safetensors_image("{}", {})));
  EXPECT_FALSE(looks_like_safetensors(safetensors_image("[]", {})));
  EXPECT_FALSE(looks_like_safetensors(Bytes().u64(100).raw("{}").bytes()));
  EXPECT_FALSE(looks_like_safetensors(std::vector<uint8_t>{1, 2, 3}));
}

}  // namespace
}  // namespace maxc::testing
