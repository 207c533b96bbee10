// Reads GGUF files, versions 2 and 3 (little-endian): "GGUF", version u32, tensor count u64,
// metadata count u64, the metadata key/value pairs, the tensor infos (name, n_dims, ne[],
// GGML type u32, offset u64), then the data section at the next multiple of the alignment
// (general.alignment, default 32), to which the tensor offsets are relative.
//
// GGUF lists ne[0] as the innermost dimension; entries carry our row-major order, reversed.
// Quantized tensors (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K) become uint8 [rows..., row_bytes] with
// their encoding and element dims (see weight_entry.h). Nothing is copied: entries point into
// the mapped file.
//
// Every count and length is checked against the bytes left before anything is reserved, and
// every offset with checked arithmetic. Errors name the file, the tensor or metadata key where
// there is one, and the byte offset:
//   DATA_LOSS         truncated or corrupt: bad magic, counts or lengths past the end, an
//                     unknown metadata value type, arrays nested too deep, duplicate keys or
//                     tensor names, general.alignment not a power of two (or not a uint32),
//                     more than 4 dims, an offset that is not aligned or outside the data
//                     section, overlapping tensors, a row that does not fill whole blocks;
//   UNIMPLEMENTED     a GGML type we cannot hold (Q4_1, Q5_0, Q2_K, IQ*, ...), a version
//                     other than 2 and 3, a big-endian file;
//   INVALID_ARGUMENT  a GGML type id GGML never defined;
//   NOT_FOUND / PERMISSION_DENIED / ...  opening the file (see MappedFile::open).
//
// Thread-safety: the functions are reentrant; results are plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weights/gguf_value.h"
#include "weights/mapped_file.h"
#include "weights/weight_entry.h"

namespace maxc {

constexpr uint64_t kGgufDefaultAlignment = 32;
// GGML's own limit on tensor rank.
constexpr uint32_t kGgufMaxDims = 4;
// Arrays of arrays deeper than this are refused, so a hostile file cannot exhaust the stack.
constexpr int kGgufMaxArrayDepth = 16;

struct GgufFile {
  uint32_t version = 0;
  uint64_t alignment = kGgufDefaultAlignment;
  uint64_t data_offset = 0;          // absolute start of the data section
  std::vector<GgufKv> metadata;      // in file order
  std::vector<WeightEntry> entries;  // in file order
  std::vector<uint32_t> ggml_types;  // the GGML type id of each entry

  // The value of a metadata key; nullptr when absent.
  const GgufValue* find(std::string_view key) const;
};

GgufFile read_gguf(const std::string& path);
GgufFile read_gguf(std::shared_ptr<const MappedFile> file);

// Whether `bytes` start with the GGUF magic.
bool looks_like_gguf(std::span<const uint8_t> bytes);

}  // namespace maxc
