#include "weights/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <utility>

#include "base/error.h"
#include "base/file_inside.h"
#include "driver/tensor.h"
#include "weights/byte_reader.h"
#include "weights/json.h"

namespace maxc {
namespace {

struct DTypeCode {
  const char* code;
  DType dtype;
};

constexpr DTypeCode kDTypeCodes[] = {
    {"F64", DType::kFloat64},         {"F32", DType::kFloat32},    {"F16", DType::kFloat16},
    {"BF16", DType::kBFloat16},       {"I64", DType::kInt64},      {"I32", DType::kInt32},
    {"I16", DType::kInt16},           {"I8", DType::kInt8},        {"U64", DType::kUInt64},
    {"U32", DType::kUInt32},          {"U16", DType::kUInt16},     {"U8", DType::kUInt8},
    {"BOOL", DType::kBool},           {"F8_E4M3", DType::kFloat8E4M3Fn},
    {"F8_E5M2", DType::kFloat8E5M2},  {"F8_E8M0", DType::kFloat8E8M0Fnu},
};

// Parsing state of one file, so every message can name the file. The header is pulled token
// by token: arrays are refused at their first surplus element, so memory follows what is kept.
class HeaderParser {
 public:
  explicit HeaderParser(std::shared_ptr<const MappedFile> file) : file_(std::move(file)) {}

  SafetensorsFile parse() {
    JsonReader r(read_header_text(), file_->path(), 8);
    if (r.peek() != JsonReader::Kind::kObject) corrupt("", 8, "the header is not a JSON object");
    r.begin_object();
    SafetensorsFile out;
    std::string name;
    while (r.next_key(name)) {
      if (name == "__metadata__") {
        out.metadata = parse_metadata(r);
      } else {
        out.entries.push_back(parse_entry(r, name));
      }
    }
    r.end();
    check_overlaps(out.entries);
    return out;
  }

 private:
  template <typename... Parts>
  [[noreturn]] void corrupt(std::string_view tensor, uint64_t offset, const Parts&... parts) const {
    if (tensor.empty()) fail(Code::kDataLoss, file_->path(), ": ", parts..., " (at offset ", offset, ")");
    fail(Code::kDataLoss, file_->path(), ": tensor '", tensor, "': ", parts..., " (at offset ", offset, ")");
  }

  std::string_view read_header_text() {
    ByteReader reader(*file_);
    reader.set_context("safetensors header length");
    const uint64_t n = reader.read<uint64_t>("the 8-byte header length");
    if (n > reader.remaining())
      corrupt("", 0, "header length ", n, " runs past the end of the file (", file_->size(), " bytes)");
    if (n > kSafetensorsMaxHeaderBytes)
      corrupt("", 0, "header length ", n, " exceeds the limit of ", kSafetensorsMaxHeaderBytes, " bytes");
    data_start_ = 8 + n;
    data_size_ = file_->size() - data_start_;
    return reader.read_bytes(n, "the JSON header");
  }

  std::map<std::string, std::string> parse_metadata(JsonReader& r) const {
    if (r.peek() != JsonReader::Kind::kObject) corrupt("", r.offset(), "__metadata__ is not a JSON object");
    r.begin_object();
    std::map<std::string, std::string> out;
    std::string key;
    while (r.next_key(key)) {
      if (r.peek() != JsonReader::Kind::kString)
        corrupt("", r.offset(), "__metadata__ value of '", key, "' is not a string");
      out.emplace(key, r.read_string());
    }
    return out;
  }

  DType parse_dtype(JsonReader& r, const std::string& name) const {
    if (r.peek() != JsonReader::Kind::kString) corrupt(name, r.offset(), "\"dtype\" is not a string");
    const uint64_t at = r.offset();
    const std::string code = r.read_string();
    std::optional<DType> d = dtype_from_safetensors(code);
    if (!d)
      fail(Code::kInvalidArgument, file_->path(), ": tensor '", name, "': unknown safetensors dtype ",
           json_quote(code), " (at offset ", at, ")");
    return *d;
  }

  // A non-negative integer array element.
  uint64_t parse_count(JsonReader& r, const std::string& name, const char* what) const {
    const JsonReader::Kind kind = r.peek();
    const uint64_t at = r.offset();
    if (kind != JsonReader::Kind::kNumber) corrupt(name, at, what, " is not a non-negative integer");
    const JsonReader::Number n = r.read_number();
    if (!n.is_int || n.i < 0) corrupt(name, at, what, " is not a non-negative integer");
    return static_cast<uint64_t>(n.i);
  }

  std::vector<int64_t> parse_shape(JsonReader& r, const std::string& name) const {
    if (r.peek() != JsonReader::Kind::kArray) corrupt(name, r.offset(), "\"shape\" is not an array");
    r.begin_array();
    std::vector<int64_t> dims;
    while (r.next_item()) {
      if (dims.size() == static_cast<size_t>(kMaxRank))
        corrupt(name, r.offset(), "the shape has more than the maximum of ", kMaxRank, " dims");
      dims.push_back(static_cast<int64_t>(parse_count(r, name, "a dim")));
    }
    return dims;
  }

  std::pair<uint64_t, uint64_t> parse_offsets(JsonReader& r, const std::string& name) const {
    const JsonReader::Kind kind = r.peek();
    const uint64_t at = r.offset();
    if (kind != JsonReader::Kind::kArray) corrupt(name, at, "\"data_offsets\" is not an array of two integers");
    r.begin_array();
    uint64_t o[2] = {0, 0};
    size_t n = 0;
    while (r.next_item()) {
      if (n == 2) corrupt(name, at, "\"data_offsets\" is not an array of two integers");
      o[n++] = parse_count(r, name, "a data offset");
    }
    if (n != 2) corrupt(name, at, "\"data_offsets\" is not an array of two integers");
    const auto [begin, end] = std::pair(o[0], o[1]);
    if (begin > end) corrupt(name, at, "data_offsets [", begin, ", ", end, "] end before they begin");
    if (end > data_size_)
      corrupt(name, at, "data_offsets [", begin, ", ", end, "] run past the data section (", data_size_,
              " bytes from offset ", data_start_, ")");
    return {begin, end};
  }

  WeightEntry parse_entry(JsonReader& r, const std::string& name) const {
    const JsonReader::Kind kind = r.peek();
    const uint64_t at = r.offset();
    if (kind != JsonReader::Kind::kObject) corrupt(name, at, "the header entry is not a JSON object");
    r.begin_object();
    std::optional<DType> dtype;
    std::optional<std::vector<int64_t>> dims;
    std::optional<std::pair<uint64_t, uint64_t>> offsets;
    std::string key;
    while (r.next_key(key)) {
      if (key == "dtype") dtype = parse_dtype(r, name);
      else if (key == "shape") dims = parse_shape(r, name);
      else if (key == "data_offsets") offsets = parse_offsets(r, name);
      else r.skip_value();  // room for fields a later version may add
    }
    if (!dtype) corrupt(name, at, "no \"dtype\"");
    if (!dims) corrupt(name, at, "no \"shape\"");
    if (!offsets) corrupt(name, at, "no \"data_offsets\"");
    const auto [begin, end] = *offsets;
    const std::optional<uint64_t> expected =
        checked_storage_bytes(*dims, static_cast<uint64_t>(dtype_size_in_bytes(*dtype)));
    if (!expected) corrupt(name, at, "shape ", dims_to_string(*dims), " overflows");
    if (*expected != end - begin)
      corrupt(name, data_start_ + begin, "data_offsets [", begin, ", ", end, "] hold ", end - begin,
              " bytes, but ", dtype_name(*dtype), " ", dims_to_string(*dims), " needs ", *expected);
    WeightEntry e;
    e.info.name = name;
    e.info.dtype = *dtype;
    e.info.logical_dims = *dims;
    e.info.dims = std::move(*dims);
    e.file = file_;
    e.offset = data_start_ + begin;
    e.bytes = end - begin;
    return e;
  }

  // Empty tensors occupy nothing, so they may sit anywhere, even inside another's bytes.
  void check_overlaps(const std::vector<WeightEntry>& entries) const {
    std::vector<size_t> order;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].bytes > 0) order.push_back(i);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return entries[a].offset < entries[b].offset; });
    for (size_t i = 1; i < order.size(); ++i) {
      const WeightEntry& prev = entries[order[i - 1]];
      const WeightEntry& cur = entries[order[i]];
      if (cur.offset < prev.offset + prev.bytes)
        corrupt(cur.info.name, cur.offset, "its bytes overlap those of tensor '", prev.info.name, "' [",
                prev.offset, ", ", prev.offset + prev.bytes, ")");
    }
  }

  std::shared_ptr<const MappedFile> file_;
  uint64_t data_start_ = 0;
  uint64_t data_size_ = 0;
};

// The shard an index names, opened beside the index and mapped; a name that leads outside the
// index's directory (a '..', an absolute path, a symlink) is refused as ONNX external data is.
std::shared_ptr<const MappedFile> open_shard(const std::string& index_path, const JsonValue& shard) {
  if (!shard.is_string() || shard.as_string().empty())
    fail(Code::kDataLoss, index_path, ": a weight_map value is not a shard file name (at offset ",
         shard.offset(), ")");
  const std::string dir = std::filesystem::path(index_path).parent_path().string();
  const FileInside file = open_file_inside(dir, shard.as_string(), str_cat(index_path, ": shard (at offset ", shard.offset(), ")"),
                                           "the index's directory");
  return MappedFile::map(file.fd.get(), file.path);
}

std::map<std::string, std::string> index_metadata(const std::string& index_path, const JsonValue* metadata) {
  std::map<std::string, std::string> out;
  if (!metadata || metadata->is_null()) return out;
  if (!metadata->is_object())
    fail(Code::kDataLoss, index_path, ": \"metadata\" is not a JSON object (at offset ", metadata->offset(), ")");
  for (const auto& [key, v] : metadata->as_object()) out.emplace(key, v.is_string() ? v.as_string() : to_json(v));
  return out;
}

struct Shard {
  SafetensorsFile file;
  std::unordered_map<std::string, size_t> by_name;
};

}  // namespace

std::optional<DType> dtype_from_safetensors(std::string_view code) {
  for (const auto& c : kDTypeCodes)
    if (code == c.code) return c.dtype;
  return std::nullopt;
}

const char* safetensors_dtype_code(DType dtype) {
  for (const auto& c : kDTypeCodes)
    if (c.dtype == dtype) return c.code;
  return nullptr;
}

bool looks_like_safetensors(std::span<const uint8_t> bytes) {
  if (bytes.size() < 10) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | bytes[static_cast<size_t>(i)];
  return n >= 2 && n <= bytes.size() - 8 && bytes[8] == '{';
}

SafetensorsFile read_safetensors(std::shared_ptr<const MappedFile> file) {
  return HeaderParser(std::move(file)).parse();
}

SafetensorsFile read_safetensors(const std::string& path) { return read_safetensors(MappedFile::open(path)); }

SafetensorsFile read_safetensors_index(const std::string& index_path) {
  auto index_file = MappedFile::open(index_path);
  const std::span<const uint8_t> bytes = index_file->bytes();
  const JsonValue index =
      parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), index_path);
  const JsonValue* weight_map = index.find("weight_map");
  if (!weight_map || !weight_map->is_object())
    fail(Code::kDataLoss, index_path, ": no \"weight_map\" object in the index (at offset ", index.offset(), ")");

  SafetensorsFile out;
  out.metadata = index_metadata(index_path, index.find("metadata"));
  std::map<std::string, Shard> shards;  // by the name the index gives: each file is opened once
  for (const auto& [name, shard_name] : weight_map->as_object()) {
    const std::string path = shard_name.is_string() ? shard_name.as_string() : std::string();
    auto it = shards.find(path);
    if (it == shards.end()) {
      Shard shard{read_safetensors(open_shard(index_path, shard_name)), {}};
      for (size_t i = 0; i < shard.file.entries.size(); ++i) shard.by_name.emplace(shard.file.entries[i].info.name, i);
      for (const auto& kv : shard.file.metadata) out.metadata.insert(kv);
      it = shards.emplace(path, std::move(shard)).first;
    }
    auto found = it->second.by_name.find(name);
    if (found == it->second.by_name.end())
      fail(Code::kDataLoss, index_path, ": tensor '", name, "' is mapped to shard '", path,
           "', which does not contain it (at offset ", shard_name.offset(), ")");
    out.entries.push_back(it->second.file.entries[found->second]);
  }
  return out;
}

}  // namespace maxc
