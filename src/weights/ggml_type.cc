#include "weights/ggml_type.h"

#include <iterator>

namespace maxc {
namespace {

constexpr DType kNo = DType::kInvalid;
constexpr QuantEncoding kPlain = QuantEncoding::kNone;

constexpr GgmlTypeInfo kTable[] = {
    {0, "F32", true, DType::kFloat32, kPlain},
    {1, "F16", true, DType::kFloat16, kPlain},
    {2, "Q4_0", true, DType::kUInt8, QuantEncoding::kQ4_0},
    {3, "Q4_1", false, kNo, kPlain},
    {4, "Q4_2 (removed from GGML)", false, kNo, kPlain},
    {5, "Q4_3 (removed from GGML)", false, kNo, kPlain},
    {6, "Q5_0", false, kNo, kPlain},
    {7, "Q5_1", false, kNo, kPlain},
    {8, "Q8_0", true, DType::kUInt8, QuantEncoding::kQ8_0},
    {9, "Q8_1", false, kNo, kPlain},
    {10, "Q2_K", false, kNo, kPlain},
    {11, "Q3_K", false, kNo, kPlain},
    {12, "Q4_K", true, DType::kUInt8, QuantEncoding::kQ4_K},
    {13, "Q5_K", true, DType::kUInt8, QuantEncoding::kQ5_K},
    {14, "Q6_K", true, DType::kUInt8, QuantEncoding::kQ6_K},
    {15, "Q8_K", false, kNo, kPlain},
    {16, "IQ2_XXS", false, kNo, kPlain},
    {17, "IQ2_XS", false, kNo, kPlain},
    {18, "IQ3_XXS", false, kNo, kPlain},
    {19, "IQ1_S", false, kNo, kPlain},
    {20, "IQ4_NL", false, kNo, kPlain},
    {21, "IQ3_S", false, kNo, kPlain},
    {22, "IQ2_S", false, kNo, kPlain},
    {23, "IQ4_XS", false, kNo, kPlain},
    {24, "I8", true, DType::kInt8, kPlain},
    {25, "I16", true, DType::kInt16, kPlain},
    {26, "I32", true, DType::kInt32, kPlain},
    {27, "I64", true, DType::kInt64, kPlain},
    {28, "F64", true, DType::kFloat64, kPlain},
    {29, "IQ1_M", false, kNo, kPlain},
    {30, "BF16", true, DType::kBFloat16, kPlain},
    {31, "Q4_0_4_4 (removed from GGML)", false, kNo, kPlain},
    {32, "Q4_0_4_8 (removed from GGML)", false, kNo, kPlain},
    {33, "Q4_0_8_8 (removed from GGML)", false, kNo, kPlain},
    {34, "TQ1_0", false, kNo, kPlain},
    {35, "TQ2_0", false, kNo, kPlain},
    {36, "IQ4_NL_4_4 (removed from GGML)", false, kNo, kPlain},
    {37, "IQ4_NL_4_8 (removed from GGML)", false, kNo, kPlain},
    {38, "IQ4_NL_8_8 (removed from GGML)", false, kNo, kPlain},
    {39, "MXFP4", false, kNo, kPlain},
};

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
  // The table is indexed by id; the check keeps that true if an entry is ever misplaced.
  if (id >= std::size(kTable) || kTable[id].id != id) return nullptr;
  return &kTable[id];
}

std::optional<uint32_t> ggml_type_for(DType dtype, QuantEncoding encoding) {
  for (const auto& t : kTable)
    if (t.supported && t.dtype == dtype && t.encoding == encoding) return t.id;
  return std::nullopt;
}

}  // namespace maxc
