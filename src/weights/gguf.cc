#include "weights/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <unordered_set>

#include "base/error.h"
#include "driver/tensor.h"
#include "weights/byte_reader.h"
#include "weights/ggml_type.h"

namespace maxc {
namespace {

// The fewest bytes one value of each type can occupy in a file (a string is at least its
// length, an array its element type and length): the bound for any count read from a file.
constexpr uint64_t kMinValueBytes[kGgufTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8};
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;               // key length, type, a uint8
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;   // name length, n_dims, type, offset
constexpr uint64_t kMaxKeyBytes = 65535;                  // the format's limit

struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // GGUF order: ne[0] innermost
  uint32_t type = 0;
  uint64_t offset = 0;      // relative to the data section
  uint64_t info_offset = 0;
};

class GgufParser {
 public:
  explicit GgufParser(std::shared_ptr<const MappedFile> file) : file_(std::move(file)), r_(*file_) {}

  GgufFile parse() {
    read_preamble();
    read_metadata();
    read_alignment();
    read_tensor_infos();
    place_tensors();
    return std::move(out_);
  }

 private:
  [[noreturn]] void corrupt(uint64_t offset, std::string_view what) const { r_.fail_at(offset, what); }

  void read_preamble() {
    r_.set_context("GGUF header");
    if (r_.read_bytes(4, "the magic") != "GGUF") corrupt(0, "bad magic, not a GGUF file");
    out_.version = r_.read<uint32_t>("the version");
    if (out_.version != 0 && (out_.version & 0xFFFF) == 0)
      fail(Code::kUnimplemented, file_->path(), ": big-endian GGUF files are not supported (at offset 4)");
    if (out_.version == 0) corrupt(4, "version 0");
    if (out_.version != 2 && out_.version != 3)
      fail(Code::kUnimplemented, file_->path(), ": GGUF version ", out_.version,
           " is not supported, only versions 2 and 3 (at offset 4)");
    tensor_count_ = r_.read<uint64_t>("the tensor count");
    kv_count_ = r_.read<uint64_t>("the metadata count");
    check_count(kv_count_, kMinKvBytes, 16, "metadata pairs");
    check_count(tensor_count_, kMinTensorInfoBytes, 8, "tensor infos");
  }

  // Refuses a count that the bytes left could not hold, before anything is reserved for it.
  void check_count(uint64_t count, uint64_t min_bytes, uint64_t at, const char* what) const {
    if (count > r_.remaining() / min_bytes)
      corrupt(at, str_cat(count, " ", what, " cannot fit in the ", r_.remaining(), " bytes left"));
  }

  std::string_view read_string(const char* what, uint64_t max_bytes = UINT64_MAX) {
    const uint64_t at = r_.offset();
    const uint64_t n = r_.read<uint64_t>(what);
    if (n > max_bytes) corrupt(at, str_cat(what, " is ", n, " bytes long, more than the limit of ", max_bytes));
    return r_.read_bytes(n, what);
  }

  template <typename T>
  T read_one(int depth) {
    if constexpr (std::is_same_v<T, bool>) {
      const uint64_t at = r_.offset();
      const uint8_t b = r_.read<uint8_t>("a bool value");
      if (b > 1) corrupt(at, str_cat("bool value ", static_cast<int>(b), " is neither 0 nor 1"));
      return b != 0;
    } else if constexpr (std::is_same_v<T, std::string>) {
      return std::string(read_string("a string value"));
    } else if constexpr (std::is_same_v<T, GgufArray>) {
      return read_array(depth + 1);
    } else {
      return r_.read<T>("a numeric value");
    }
  }

  GgufArray read_array(int depth) {
    const uint64_t at = r_.offset();
    if (depth > kGgufMaxArrayDepth) corrupt(at, str_cat("arrays nested deeper than ", kGgufMaxArrayDepth, " levels"));
    const uint32_t type = r_.read<uint32_t>("the array element type");
    if (type >= kGgufTypeCount) corrupt(at, str_cat("unknown array element type ", type));
    const uint64_t count = r_.read<uint64_t>("the array length");
    if (count > r_.remaining() / kMinValueBytes[type])
      corrupt(at + 4, str_cat("an array of ", count, " ", gguf_type_name(static_cast<GgufType>(type)),
                              " values cannot fit in the ", r_.remaining(), " bytes left"));
    GgufArray array = GgufArray::of(static_cast<GgufType>(type));
    std::visit(
        [&](auto& elements) {
          using T = typename std::decay_t<decltype(elements)>::value_type;
          elements.reserve(static_cast<size_t>(count));
          for (uint64_t i = 0; i < count; ++i) elements.push_back(read_one<T>(depth));
        },
        array.elements);
    return array;
  }

  GgufValue read_value(uint32_t type) {
    switch (static_cast<GgufType>(type)) {
      case GgufType::kUInt8: return {read_one<uint8_t>(0)};
      case GgufType::kInt8: return {read_one<int8_t>(0)};
      case GgufType::kUInt16: return {read_one<uint16_t>(0)};
      case GgufType::kInt16: return {read_one<int16_t>(0)};
      case GgufType::kUInt32: return {read_one<uint32_t>(0)};
      case GgufType::kInt32: return {read_one<int32_t>(0)};
      case GgufType::kFloat32: return {read_one<float>(0)};
      case GgufType::kBool: return {read_one<bool>(0)};
      case GgufType::kString: return {read_one<std::string>(0)};
      case GgufType::kArray: return {read_array(1)};
      case GgufType::kUInt64: return {read_one<uint64_t>(0)};
      case GgufType::kInt64: return {read_one<int64_t>(0)};
      case GgufType::kFloat64: return {read_one<double>(0)};
    }
    corrupt(r_.offset() - 4, str_cat("unknown value type ", type));
  }

  void read_metadata() {
    out_.metadata.reserve(static_cast<size_t>(kv_count_));
    std::unordered_set<std::string> keys;
    for (uint64_t i = 0; i < kv_count_; ++i) {
      const uint64_t at = r_.offset();
      r_.set_context(str_cat("metadata pair #", i));
      std::string key(read_string("the key", kMaxKeyBytes));
      r_.set_context(str_cat("metadata key '", key, "'"));
      if (!keys.insert(key).second) corrupt(at, "duplicate key");
      const uint32_t type = r_.read<uint32_t>("the value type");
      if (type >= kGgufTypeCount) corrupt(r_.offset() - 4, str_cat("unknown value type ", type));
      kv_offsets_.push_back(r_.offset());
      GgufValue value = read_value(type);
      out_.metadata.push_back({std::move(key), std::move(value)});
    }
  }

  void read_alignment() {
    for (size_t i = 0; i < out_.metadata.size(); ++i) {
      const GgufKv& kv = out_.metadata[i];
      if (kv.key != "general.alignment") continue;
      r_.set_context("metadata key 'general.alignment'");
      const auto* a = std::get_if<uint32_t>(&kv.value.value);
      if (!a) corrupt(kv_offsets_[i], str_cat("the alignment is a ", gguf_type_name(kv.value.type()), ", not a uint32"));
      if (*a == 0 || (*a & (*a - 1)) != 0) corrupt(kv_offsets_[i], str_cat("alignment ", *a, " is not a power of two"));
      out_.alignment = *a;
    }
  }

  TensorInfo read_tensor_info(uint64_t index, std::unordered_set<std::string>& names) {
    TensorInfo t;
    t.info_offset = r_.offset();
    r_.set_context(str_cat("tensor info #", index));
    t.name = std::string(read_string("the tensor name"));
    r_.set_context(str_cat("tensor '", t.name, "'"));
    if (!names.insert(t.name).second) corrupt(t.info_offset, "duplicate tensor name");
    const uint64_t dims_at = r_.offset();
    const uint32_t n_dims = r_.read<uint32_t>("n_dims");
    if (n_dims > kGgufMaxDims) corrupt(dims_at, str_cat(n_dims, " dims, more than GGML's ", kGgufMaxDims));
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t at = r_.offset();
      const uint64_t ne = r_.read<uint64_t>("a dim");
      if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) corrupt(at, str_cat("dim ", ne, " is too large"));
      t.ne.push_back(static_cast<int64_t>(ne));
    }
    t.type = r_.read<uint32_t>("the GGML type");
    const uint64_t offset_at = r_.offset();
    t.offset = r_.read<uint64_t>("the data offset");
    if (t.offset % out_.alignment != 0)
      corrupt(offset_at, str_cat("data offset ", t.offset, " is not a multiple of the alignment ", out_.alignment));
    return t;
  }

  void read_tensor_infos() {
    check_count(tensor_count_, kMinTensorInfoBytes, 8, "tensor infos");
    infos_.reserve(static_cast<size_t>(tensor_count_));
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < tensor_count_; ++i) infos_.push_back(read_tensor_info(i, names));
  }

  const GgmlTypeInfo& supported_type(const TensorInfo& t) const {
    const GgmlTypeInfo* info = ggml_type_info(t.type);
    if (!info)
      fail(Code::kInvalidArgument, file_->path(), ": tensor '", t.name, "': unknown GGML type ", t.type,
           " (at offset ", t.info_offset, ")");
    if (!info->supported)
      fail(Code::kUnimplemented, file_->path(), ": tensor '", t.name, "': GGML type ", info->name, " (", t.type,
           ") is not supported (at offset ", t.info_offset, ")");
    return *info;
  }

  // The entry of one tensor, its bytes not yet placed in the file.
  WeightEntry describe(const TensorInfo& t, const GgmlTypeInfo& type) const {
    WeightEntry e;
    e.info.name = t.name;
    e.info.dtype = type.dtype;
    e.info.encoding = type.encoding;
    e.info.logical_dims.assign(t.ne.rbegin(), t.ne.rend());
    e.info.dims = e.info.logical_dims;
    std::optional<uint64_t> bytes;
    if (type.encoding == QuantEncoding::kNone) {
      bytes = checked_storage_bytes(e.info.dims, static_cast<uint64_t>(dtype_size_in_bytes(type.dtype)));
    } else {
      const QuantEncodingInfo& q = *quant_encoding_info(type.encoding);
      if (t.ne.empty() || t.ne[0] == 0 || t.ne[0] % q.elements_per_block != 0)
        r_.fail_at(t.info_offset, str_cat("a ", type.name, " row needs a positive multiple of ", q.elements_per_block,
                                          " elements, the innermost dim is ", t.ne.empty() ? 0 : t.ne[0]));
      uint64_t row_bytes = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>(t.ne[0] / q.elements_per_block),
                                 static_cast<uint64_t>(q.block_bytes), &row_bytes) ||
          row_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        r_.fail_at(t.info_offset, "the row size overflows");
      e.info.dims.back() = static_cast<int64_t>(row_bytes);
      bytes = checked_storage_bytes(e.info.dims, 1);
    }
    if (!bytes) r_.fail_at(t.info_offset, str_cat("shape ", dims_to_string(e.info.logical_dims), " overflows"));
    e.bytes = *bytes;
    e.file = file_;
    return e;
  }

  void place_tensors() {
    out_.data_offset = (r_.offset() + out_.alignment - 1) / out_.alignment * out_.alignment;
    out_.entries.reserve(infos_.size());
    out_.ggml_types.reserve(infos_.size());
    for (const TensorInfo& t : infos_) {
      const GgmlTypeInfo& type = supported_type(t);
      r_.set_context(str_cat("tensor '", t.name, "'"));
      WeightEntry e = describe(t, type);
      // The data section as laid out, padding after each tensor included, must be there.
      uint64_t end = 0, padded = 0, limit = 0;
      if (__builtin_add_overflow(t.offset, e.bytes, &end) ||
          __builtin_add_overflow(end, out_.alignment - 1, &padded) ||
          __builtin_add_overflow(out_.data_offset, padded / out_.alignment * out_.alignment, &limit) ||
          limit > file_->size())
        r_.fail_at(out_.data_offset + std::min(t.offset, UINT64_MAX - out_.data_offset),
                   str_cat("its ", e.bytes, " bytes at data offset ", t.offset, " (and padding to ", out_.alignment,
                           ") run past the end of the file (", file_->size(), " bytes, data from offset ",
                           out_.data_offset, ")"));
      e.offset = out_.data_offset + t.offset;
      out_.entries.push_back(std::move(e));
      out_.ggml_types.push_back(t.type);
    }
    check_overlaps();
  }

  // Empty tensors occupy nothing, so they may sit anywhere, even inside another's bytes.
  void check_overlaps() {
    const std::vector<WeightEntry>& entries = out_.entries;
    std::vector<size_t> order;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].bytes > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return entries[a].offset < entries[b].offset; });
    for (size_t i = 1; i < order.size(); ++i) {
      const WeightEntry& prev = entries[order[i - 1]];
      const WeightEntry& cur = entries[order[i]];
      if (cur.offset < prev.offset + prev.bytes) {
        r_.set_context(str_cat("tensor '", cur.info.name, "'"));
        r_.fail_at(cur.offset, str_cat("its bytes overlap those of tensor '", prev.info.name, "' [", prev.offset,
                                       ", ", prev.offset + prev.bytes, ")"));
      }
    }
  }

  std::shared_ptr<const MappedFile> file_;
  ByteReader r_;
  uint64_t tensor_count_ = 0;
  uint64_t kv_count_ = 0;
  std::vector<uint64_t> kv_offsets_;
  std::vector<TensorInfo> infos_;
  GgufFile out_;
};

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

GgufFile read_gguf(std::shared_ptr<const MappedFile> file) { return GgufParser(std::move(file)).parse(); }

GgufFile read_gguf(const std::string& path) { return read_gguf(MappedFile::open(path)); }

bool looks_like_gguf(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0;
}

}  // namespace maxc
