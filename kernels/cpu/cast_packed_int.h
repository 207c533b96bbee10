// Casts to and from the sub-byte integer dtypes (uint2, int2, uint4, int4; base/packed_int.h
// says how they are packed). Like float4's, they run apart from the elementwise engine,
// which computes on whole-byte elements only, and no op but `cast` reads or writes them.
//
// Values pass through int64, so a cast between integers means what the same cast to or from
// int8 means (kernels/cpu/cast.h): integers keep their low bits (int64 300 -> int4 is -4,
// int4 -1 -> uint8 is 255), bool reads as 0/1 and is written as x != 0. A float cast to a
// packed integer rounds half to even, saturates at int64's range (NaN -> 0) and keeps the low
// bits: the ONNX specification's rule for its 4-bit types (onnx docs, technical/int4.md,
// "Cast"), applied to the 2-bit ones too (a float cast to int8 truncates toward zero instead,
// kernels/cpu/cast.h). float8 and float4 go through float with kernels/cpu/cast_minifloat.h's
// conversions.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// out[i] = in[i] cast from `src` to `dst`, for i in [0, n). One of the two is a packed-int
// dtype and the other any dtype a cast handles (INVALID_ARGUMENT otherwise). `saturate`
// applies to a float8 destination only (kernels/cpu/minifloat.h).
void cast_packed_int(DType src, DType dst, const void* in, void* out, int64_t n, bool saturate);

// Whether cast_packed_int converts between these two dtypes.
bool cast_packed_int_supports(DType src, DType dst);

}  // namespace maxc::cpu
