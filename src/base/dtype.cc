#include "base/dtype.h"

#include <iterator>

#include "base/checked_math.h"

namespace maxc {
namespace {

constexpr DTypeInfo kTable[] = {
    {DType::kBool, "bool", 8, false, false},
    {DType::kFloat4E2M1Fn, "float4_e2m1fn", 4, true, true},
    {DType::kFloat8E8M0Fnu, "float8_e8m0fnu", 8, true, false},
    {DType::kFloat8E4M3Fn, "float8_e4m3fn", 8, true, true},
    {DType::kFloat8E4M3Fnuz, "float8_e4m3fnuz", 8, true, true},
    {DType::kFloat8E5M2, "float8_e5m2", 8, true, true},
    {DType::kFloat8E5M2Fnuz, "float8_e5m2fnuz", 8, true, true},
    {DType::kFloat16, "float16", 16, true, true},
    {DType::kBFloat16, "bfloat16", 16, true, true},
    {DType::kFloat32, "float32", 32, true, true},
    {DType::kFloat64, "float64", 64, true, true},
    {DType::kUInt2, "uint2", 2, false, false},
    {DType::kInt2, "int2", 2, false, true},
    {DType::kUInt4, "uint4", 4, false, false},
    {DType::kInt4, "int4", 4, false, true},
    {DType::kUInt8, "uint8", 8, false, false},
    {DType::kInt8, "int8", 8, false, true},
    {DType::kUInt16, "uint16", 16, false, false},
    {DType::kInt16, "int16", 16, false, true},
    {DType::kUInt32, "uint32", 32, false, false},
    {DType::kInt32, "int32", 32, false, true},
    {DType::kUInt64, "uint64", 64, false, false},
    {DType::kInt64, "int64", 64, false, true},
};

}  // namespace

const DTypeInfo* dtype_info(DType dtype) {
  for (const auto& info : kTable)
    if (info.dtype == dtype) return &info;
  return nullptr;
}

int32_t dtype_size_in_bits(DType d) {
  const DTypeInfo* info = dtype_info(d);
  return info ? info->bits : 0;
}

int32_t dtype_size_in_bytes(DType d) { return (dtype_size_in_bits(d) + 7) / 8; }
int32_t dtype_align(DType d) { return dtype_size_in_bytes(d); }

const char* dtype_name(DType d) {
  const DTypeInfo* info = dtype_info(d);
  return info ? info->name : nullptr;
}

const char* dtype_label(DType d) { return dtype_name(d) ? dtype_name(d) : "invalid"; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kTable)
    if (name == info.name) return info.dtype;
  return std::nullopt;
}

bool dtype_is_float(DType d) {
  const DTypeInfo* info = dtype_info(d);
  return info && info->is_float;
}

bool dtype_is_float8(DType d) {
  return d == DType::kFloat8E8M0Fnu || d == DType::kFloat8E4M3Fn || d == DType::kFloat8E4M3Fnuz ||
         d == DType::kFloat8E5M2 || d == DType::kFloat8E5M2Fnuz;
}

bool dtype_is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

bool dtype_is_integral(DType d) {
  const DTypeInfo* info = dtype_info(d);
  return info && !info->is_float && d != DType::kBool;
}

bool dtype_is_signed_integral(DType d) {
  return dtype_is_integral(d) && dtype_info(d)->is_signed;
}

bool dtype_is_unsigned_integral(DType d) {
  return dtype_is_integral(d) && !dtype_info(d)->is_signed;
}

bool dtype_is_sub_byte(DType d) {
  const int32_t bits = dtype_size_in_bits(d);
  return bits > 0 && bits < 8;
}

bool dtype_is_packed_int(DType d) { return dtype_is_integral(d) && dtype_is_sub_byte(d); }

// A count too large for its size to fit saturates at UINT64_MAX rather than wrapping to a
// small number: no allocation or size comparison can then succeed with it. Code that must
// tell the two apart asks checked_byte_size (base/checked_math.h).
uint64_t dtype_bytes_for(DType d, uint64_t count) {
  if (!dtype_is_valid(d)) return 0;
  return checked_byte_size(d, count).value_or(UINT64_MAX);
}

}  // namespace maxc
