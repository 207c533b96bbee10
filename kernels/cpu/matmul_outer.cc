#include "kernels/cpu/matmul_outer.h"

#include <type_traits>

#include "base/error.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

template <typename T>
T times(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic wraps where signed overflow would be undefined.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <typename T>
void outer_typed(const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  parallel_for(na, nb, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < nb; ++j) out[i * nb + j] = times(a[i], b[j]);
  });
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void outer_half(const uint16_t* a, int64_t na, const uint16_t* b, int64_t nb, uint16_t* out) {
  parallel_for(na, nb * 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float x = Widen(a[i]);
      for (int64_t j = 0; j < nb; ++j) out[i * nb + j] = Narrow(x * Widen(b[j]));
    }
  });
}

template <typename T>
void outer_as(const void* a, int64_t na, const void* b, int64_t nb, void* out) {
  outer_typed(static_cast<const T*>(a), na, static_cast<const T*>(b), nb, static_cast<T*>(out));
}

}  // namespace

bool outer_supports(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

void outer(DType dtype, const void* a, int64_t na, const void* b, int64_t nb, void* out) {
  switch (dtype) {
    case DType::kFloat16:
      return outer_half<f16_to_float, float_to_f16>(static_cast<const uint16_t*>(a), na,
                                                    static_cast<const uint16_t*>(b), nb, static_cast<uint16_t*>(out));
    case DType::kBFloat16:
      return outer_half<bf16_to_float, float_to_bf16>(static_cast<const uint16_t*>(a), na,
                                                      static_cast<const uint16_t*>(b), nb, static_cast<uint16_t*>(out));
    case DType::kFloat32: return outer_as<float>(a, na, b, nb, out);
    case DType::kFloat64: return outer_as<double>(a, na, b, nb, out);
    case DType::kInt8: return outer_as<int8_t>(a, na, b, nb, out);
    case DType::kInt16: return outer_as<int16_t>(a, na, b, nb, out);
    case DType::kInt32: return outer_as<int32_t>(a, na, b, nb, out);
    case DType::kInt64: return outer_as<int64_t>(a, na, b, nb, out);
    case DType::kUInt8: return outer_as<uint8_t>(a, na, b, nb, out);
    case DType::kUInt16: return outer_as<uint16_t>(a, na, b, nb, out);
    case DType::kUInt32: return outer_as<uint32_t>(a, na, b, nb, out);
    case DType::kUInt64: return outer_as<uint64_t>(a, na, b, nb, out);
    default: fail(Code::kUnimplemented, "outer: no CPU kernel for dtype ", dtype_label(dtype));
  }
}

}  // namespace maxc::cpu
