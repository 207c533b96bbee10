#include "base/quant_encoding.h"

#include <cctype>

#include "base/error.h"

namespace maxc {
namespace {

constexpr QuantEncodingInfo kTable[] = {
    {QuantEncoding::kQ4_0, "q4_0", 32, 18},
    {QuantEncoding::kQ4_K, "q4_k", 256, 144},
    {QuantEncoding::kQ5_K, "q5_k", 256, 176},
    {QuantEncoding::kQ6_K, "q6_k", 256, 210},
    {QuantEncoding::kQ8_0, "q8_0", 32, 34},
};

}  // namespace

const QuantEncodingInfo* quant_encoding_info(QuantEncoding e) {
  for (const auto& info : kTable)
    if (info.encoding == e) return &info;
  return nullptr;
}

const char* quant_encoding_name(QuantEncoding e) {
  if (e == QuantEncoding::kNone) return "none";
  const QuantEncodingInfo* info = quant_encoding_info(e);
  return info ? info->name : nullptr;
}

std::optional<QuantEncoding> quant_encoding_from_name(std::string_view name) {
  for (const auto& info : kTable) {
    std::string_view candidate = info.name;
    if (candidate.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(name[i])) == candidate[i];
    if (same) return info.encoding;
  }
  return std::nullopt;
}

int64_t quant_row_bytes(QuantEncoding e, int64_t k) {
  const QuantEncodingInfo* info = quant_encoding_info(e);
  if (!info) fail(Code::kInvalidArgument, "unknown quantization encoding ", static_cast<int>(e));
  if (k <= 0 || k % info->elements_per_block != 0)
    fail(Code::kInvalidArgument, "a ", info->name, " row needs a positive multiple of ",
         info->elements_per_block, " elements, got ", k);
  return k / info->elements_per_block * info->block_bytes;
}

}  // namespace maxc
