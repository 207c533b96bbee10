// The sub-byte dtypes as the kernels see them: float4_e2m1fn and the packed integers uint2,
// int2, uint4, int4. A byte holds 8 / bits elements, the earliest in its lowest bits, and the
// unused high bits of a last partial byte are 0 (src/base/packed_int.h, kernels/cpu/
// cast_minifloat.h). An element has no address of its own, so the stored type here is one
// whole byte of elements, and a kernel that writes one must write the whole byte from one
// thread (cast_packed.cu).
//
// An element's value is the CPU's: float4 reads as the float of its code and is written from
// float (or straight from double) with common/minifloat.cuh's rounding; a packed integer
// reads as int64 (sign-extended for int2 and int4) and is written as an int64's low bits.
#ifndef MAXC_GPU_PACKED_CUH
#define MAXC_GPU_PACKED_CUH

#include "cast.cuh"
#include "math.cuh"
#include "minifloat.cuh"
#include "platform.cuh"

namespace maxc {
namespace gpu {

// One byte of packed elements each. The names keep "packed_" so they never meet the CUDA and
// HIP vector types int2, uint2, int4 and uint4, which those compilers declare globally.
struct float4_e2m1fn {
  u8 bits;
};
struct packed_uint2 {
  u8 bits;
};
struct packed_int2 {
  u8 bits;
};
struct packed_uint4 {
  u8 bits;
};
struct packed_int4 {
  u8 bits;
};

// What a stored type packs; `value` is false for every whole-byte type. is_int: a packed
// integer, which a cast carries through int64 unless the source is a float, which rounds
// first (PackedCastCompute; the CPU's cast_packed_int).
template <class S>
struct PackedFormat {
  static constexpr bool value = false, is_int = false;
};
template <int Bits, bool IsInt, bool Signed>
struct PackedLayout {
  static constexpr bool value = true, is_int = IsInt, is_signed = Signed;
  static constexpr int bits = Bits, per_byte = 8 / Bits;
  static constexpr u32 mask = (1u << Bits) - 1u;
};
template <>
struct PackedFormat<float4_e2m1fn> : PackedLayout<4, false, true> {};
template <>
struct PackedFormat<packed_uint2> : PackedLayout<2, true, false> {};
template <>
struct PackedFormat<packed_int2> : PackedLayout<2, true, true> {};
template <>
struct PackedFormat<packed_uint4> : PackedLayout<4, true, false> {};
template <>
struct PackedFormat<packed_int4> : PackedLayout<4, true, true> {};

template <>
struct ComputeOf<float4_e2m1fn> {
  typedef float type;
};

// What a cast from In to Out computes in, as the CPU's: int64 when either side is a packed
// integer (cast_packed_int), except that a float cast to a packed integer keeps In's float
// compute type so that pack_code can round it; else In's compute type (cast_minifloat: float,
// or double from float64, which float4 then encodes straight from double).
template <class In, class Out>
struct PackedCastCompute {
  typedef typename ComputeOf<In>::type InCompute;
  typedef typename Select<PackedFormat<In>::is_int || (PackedFormat<Out>::is_int && !IsFloat<InCompute>::value),
                          i64, InCompute>::type type;
};

// The bytes that n elements of packed S occupy.
template <class S>
MAXC_HD i64 packed_bytes(i64 n) {
  return (n + PackedFormat<S>::per_byte - 1) / PackedFormat<S>::per_byte;
}

// The value of a code of packed S as compute type T.
template <class T, class S>
MAXC_HD T unpack_code(u32 code) {
  typedef PackedFormat<S> P;
  if constexpr (P::is_int) {
    const u32 sign = P::is_signed ? 1u << (P::bits - 1) : 0u;
    return convert_number<T>(static_cast<i64>(code ^ sign) - static_cast<i64>(sign));
  } else {
    return convert_number<T>(minifloat_bits_to_float<Float4E2M1Fn>(code));
  }
}

// Compute value v as a code of packed S. An integer keeps v's low bits; a float v rounds half
// to even first and saturates at int64's range (ONNX's rule for its 4-bit types: round to the
// nearest even integer, then truncate; the CPU's cast_packed_int.h).
template <class S, class T>
MAXC_HD u32 pack_code(T v, bool saturate) {
  typedef PackedFormat<S> P;
  if constexpr (P::is_int && IsFloat<T>::value) {
    return static_cast<u32>(static_cast<u64>(convert_number<i64>(math::rint(static_cast<double>(v))))) & P::mask;
  } else if constexpr (P::is_int) {
    return static_cast<u32>(static_cast<u64>(convert_number<i64>(v))) & P::mask;
  } else {
    return minifloat_code<Float4E2M1Fn>(v, saturate);
  }
}

// Element i of x (a whole-byte or a packed type) as compute type T.
template <class T, class S>
MAXC_HD T load_element(const S* x, i64 i) {
  typedef PackedFormat<S> P;
  if constexpr (P::value) {
    const u32 shift = static_cast<u32>(i % P::per_byte) * P::bits;
    return unpack_code<T, S>((x[i / P::per_byte].bits >> shift) & P::mask);
  } else {
    return load_as<T>(x[i]);
  }
}

// Byte b of packed Out holding elements of x (n in all) converted through compute type C;
// the bits of elements past n stay 0.
template <class C, class Out, class In>
MAXC_HD Out pack_byte(const In* x, i64 b, i64 n, bool saturate) {
  typedef PackedFormat<Out> P;
  u32 byte = 0;
  for (int k = 0; k < P::per_byte; ++k) {
    const i64 i = b * P::per_byte + k;
    if (i < n) byte |= pack_code<Out>(load_element<C>(x, i), saturate) << (k * P::bits);
  }
  Out s;
  s.bits = static_cast<u8>(byte);
  return s;
}

}  // namespace gpu
}  // namespace maxc

#endif  // MAXC_GPU_PACKED_CUH
