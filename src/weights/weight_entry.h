// What a weights file says about one tensor, and where its bytes are.
//
// A quantized tensor is stored as MAX allocates it: dtype uint8 with dims [rows..., row_bytes],
// where the last logical dim k became quant_row_bytes(encoding, k) bytes. `logical_dims` keeps
// the element shape ([rows..., k]); for an unquantized tensor it equals `dims`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/quant_encoding.h"
#include "weights/mapped_file.h"

namespace maxc {

struct WeightInfo {
  std::string name;
  DType dtype = DType::kInvalid;   // uint8 when quantized
  std::vector<int64_t> dims;       // storage dims
  QuantEncoding encoding = QuantEncoding::kNone;
  std::vector<int64_t> logical_dims;
};

// A parsed, validated entry: [offset, offset + bytes) lies inside `file`, and `bytes` is
// exactly the storage size of `info.dims` (rows * row_bytes when quantized).
struct WeightEntry {
  WeightInfo info;
  std::shared_ptr<const MappedFile> file;
  uint64_t offset = 0;  // absolute, from the start of the file
  uint64_t bytes = 0;
};

// Bytes of a row-major tensor of `dims` with `elem_bytes`-byte elements; nullopt when the
// extents (a 0 counted as 1, so an empty tensor is no exception) exceed what Tensor accepts
// (int64 element counts and strides with room for bits) or the byte count overflows.
std::optional<uint64_t> checked_storage_bytes(const std::vector<int64_t>& dims, uint64_t elem_bytes);

// Storage dims of a quantized tensor of element dims `logical` ([..., k] -> [..., row_bytes]).
// Throws INVALID_ARGUMENT when the rank is 0 or k does not fit the encoding's blocks.
std::vector<int64_t> quantized_storage_dims(QuantEncoding encoding, const std::vector<int64_t>& logical);
// The inverse: element dims of stored uint8 dims [..., row_bytes]. Throws INVALID_ARGUMENT when
// the rank is 0 or row_bytes is not a positive multiple of the encoding's block size.
std::vector<int64_t> quantized_logical_dims(QuantEncoding encoding, const std::vector<int64_t>& storage);

}  // namespace maxc
