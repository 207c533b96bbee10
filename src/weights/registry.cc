#include "weights/registry.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "driver/device.h"
#include "weights/gguf.h"
#include "weights/mapped_file.h"
#include "weights/safetensors.h"

namespace maxc {
namespace {

enum class Format { kUnknown, kSafetensors, kSafetensorsIndex, kGguf };

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  s = s.substr(s.size() - suffix.size());
  return std::equal(s.begin(), s.end(), suffix.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

Format format_from_name(std::string_view path) {
  if (ends_with_nocase(path, ".safetensors.index.json")) return Format::kSafetensorsIndex;
  if (ends_with_nocase(path, ".safetensors")) return Format::kSafetensors;
  if (ends_with_nocase(path, ".gguf")) return Format::kGguf;
  return Format::kUnknown;
}

std::vector<WeightEntry> read_entries(const std::string& path) {
  const Format by_name = format_from_name(path);
  if (by_name == Format::kSafetensorsIndex) return read_safetensors_index(path).entries;
  auto file = MappedFile::open(path);
  Format format = by_name;
  if (format == Format::kUnknown) {
    if (looks_like_gguf(file->bytes())) format = Format::kGguf;
    else if (looks_like_safetensors(file->bytes())) format = Format::kSafetensors;
  }
  switch (format) {
    case Format::kSafetensors: return read_safetensors(std::move(file)).entries;
    case Format::kGguf: return read_gguf(std::move(file)).entries;
    default:
      fail(Code::kInvalidArgument, "cannot tell the format of weights file '", path,
           "': its name ends in none of .safetensors, .gguf, .safetensors.index.json and its content "
           "starts like neither a GGUF nor a safetensors file");
  }
}

}  // namespace

Ref<WeightsRegistry> WeightsRegistry::create() { return Ref<WeightsRegistry>::adopt(new WeightsRegistry()); }

void WeightsRegistry::add_file(const std::string& path) { add_entries(read_entries(path), path); }

void WeightsRegistry::add_entries(std::vector<WeightEntry> entries, std::string_view source) {
  std::vector<Record> records;
  records.reserve(entries.size());
  for (WeightEntry& e : entries) {
    if (!e.file || e.offset > e.file->size() || e.bytes > e.file->size() - e.offset)
      fail(Code::kInvalidArgument, source, ": weight '", e.info.name, "' lies outside its file");
    records.push_back({std::move(e.info), std::move(e.file), e.offset, e.bytes, {}});
  }
  insert(std::move(records), source);
}

void WeightsRegistry::add_tensor(std::string name, Ref<Tensor> tensor, QuantEncoding encoding) {
  if (!tensor) fail(Code::kInvalidArgument, "weight '", name, "': the tensor is null");
  if (name.empty()) fail(Code::kInvalidArgument, "a weight needs a non-empty name");
  WeightInfo info{std::move(name), tensor->dtype(), tensor->dims(), encoding, tensor->dims()};
  if (encoding != QuantEncoding::kNone) {
    if (tensor->dtype() != DType::kUInt8)
      fail(Code::kInvalidArgument, "weight '", info.name, "': a quantized weight is stored as uint8, not ",
           dtype_name(tensor->dtype()));
    try {
      info.logical_dims = quantized_logical_dims(encoding, tensor->dims());
    } catch (const Error& e) {
      fail(e.code(), "weight '", info.name, "': ", e.what());
    }
  }
  std::vector<Record> records;
  records.push_back({std::move(info), nullptr, 0, tensor->byte_size(), std::move(tensor)});
  insert(std::move(records), "add_tensor");
}

void WeightsRegistry::insert(std::vector<Record> records, std::string_view source) {
  // Checked before the first insertion, so a refused batch leaves nothing behind.
  std::unordered_map<std::string_view, size_t> batch;
  for (const Record& r : records) {
    if (index_.count(r.info.name) || !batch.emplace(r.info.name, 0).second)
      fail(Code::kAlreadyExists, source, ": weight '", r.info.name, "' is already in the registry");
  }
  const size_t first = records_.size();
  try {
    for (Record& r : records) {
      records_.push_back(std::move(r));
      index_.emplace(records_.back().info.name, records_.size() - 1);
    }
  } catch (...) {  // out of memory half way: undo, so the batch stays all or nothing
    while (records_.size() > first) {
      index_.erase(records_.back().info.name);
      records_.pop_back();
    }
    throw;
  }
}

std::vector<std::string> WeightsRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(records_.size());
  for (const Record& r : records_) out.push_back(r.info.name);
  return out;
}

bool WeightsRegistry::contains(std::string_view name) const { return index_.count(name) != 0; }

const WeightsRegistry::Record& WeightsRegistry::find(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) fail(Code::kNotFound, "weight '", name, "' is not in the registry");
  return records_[it->second];
}

const WeightInfo& WeightsRegistry::info(std::string_view name) const { return find(name).info; }

Ref<Tensor> WeightsRegistry::tensor(std::string_view name) const {
  const Record& r = find(name);
  return r.tensor ? r.tensor : mapped_tensor(r.file, r.file->data() + r.offset, r.info.dtype, r.info.dims);
}

const WeightInfo& WeightsRegistry::info_at(size_t index) const {
  if (index >= records_.size())
    fail(Code::kOutOfRange, "weight index ", index, " is past the registry's ", records_.size(), " weights");
  return records_[index].info;
}

}  // namespace maxc
