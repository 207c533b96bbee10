// The one checked multiply behind every element count, byte size and shape product. Dims
// come from files and from ABI callers, so a product of them is never trusted to fit: each
// place that computes one asks here and turns "no answer" into a status naming what it was
// computing (the tensor, the value, the node).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "base/dtype.h"

namespace maxc {

// The most elements a tensor, constant or graph value may have: 2^57 - 1.
// Why this bound: the widest dtype is 64 bits, and code below counts in elements, bytes
// (elements * 8) and, for packed sub-byte dtypes, bits (elements * bits). With at most
// INT64_MAX / 64 elements every one of those fits an int64, so no later size or offset
// computation can wrap. It is far beyond any memory (1.1 EiB of float64), so it refuses
// nothing a machine could hold.
inline constexpr int64_t kMaxElements = INT64_MAX / 64;

// a * b, or nullopt when it does not fit T.
template <typename T>
std::optional<T> checked_mul(T a, T b) {
  T r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nullopt when it does not fit T.
template <typename T>
std::optional<T> checked_add(T a, T b) {
  T r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of `dims`, or nullopt when a dim is negative or the product exceeds `limit`.
// A zero dim makes the product 0, but the other dims must still multiply within the limit:
// the strides of an empty tensor are products of its other dims and must fit too (numpy
// refuses such a shape as well).
std::optional<int64_t> checked_product(std::span<const int64_t> dims, int64_t limit = kMaxElements);

// The bytes `count` elements of `dtype` occupy (sub-byte dtypes packed), or nullopt when the
// dtype is unknown or the size does not fit an int64.
std::optional<uint64_t> checked_byte_size(DType dtype, uint64_t count);

}  // namespace maxc
