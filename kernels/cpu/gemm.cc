#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <type_traits>

#include "base/error.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/parallel.h"

namespace maxc::cpu {
namespace {

// How an element type is stored and accumulated. Integers accumulate in uint64, where
// arithmetic wraps; truncating the sum to the type's width gives numpy's wrapped result.
template <typename T>
struct Elem {
  using Storage = T;
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
  static Acc load(T x) {
    if constexpr (std::is_floating_point_v<T>) return x;
    else return static_cast<uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(x));
  }
  static T store(Acc x) { return static_cast<T>(x); }
};

struct Float16 {};
struct BFloat16 {};

template <>
struct Elem<Float16> {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t x) { return f16_to_float(x); }
  static uint16_t store(float x) { return float_to_f16(x); }
};

template <>
struct Elem<BFloat16> {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t x) { return bf16_to_float(x); }
  static uint16_t store(float x) { return float_to_bf16(x); }
};

// A tile of kRows x kCols results is accumulated in a local array while K is walked once;
// each row of the rhs segment is loaded once per tile and used for kRows rows.
constexpr int64_t kRows = 4;
constexpr int64_t kCols = 256;

template <typename T>
struct Tile {
  using S = typename Elem<T>::Storage;
  using Acc = typename Elem<T>::Acc;

  const MatmulDims& d;
  const MatmulEpilogue& e;
  const S* bias;

  void run(const S* a, const S* b, S* c, int64_t i0, int64_t rows, int64_t j0, int64_t cols) const {
    Acc acc[kRows][kCols] = {};
    for (int64_t k = 0; k < d.k; ++k) {
      const S* brow = b + k * d.n + j0;
      for (int64_t r = 0; r < rows; ++r) {
        const Acc x = Elem<T>::load(a[(i0 + r) * d.k + k]);
        Acc* out = acc[r];
        for (int64_t j = 0; j < cols; ++j) out[j] += x * Elem<T>::load(brow[j]);
      }
    }
    for (int64_t r = 0; r < rows; ++r) store_row(acc[r], c + (i0 + r) * d.n + j0, j0, cols);
  }

  void store_row(const Acc* acc, S* out, int64_t j0, int64_t cols) const {
    for (int64_t j = 0; j < cols; ++j) {
      const S* b = e.has_bias ? bias + (e.bias_len == 1 ? 0 : j0 + j) : nullptr;
      if constexpr (std::is_integral_v<Acc>) {
        S v = Elem<T>::store(b ? acc[j] + Elem<T>::load(*b) : acc[j]);
        out[j] = activate(v, e.activation);
      } else {
        Acc v = b ? acc[j] + Elem<T>::load(*b) : acc[j];
        out[j] = Elem<T>::store(activate(v, e.activation));
      }
    }
  }
};

template <typename T>
void gemm_typed(const MatmulDims& d, const void* lhs, const void* rhs, const void* bias, void* out,
                const MatmulEpilogue& e) {
  using S = typename Elem<T>::Storage;
  const auto* a = static_cast<const S*>(lhs);
  const auto* b = static_cast<const S*>(rhs);
  auto* c = static_cast<S*>(out);
  const int64_t row_tiles = (d.m + kRows - 1) / kRows, col_tiles = (d.n + kCols - 1) / kCols;
  const int64_t tiles_per_batch = row_tiles * col_tiles;
  const Tile<T> tile{d, e, static_cast<const S*>(bias)};
  parallel_for(d.batch_count() * tiles_per_batch, kRows * kCols * std::max<int64_t>(d.k, 1),
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t batch = t / tiles_per_batch, rt = t % tiles_per_batch / col_tiles,
                                 ct = t % col_tiles;
                   const int64_t i0 = rt * kRows, j0 = ct * kCols;
                   tile.run(a + d.lhs_offset(batch), b + d.rhs_offset(batch), c + batch * d.m * d.n, i0,
                            std::min(kRows, d.m - i0), j0, std::min(kCols, d.n - j0));
                 }
               });
}

}  // namespace

bool gemm_supports(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: case DType::kBFloat16: case DType::kFloat32: case DType::kFloat64:
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

void gemm(DType dtype, const MatmulDims& d, const void* lhs, const void* rhs, const void* bias, void* out,
          const MatmulEpilogue& e) {
  switch (dtype) {
    case DType::kFloat16: return gemm_typed<Float16>(d, lhs, rhs, bias, out, e);
    case DType::kBFloat16: return gemm_typed<BFloat16>(d, lhs, rhs, bias, out, e);
    case DType::kFloat32: return gemm_typed<float>(d, lhs, rhs, bias, out, e);
    case DType::kFloat64: return gemm_typed<double>(d, lhs, rhs, bias, out, e);
    case DType::kInt8: return gemm_typed<int8_t>(d, lhs, rhs, bias, out, e);
    case DType::kInt16: return gemm_typed<int16_t>(d, lhs, rhs, bias, out, e);
    case DType::kInt32: return gemm_typed<int32_t>(d, lhs, rhs, bias, out, e);
    case DType::kInt64: return gemm_typed<int64_t>(d, lhs, rhs, bias, out, e);
    case DType::kUInt8: return gemm_typed<uint8_t>(d, lhs, rhs, bias, out, e);
    case DType::kUInt16: return gemm_typed<uint16_t>(d, lhs, rhs, bias, out, e);
    case DType::kUInt32: return gemm_typed<uint32_t>(d, lhs, rhs, bias, out, e);
    case DType::kUInt64: return gemm_typed<uint64_t>(d, lhs, rhs, bias, out, e);
    default: fail(Code::kUnimplemented, "matmul: no CPU kernel for dtype ", dtype_label(dtype));
  }
}

}  // namespace maxc::cpu
