#include "kernels/cpu/range.h"

#include "kernels/cpu/half.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

template <typename T>
void fill_typed(const void* start, const void* step, void* out, int64_t n) {
  const T s = *static_cast<const T*>(start), d = *static_cast<const T*>(step);
  T* o = static_cast<T*>(out);
  parallel_for(n, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = static_cast<T>(s + static_cast<T>(i) * d);
  });
}

template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void fill_half(const void* start, const void* step, void* out, int64_t n) {
  const float s = Load(*static_cast<const uint16_t*>(start)), d = Load(*static_cast<const uint16_t*>(step));
  uint16_t* o = static_cast<uint16_t*>(out);
  parallel_for(n, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = Store(s + static_cast<float>(i) * d);
  });
}

}  // namespace

bool range_supports(DType dtype) {
  // What range_fill writes: floats of 16 bits and more, integers of whole bytes.
  if (dtype_is_float(dtype)) return dtype_size_in_bits(dtype) >= 16;
  return dtype_is_integral(dtype) && !dtype_is_sub_byte(dtype);
}

bool range_fill(DType dtype, const void* start, const void* step, void* out, int64_t n) {
  switch (dtype) {
    case DType::kFloat32: fill_typed<float>(start, step, out, n); return true;
    case DType::kFloat64: fill_typed<double>(start, step, out, n); return true;
    case DType::kFloat16: fill_half<f16_to_float, float_to_f16>(start, step, out, n); return true;
    case DType::kBFloat16: fill_half<bf16_to_float, float_to_bf16>(start, step, out, n); return true;
    case DType::kInt8: fill_typed<int8_t>(start, step, out, n); return true;
    case DType::kInt16: fill_typed<int16_t>(start, step, out, n); return true;
    case DType::kInt32: fill_typed<int32_t>(start, step, out, n); return true;
    case DType::kInt64: fill_typed<int64_t>(start, step, out, n); return true;
    case DType::kUInt8: fill_typed<uint8_t>(start, step, out, n); return true;
    case DType::kUInt16: fill_typed<uint16_t>(start, step, out, n); return true;
    case DType::kUInt32: fill_typed<uint32_t>(start, step, out, n); return true;
    case DType::kUInt64: fill_typed<uint64_t>(start, step, out, n); return true;
    default: return false;
  }
}

}  // namespace maxc::cpu
