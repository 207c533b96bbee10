// Reading index tensors (gather, gather_nd, scatter, scatter_nd): any integer dtype, with
// numpy's wrap of negative indices. An index outside [-n, n) is reported, never followed:
// the kernels skip it (scatter) or write zeros (gather) and return how many they met.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/dtype.h"

namespace maxc::cpu {

// Calls fn(T{}) with T the C++ type of integer dtype `t`; false when `t` is no integer dtype.
template <typename Fn>
bool with_index_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::kInt8: fn(int8_t{}); return true;
    case DType::kInt16: fn(int16_t{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    case DType::kInt64: fn(int64_t{}); return true;
    case DType::kUInt8: fn(uint8_t{}); return true;
    case DType::kUInt16: fn(uint16_t{}); return true;
    case DType::kUInt32: fn(uint32_t{}); return true;
    case DType::kUInt64: fn(uint64_t{}); return true;
    default: return false;
  }
}

// `i` as a position in [0, n), a negative one counting from the end; -1 when out of range.
template <typename T>
inline int64_t wrap_index(T i, int64_t n) {
  if constexpr (std::is_unsigned_v<T>) {
    return static_cast<uint64_t>(i) < static_cast<uint64_t>(n) ? static_cast<int64_t>(i) : -1;
  } else {
    const int64_t v = static_cast<int64_t>(i) < 0 ? static_cast<int64_t>(i) + n : static_cast<int64_t>(i);
    return v >= 0 && v < n ? v : -1;
  }
}

}  // namespace maxc::cpu
