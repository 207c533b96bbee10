// Casts to and from the float8 dtypes (float8_e8m0fnu too) and float4 (kernels/cpu/minifloat.h
// says what each conversion means). They run apart from the elementwise engine, which keeps
// only whole-byte dtypes it computes on (float4 packs two elements per byte), and no op but
// `cast` reads or writes them. The other side of the cast converts through float, with the
// engine's own load and store (kernels/cpu/cast.h), so a cast to int8 or float16 means the
// same as from float32; a float64 source rounds once, straight from double, except to
// float8_e8m0fnu, which ONNX defines on the value rounded to float32 first.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu {

// The dtypes these casts are for: the float8s (float8_e8m0fnu too) and float4.
bool is_cast_minifloat(DType dtype);

// out[i] = in[i] cast from `src` to `dst`, for i in [0, n). One of the two is a float8 or
// float4 dtype and the other one any dtype a cast handles (INVALID_ARGUMENT otherwise).
// `saturate`: see minifloat.h. Packed float4 holds element 2k in the low nibble of byte k
// and element 2k+1 in the high one; a last odd element leaves the high nibble 0.
void cast_minifloat(DType src, DType dst, const void* in, void* out, int64_t n, bool saturate);

// Whether cast_minifloat converts between these two dtypes.
bool cast_minifloat_supports(DType src, DType dst);

// The serial halves of cast_minifloat, for a cast kernel whose other side is not a dtype the
// engine loads and stores (kernels/cpu/cast_packed_int.h): elements [begin, begin + n) of the
// float8/float4 buffer of dtype `mini` read as floats, and written from floats. `begin` is
// even for float4, so that the range starts on a byte.
void minifloat_to_float(DType mini, const void* in, int64_t begin, int64_t n, float* out);
void minifloat_from_float(DType mini, const float* x, void* out, int64_t begin, int64_t n, bool saturate);

}  // namespace maxc::cpu
