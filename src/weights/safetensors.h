// Reads safetensors files: an 8-byte little-endian header length, a JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}, then
// the data section, to which data_offsets are relative. Sharded checkpoints are read through
// their index file ("model.safetensors.index.json": {"metadata": {...}, "weight_map":
// {tensor: shard file}}).
//
// Nothing is copied: entries point into the mapped file. Validation is strict (checked
// arithmetic throughout, nothing allocated beyond what the header's own bytes justify):
//   DATA_LOSS         truncated file, header length past the end, invalid JSON, a field of
//                     the wrong kind, data_offsets out of the data section, begin > end, a
//                     size that is not numel * element size, overlapping tensors, duplicate
//                     names; an index naming a tensor its shard lacks;
//   INVALID_ARGUMENT  a dtype we do not know; an index shard path that leads out of the
//                     index's directory, symlinks included, or is not a regular file (checked
//                     on the opened file, as ONNX external data is: base/file_inside.h);
//   NOT_FOUND / PERMISSION_DENIED / ...  opening a file (see MappedFile::open).
// Messages name the file, the tensor where there is one, and the byte offset in the file.
//
// Thread-safety: the functions are reentrant; results are plain values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "weights/mapped_file.h"
#include "weights/weight_entry.h"

namespace maxc {

struct SafetensorsFile {
  std::vector<WeightEntry> entries;  // in header order; for an index, in weight_map order
  std::map<std::string, std::string> metadata;
};

SafetensorsFile read_safetensors(const std::string& path);
SafetensorsFile read_safetensors(std::shared_ptr<const MappedFile> file);

// Reads an index file and each shard it names (each once), shards resolved relative to the
// index's directory. Metadata: the index's "metadata" (values that are not strings as compact
// JSON text), then each shard's keys the index does not already have.
SafetensorsFile read_safetensors_index(const std::string& index_path);

// Whether `bytes` start like a safetensors file (a header length that fits, then '{').
bool looks_like_safetensors(std::span<const uint8_t> bytes);

// The format's dtype codes ("F32", "BF16", "F8_E4M3", ...): nullopt / nullptr when the
// format or our DType has no counterpart.
std::optional<DType> dtype_from_safetensors(std::string_view code);
const char* safetensors_dtype_code(DType dtype);

// The reference implementation refuses larger headers; so do we, before parsing any JSON.
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

}  // namespace maxc
