#include "weights/safetensors_writer.h"

#include <algorithm>
#include <set>

#include "base/error.h"
#include "weights/file_writer.h"
#include "weights/json.h"
#include "weights/safetensors.h"

namespace maxc {
namespace {

uint64_t checked_byte_size(const SafetensorsTensor& t) {
  const char* code = safetensors_dtype_code(t.dtype);
  if (!code)
    fail(Code::kInvalidArgument, "tensor '", t.name, "': safetensors has no dtype for ", dtype_label(t.dtype));
  const int64_t n = checked_num_elements(t.dtype, t.dims);
  const uint64_t bytes = dtype_bytes_for(t.dtype, static_cast<uint64_t>(n));
  if (t.data.size() != bytes)
    fail(Code::kInvalidArgument, "tensor '", t.name, "': ", dtype_name(t.dtype), " ", dims_to_string(t.dims),
         " needs ", bytes, " bytes of data, got ", t.data.size());
  return bytes;
}

void check_names(const std::vector<SafetensorsTensor>& tensors) {
  std::set<std::string_view> seen;
  for (const auto& t : tensors) {
    if (t.name.empty()) fail(Code::kInvalidArgument, "a safetensors tensor needs a non-empty name");
    if (t.name == "__metadata__") fail(Code::kInvalidArgument, "'__metadata__' is reserved, not a tensor name");
    if (!seen.insert(t.name).second) fail(Code::kInvalidArgument, "duplicate tensor name '", t.name, "'");
  }
}

// Larger elements first keeps every offset a multiple of its element size without padding.
std::vector<size_t> data_order(const std::vector<SafetensorsTensor>& tensors) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return dtype_size_in_bytes(tensors[a].dtype) > dtype_size_in_bytes(tensors[b].dtype);
  });
  return order;
}

std::string header_json(const std::vector<SafetensorsTensor>& tensors, const std::vector<uint64_t>& begins,
                        const std::map<std::string, std::string>& metadata) {
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!std::exchange(first, false)) h += ',';
      h += json_quote(k) + ":" + json_quote(v);
    }
    h += "}";
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (h.size() > 1) h += ',';
    h += json_quote(t.name) + ":{\"dtype\":\"" + safetensors_dtype_code(t.dtype) + "\",\"shape\":[";
    for (size_t d = 0; d < t.dims.size(); ++d) h += (d ? "," : "") + std::to_string(t.dims[d]);
    h += "],\"data_offsets\":[" + std::to_string(begins[i]) + "," + std::to_string(begins[i] + t.data.size()) + "]}";
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');  // 8 + header size stays a multiple of 8
  return h;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  check_names(tensors);
  for (const auto& t : tensors) checked_byte_size(t);
  const std::vector<size_t> order = data_order(tensors);
  std::vector<uint64_t> begins(tensors.size());
  uint64_t offset = 0;
  for (size_t i : order) {
    begins[i] = offset;
    offset += tensors[i].data.size();
  }
  const std::string header = header_json(tensors, begins, metadata);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));

  FileWriter out(path);
  out.write(std::span<const uint8_t>(length, 8));
  out.write(header);
  for (size_t i : order) out.write(tensors[i].data);
  out.commit();
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Ref<Tensor>>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsTensor> views;
  std::vector<std::vector<uint8_t>> copies;  // row-major bytes of the strided tensors
  copies.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    if (!t) fail(Code::kInvalidArgument, "tensor '", name, "' is null");
    t->check_host("write_safetensors");
    std::span<const uint8_t> data(t->data(), static_cast<size_t>(t->byte_size()));
    if (!t->is_contiguous()) {
      copies.emplace_back(static_cast<size_t>(t->byte_size()));
      t->to_host(copies.back().data(), copies.back().size());
      data = copies.back();
    }
    views.push_back({name, t->dtype(), t->dims(), data});
  }
  write_safetensors(path, views, metadata);
}

}  // namespace maxc
