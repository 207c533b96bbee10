// cast_packed.cu under the emulator, compared bit for bit with the CPU's casts of the same
// bytes (kernels/cpu/cast_minifloat.h for float4, cast_packed_int.h once a packed integer is
// on either side): every code of each sub-byte dtype to every other cast dtype, and values
// that probe float4's ties and saturation and the integers' wrapping into each sub-byte
// dtype. Every cast runs at an even and an odd element count, so a last byte is half (or
// partly) used, and the outputs start as 0xAB with a guard byte past the end: a kernel that
// leaves bits of a byte unwritten, or writes past the last byte, differs from the CPU.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/cast_packed.cu"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/cpu_reference.h"
#include "gpu_emu/emu_test_util.h"
#include "kernels/cpu/cast_minifloat.h"
#include "kernels/cpu/cast_packed_int.h"

namespace maxc::gpu_emu::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// float4's codes and the ties between them (0.25, 0.75, ... 5), just off some ties, past its
// largest (6), integers around every sub-byte width's wrap, and the specials (NaN with
// either sign).
const std::vector<double> kProbes = {
    0.0,   -0.0,  0.1,   -0.1,  0.25,  0.2500001, 0.75,  0.7499999, 1.0,   1.25,  1.2500001, 1.5,   1.75,
    2.0,   2.5,   3.0,   3.5,   4.0,   5.0,       5.0001, 6.0,     6.5,   7.0,   8.0,       9.0,   -1.0,
    -1.5,  -2.0,  -2.5,  -3.0,  -4.5,  -5.0,      -6.0,   -7.0,    -8.0,  -9.0,  15.7,      16.0,  -16.2,
    127.7, -128.9, 255.5, 256.0, 300.0, -300.0,   65504.0, 1e5,    3e9,   -3e9,  9.3e18,    -9.3e18, 1.9e19,
    1e30,  3.5e38, 1e300, 1e-8,  1e-40, kInf,     -kInf, std::numeric_limits<double>::quiet_NaN(), 0.5,
    -std::numeric_limits<double>::quiet_NaN(),
    // Off a tie in double only: float64 rounds once, straight to float4, where a float ties.
    0.25 + 1e-12, 2.5 + 1e-12, -5.0 - 1e-12};

// The bytes of a cast's input: all 256 byte values of a packed or float8 dtype (every code of
// it, in every position of a byte), else the probes stored as In by the CPU.
template <class In>
std::vector<uint8_t> input_bytes() {
  std::vector<uint8_t> bytes;
  if constexpr (g::PackedFormat<In>::value || g::Float8Format<In>::value || std::is_same_v<In, g::float8_e8m0fnu>) {
    for (int c = 0; c < 256; ++c) bytes.push_back(static_cast<uint8_t>(c));
  } else {
    for (double v : kProbes) {
      const In s = cpu_store<In>(v);
      const auto* p = reinterpret_cast<const uint8_t*>(&s);
      bytes.insert(bytes.end(), p, p + sizeof s);
    }
  }
  return bytes;
}

// The CPU's cast of n elements, through the kernel the CPU engine picks for the pair.
void cpu_cast(DType src, DType dst, const void* in, void* out, int64_t n, bool saturate) {
  if (dtype_is_packed_int(src) || dtype_is_packed_int(dst)) cpu::cast_packed_int(src, dst, in, out, n, saturate);
  else cpu::cast_minifloat(src, dst, in, out, n, saturate);
}

std::string label(DType src, DType dst, int64_t n, bool saturate) {
  return std::string("cast ") + dtype_name(src) + " -> " + dtype_name(dst) + ", n=" + std::to_string(n) +
         (saturate ? "" : " (saturate=false)");
}

// The first n elements of x cast on the emulator and on the CPU; the output bytes (and one
// guard byte past them) must be equal.
template <class In, class Out>
void check_cast(const std::vector<uint8_t>& x, int64_t n, bool saturate) {
  const DType src = dtype_of<In>(), dst = dtype_of<Out>();
  const size_t out_bytes = dtype_bytes_for(dst, static_cast<uint64_t>(n));
  // 8-byte words, so that every element type is aligned in them as on a device.
  std::vector<uint64_t> in_words(x.size() / 8 + 1), got_words(out_bytes / 8 + 1), want_words(got_words.size());
  std::memcpy(in_words.data(), x.data(), x.size());
  std::memset(got_words.data(), 0xAB, got_words.size() * 8);
  std::memset(want_words.data(), 0xAB, want_words.size() * 8);
  emulate_launch(2, 32, g::cast_packed<In, Out>, reinterpret_cast<const In*>(in_words.data()),
                 reinterpret_cast<Out*>(got_words.data()), n, saturate ? 1 : 0);
  cpu_cast(src, dst, in_words.data(), want_words.data(), n, saturate);
  const auto* got = reinterpret_cast<const uint8_t*>(got_words.data());
  const auto* want = reinterpret_cast<const uint8_t*>(want_words.data());
  for (size_t b = 0; b <= out_bytes; ++b)
    ASSERT_EQ(+got[b], +want[b]) << label(src, dst, n, saturate) << ": byte " << b << " of " << out_bytes;
}

// All of In's input at its full (even) count and one element fewer, saturating or not.
template <class In, class Out>
void check_pair() {
  const std::vector<uint8_t> x = input_bytes<In>();
  const int64_t bits = dtype_size_in_bits(dtype_of<In>());
  const int64_t n = static_cast<int64_t>(x.size()) * 8 / bits;
  for (bool saturate : {true, false})
    for (int64_t count : {n, n - 1}) check_cast<In, Out>(x, count, saturate);
}

template <class In, class... Outs>
void check_from() {
  (
      [] {
        if constexpr (!std::is_same_v<In, Outs>) check_pair<In, Outs>();
      }(),
      ...);
}

template <class Out, class... Ins>
void check_to() {
  (check_pair<Ins, Out>(), ...);
}

// The whole-byte dtypes a cast takes, and the sub-byte ones.
#define WHOLE_BYTE_TYPES                                                                                          \
  g::bool8, g::u8, g::i8, g::i32, g::i64, g::u64, g::half, g::bfloat16, float, double, g::float8_e4m3fn,        \
      g::float8_e4m3fnuz, g::float8_e5m2, g::float8_e5m2fnuz, g::float8_e8m0fnu
#define SUB_BYTE_TYPES g::float4_e2m1fn, g::packed_uint2, g::packed_int2, g::packed_uint4, g::packed_int4

TEST(EmulatedPackedCast, EveryFloat4CodeToEveryDtype) { check_from<g::float4_e2m1fn, WHOLE_BYTE_TYPES, SUB_BYTE_TYPES>(); }

TEST(EmulatedPackedCast, EveryPackedIntCodeToEveryDtype) {
  check_from<g::packed_uint2, WHOLE_BYTE_TYPES, SUB_BYTE_TYPES>();
  check_from<g::packed_int2, WHOLE_BYTE_TYPES, SUB_BYTE_TYPES>();
  check_from<g::packed_uint4, WHOLE_BYTE_TYPES, SUB_BYTE_TYPES>();
  check_from<g::packed_int4, WHOLE_BYTE_TYPES, SUB_BYTE_TYPES>();
}

TEST(EmulatedPackedCast, EveryDtypeToFloat4) { check_to<g::float4_e2m1fn, WHOLE_BYTE_TYPES>(); }

TEST(EmulatedPackedCast, EveryDtypeToEachPackedInt) {
  check_to<g::packed_uint2, WHOLE_BYTE_TYPES>();
  check_to<g::packed_int2, WHOLE_BYTE_TYPES>();
  check_to<g::packed_uint4, WHOLE_BYTE_TYPES>();
  check_to<g::packed_int4, WHOLE_BYTE_TYPES>();
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
