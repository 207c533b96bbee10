#include "weights/weight_entry.h"

#include <limits>

#include "base/error.h"
#include "driver/tensor.h"

namespace maxc {

std::optional<uint64_t> checked_storage_bytes(const std::vector<int64_t>& dims, uint64_t elem_bytes) {
  constexpr uint64_t kLimit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 8;
  uint64_t extents = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    empty = empty || d == 0;
    const auto e = static_cast<uint64_t>(d > 0 ? d : 1);
    if (__builtin_mul_overflow(extents, e, &extents) || extents > kLimit) return std::nullopt;
  }
  if (empty) return 0;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(extents, elem_bytes, &bytes)) return std::nullopt;
  return bytes;
}

std::vector<int64_t> quantized_storage_dims(QuantEncoding encoding, const std::vector<int64_t>& logical) {
  if (logical.empty())
    fail(Code::kInvalidArgument, "a ", quant_encoding_name(encoding) ? quant_encoding_name(encoding) : "quantized",
         " tensor needs at least one dim");
  std::vector<int64_t> dims = logical;
  dims.back() = quant_row_bytes(encoding, logical.back());
  return dims;
}

std::vector<int64_t> quantized_logical_dims(QuantEncoding encoding, const std::vector<int64_t>& storage) {
  const QuantEncodingInfo* q = quant_encoding_info(encoding);
  if (!q) fail(Code::kInvalidArgument, "unknown quantization encoding ", static_cast<int32_t>(encoding));
  if (storage.empty()) fail(Code::kInvalidArgument, "a ", q->name, " tensor needs at least one dim");
  const int64_t row_bytes = storage.back();
  if (row_bytes <= 0 || row_bytes % q->block_bytes != 0)
    fail(Code::kInvalidArgument, "a ", q->name, " row needs a positive multiple of ", q->block_bytes,
         " bytes, got ", row_bytes, " (dims ", dims_to_string(storage), ")");
  const int64_t blocks = row_bytes / q->block_bytes;
  if (blocks > std::numeric_limits<int64_t>::max() / q->elements_per_block)
    fail(Code::kInvalidArgument, "a ", q->name, " row of ", row_bytes, " bytes has too many elements");
  std::vector<int64_t> dims = storage;
  dims.back() = blocks * q->elements_per_block;
  return dims;
}

}  // namespace maxc
