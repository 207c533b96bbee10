#include "weights/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/error.h"
#include "driver/tensor.h"
#include "weights/file_writer.h"
#include "weights/ggml_type.h"
#include "weights/gguf.h"
#include "weights/weight_entry.h"

namespace maxc {
namespace {

// The header is built in memory (it is small next to the data) and written in one go.
class HeaderBuilder {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_arithmetic_v<T>);
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if constexpr (std::endian::native == std::endian::big)
      for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    bytes_.append(reinterpret_cast<const char*>(b), sizeof(T));
  }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    bytes_.append(s);
  }

  void put_value(const GgufValue& v) {
    std::visit([&](const auto& x) { put_element(x, 0); }, v.value);
  }

  const std::string& bytes() const { return bytes_; }

 private:
  template <typename T>
  void put_element(const T& x, int depth) {
    if constexpr (std::is_same_v<T, bool>) {
      put<uint8_t>(x ? 1 : 0);
    } else if constexpr (std::is_same_v<T, std::string>) {
      put_string(x);
    } else if constexpr (std::is_same_v<T, GgufArray>) {
      put_array(x, depth + 1);
    } else {
      put<T>(x);
    }
  }

  void put_array(const GgufArray& a, int depth) {
    if (depth > kGgufMaxArrayDepth)
      fail(Code::kInvalidArgument, "GGUF arrays may nest at most ", kGgufMaxArrayDepth, " levels");
    put<uint32_t>(static_cast<uint32_t>(a.element_type()));
    put<uint64_t>(a.size());
    std::visit(
        [&](const auto& elements) {
          using T = typename std::decay_t<decltype(elements)>::value_type;
          for (const auto& e : elements) put_element<T>(e, depth);
        },
        a.elements);
  }

  std::string bytes_;
};

uint32_t resolve_alignment(const std::vector<GgufKv>& metadata, const GgufWriteOptions& options) {
  uint32_t alignment = options.alignment;
  for (const auto& kv : metadata) {
    if (kv.key != "general.alignment") continue;
    const auto* a = std::get_if<uint32_t>(&kv.value.value);
    if (!a) fail(Code::kInvalidArgument, "general.alignment must be a uint32, not a ", gguf_type_name(kv.value.type()));
    if (alignment != 0 && alignment != *a)
      fail(Code::kInvalidArgument, "alignment ", alignment, " disagrees with general.alignment ", *a);
    alignment = *a;
  }
  if (alignment == 0) alignment = kGgufDefaultAlignment;
  if ((alignment & (alignment - 1)) != 0) fail(Code::kInvalidArgument, "alignment ", alignment, " is not a power of two");
  return alignment;
}

void check_keys(const std::vector<GgufKv>& metadata) {
  std::set<std::string_view> keys;
  for (const auto& kv : metadata) {
    if (kv.key.size() > 65535) fail(Code::kInvalidArgument, "GGUF key of ", kv.key.size(), " bytes is too long");
    if (!keys.insert(kv.key).second) fail(Code::kInvalidArgument, "duplicate GGUF metadata key '", kv.key, "'");
  }
}

struct Layout {
  uint32_t ggml_type;
  uint64_t offset;  // in the data section
};

// Checks one tensor and returns its GGML type.
uint32_t check_tensor(const GgufTensor& t) {
  if (t.logical_dims.size() > kGgufMaxDims)
    fail(Code::kInvalidArgument, "tensor '", t.name, "': GGUF holds at most ", kGgufMaxDims, " dims, got ",
         dims_to_string(t.logical_dims));
  const bool quantized = t.encoding != QuantEncoding::kNone;
  const DType dtype = quantized ? DType::kUInt8 : t.dtype;
  std::optional<uint32_t> type = ggml_type_for(dtype, t.encoding);
  if (!type)
    fail(Code::kInvalidArgument, "tensor '", t.name, "': GGUF cannot hold ",
         quantized ? quant_encoding_name(t.encoding) : dtype_name(t.dtype));
  const std::vector<int64_t> dims = quantized ? quantized_storage_dims(t.encoding, t.logical_dims) : t.logical_dims;
  const uint64_t bytes = dtype_bytes_for(dtype, static_cast<uint64_t>(checked_num_elements(dtype, dims)));
  if (t.data.size() != bytes)
    fail(Code::kInvalidArgument, "tensor '", t.name, "': ", dims_to_string(t.logical_dims), " needs ", bytes,
         " bytes of data, got ", t.data.size());
  return *type;
}

std::vector<Layout> lay_out(const std::vector<GgufTensor>& tensors, uint32_t alignment) {
  std::set<std::string_view> names;
  std::vector<Layout> layout;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) fail(Code::kInvalidArgument, "duplicate tensor name '", t.name, "'");
    layout.push_back({check_tensor(t), offset});
    offset += (t.data.size() + alignment - 1) / alignment * alignment;
  }
  return layout;
}

}  // namespace

void write_gguf(const std::string& path, const std::vector<GgufKv>& metadata, const std::vector<GgufTensor>& tensors,
                const GgufWriteOptions& options) {
  if (options.version != 2 && options.version != 3)
    fail(Code::kInvalidArgument, "GGUF version ", options.version, " cannot be written, only 2 and 3");
  check_keys(metadata);
  const uint32_t alignment = resolve_alignment(metadata, options);
  const std::vector<Layout> layout = lay_out(tensors, alignment);
  const bool add_alignment = alignment != kGgufDefaultAlignment &&
                             std::none_of(metadata.begin(), metadata.end(),
                                          [](const GgufKv& kv) { return kv.key == "general.alignment"; });

  HeaderBuilder h;
  h.put<uint32_t>(0x46554747);  // "GGUF" read as a little-endian u32
  h.put<uint32_t>(options.version);
  h.put<uint64_t>(tensors.size());
  h.put<uint64_t>(metadata.size() + (add_alignment ? 1 : 0));
  for (const auto& kv : metadata) {
    h.put_string(kv.key);
    h.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    h.put_value(kv.value);
  }
  if (add_alignment) {
    h.put_string("general.alignment");
    h.put<uint32_t>(static_cast<uint32_t>(GgufType::kUInt32));
    h.put<uint32_t>(alignment);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GgufTensor& t = tensors[i];
    h.put_string(t.name);
    h.put<uint32_t>(static_cast<uint32_t>(t.logical_dims.size()));
    for (size_t d = t.logical_dims.size(); d-- > 0;) h.put<uint64_t>(static_cast<uint64_t>(t.logical_dims[d]));
    h.put<uint32_t>(layout[i].ggml_type);
    h.put<uint64_t>(layout[i].offset);
  }

  FileWriter out(path);
  out.write(h.bytes());
  out.pad_to(alignment);
  for (const auto& t : tensors) {
    out.write(t.data);
    out.pad_to(alignment);
  }
  out.commit();
}

}  // namespace maxc
