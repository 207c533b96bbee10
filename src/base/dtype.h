// Element types, numbered as MAX numbers them (the ABI's MAX_DTYPE_* values).
// Integer codes have bit 7 set, bit 0 marks signed, bits 1-3 hold log2 of the width;
// float codes have bit 6 set. The table in dtype.cc is the one source of the traits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace maxc {

enum class DType : int32_t {
  kInvalid = 0,
  kBool = 1,
  kFloat4E2M1Fn = 64,
  kFloat8E8M0Fnu = 73,
  kFloat8E4M3Fn = 75,
  kFloat8E4M3Fnuz = 76,
  kFloat8E5M2 = 77,
  kFloat8E5M2Fnuz = 78,
  kFloat16 = 79,
  kBFloat16 = 80,
  kFloat32 = 81,
  kFloat64 = 82,
  kUInt2 = 130,
  kInt2 = 131,
  kUInt4 = 132,
  kInt4 = 133,
  kUInt8 = 134,
  kInt8 = 135,
  kUInt16 = 136,
  kInt16 = 137,
  kUInt32 = 138,
  kInt32 = 139,
  kUInt64 = 140,
  kInt64 = 141,
};

struct DTypeInfo {
  DType dtype;
  const char* name;  // MAX's member name: "float32"
  int32_t bits;      // storage bits of one element (4 for float4_e2m1fn and int4, 2 for int2)
  bool is_float;
  bool is_signed;    // signed integers and every float but float8_e8m0fnu, which has no sign bit
};

// nullptr when the code is not a dtype we know.
const DTypeInfo* dtype_info(DType dtype);
inline bool dtype_is_valid(DType d) { return dtype_info(d) != nullptr; }

int32_t dtype_size_in_bits(DType d);   // 0 when invalid
int32_t dtype_size_in_bytes(DType d);  // bits rounded up to whole bytes; 0 when invalid
int32_t dtype_align(DType d);          // == size_in_bytes for every dtype we have
const char* dtype_name(DType d);       // nullptr when invalid
const char* dtype_label(DType d);      // dtype_name, or "invalid": for messages
std::optional<DType> dtype_from_name(std::string_view name);

bool dtype_is_float(DType d);
// The 8-bit floats, float8_e8m0fnu too (as MAX's DType.is_float8 answers).
bool dtype_is_float8(DType d);
bool dtype_is_half(DType d);  // float16 and bfloat16
bool dtype_is_integral(DType d);
bool dtype_is_signed_integral(DType d);
bool dtype_is_unsigned_integral(DType d);
inline bool dtype_is_bool(DType d) { return d == DType::kBool; }
// Elements narrower than a byte (float4_e2m1fn, the 2- and 4-bit integers): packed, low bits
// first, so one has no address of its own.
bool dtype_is_sub_byte(DType d);
// uint2, int2, uint4, int4 (base/packed_int.h reads and writes their elements).
bool dtype_is_packed_int(DType d);

// Bytes that `count` contiguous elements occupy (sub-byte types are packed).
uint64_t dtype_bytes_for(DType d, uint64_t count);

}  // namespace maxc
