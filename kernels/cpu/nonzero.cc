#include "kernels/cpu/nonzero.h"

#include <cstring>

namespace maxc::cpu {

namespace {

template <typename Bits>
bool nonzero_at(const void* x, int64_t i, uint64_t mask) {
  Bits b;
  std::memcpy(&b, static_cast<const uint8_t*>(x) + i * static_cast<int64_t>(sizeof(Bits)), sizeof b);
  return (static_cast<uint64_t>(b) & mask) != 0;
}

// fn(i) for every element i that is nonzero, in order, for as long as fn returns true.
template <typename Bits, typename Fn>
void each_nonzero(const void* x, int64_t n, uint64_t mask, Fn fn) {
  for (int64_t i = 0; i < n; ++i)
    if (nonzero_at<Bits>(x, i, mask) && !fn(i)) return;
}

template <typename Fn>
void each_nonzero(const void* x, int64_t n, ZeroTest t, Fn fn) {
  switch (t.bytes) {
    case 1: return each_nonzero<uint8_t>(x, n, t.mask, fn);
    case 2: return each_nonzero<uint16_t>(x, n, t.mask, fn);
    case 4: return each_nonzero<uint32_t>(x, n, t.mask, fn);
    default: return each_nonzero<uint64_t>(x, n, t.mask, fn);
  }
}

}  // namespace

std::optional<ZeroTest> zero_test_of(DType dtype) {
  const int32_t bytes = dtype_size_in_bytes(dtype);
  if (dtype_is_sub_byte(dtype) || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) return std::nullopt;
  // float8_e8m0fnu has no zero: every element is nonzero, which no mask of its bits says.
  if (dtype == DType::kFloat8E8M0Fnu) return std::nullopt;
  // Both zeros of an IEEE-style float are zero; a "fnuz" float8 has only one (its 0x80 is NaN).
  const bool signed_zero = dtype_is_float(dtype) && dtype != DType::kFloat8E4M3Fnuz && dtype != DType::kFloat8E5M2Fnuz;
  const uint64_t all = bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
  return ZeroTest{bytes, signed_zero ? all >> 1 : all};
}

int64_t count_nonzero(const void* x, int64_t n, ZeroTest test) {
  int64_t count = 0;
  each_nonzero(x, n, test, [&](int64_t) { return ++count, true; });
  return count;
}

int64_t nonzero_indices(const void* x, std::span<const int64_t> dims, ZeroTest test, int64_t* out, int64_t capacity) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t written = 0;
  each_nonzero(x, n, test, [&](int64_t i) {
    if (written == capacity) return false;
    for (int64_t a = rank; a-- > 0;) {
      out[written * rank + a] = i % dims[static_cast<size_t>(a)];
      i /= dims[static_cast<size_t>(a)];
    }
    return ++written, true;
  });
  return written < capacity ? written : count_nonzero(x, n, test);
}

}  // namespace maxc::cpu
