// Block-quantized weight encodings (MAX's QuantizationEncoding, GGML's block layouts).
// A quantized tensor is stored as uint8 [rows, row_bytes]: each row of `k` logical elements
// is k / elements_per_block blocks of block_bytes each. The numbers are the ABI's
// MAX_QUANT_* values and never change.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace maxc {

enum class QuantEncoding : int32_t {
  kNone = 0,
  kQ4_0 = 1,
  kQ4_K = 2,
  kQ5_K = 3,
  kQ6_K = 4,
  kQ8_0 = 5,
};

struct QuantEncodingInfo {
  QuantEncoding encoding;
  const char* name;           // lower case, as MAX's QuantizationEncoding.name: "q4_k"
  int32_t elements_per_block;
  int32_t block_bytes;
};

// nullptr for kNone and unknown codes.
const QuantEncodingInfo* quant_encoding_info(QuantEncoding e);
const char* quant_encoding_name(QuantEncoding e);  // "none" for kNone, nullptr when unknown
// Accepts the lower-case name ("q4_k"); case-insensitive.
std::optional<QuantEncoding> quant_encoding_from_name(std::string_view name);

// Bytes of one encoded row of `k` elements. Throws INVALID_ARGUMENT when `e` is not an
// encoding or `k` is not a positive multiple of its elements_per_block.
int64_t quant_row_bytes(QuantEncoding e, int64_t k);

}  // namespace maxc
