#include "kernels/cpu/qmatmul.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/quant_activation.h"

namespace maxc::cpu {
namespace {

void check_k(QuantEncoding e, int64_t k) {
  const QuantEncodingInfo* info = quant_encoding_info(e);
  if (!info) fail(Code::kInvalidArgument, "qmatmul: unknown quantization encoding ", static_cast<int>(e));
  if (k < 0 || k % info->elements_per_block != 0)
    fail(Code::kInvalidArgument, "qmatmul: K = ", k, " is not a multiple of ", info->name, "'s block of ",
         info->elements_per_block);
}

}  // namespace

int64_t qmatmul_scratch_bytes(QuantEncoding e, int64_t m, int64_t k) {
  check_k(e, k);
  return m * activation_row_bytes(e, k);
}

void qmatmul(QuantEncoding e, const float* x, int64_t m, int64_t k, const uint8_t* w, int64_t n, float* y,
             void* scratch, QuantIsa isa) {
  check_k(e, k);
  if (k == 0) {
    std::fill(y, y + m * n, 0.f);
    return;
  }
  const QuantDotFn dot = quant_dot_kernel(e, isa);
  const int64_t blocks = k / quant_encoding_info(e)->elements_per_block;
  const int64_t w_row = quant_row_bytes(e, k), x_row = activation_row_bytes(e, k);
  auto* act = static_cast<uint8_t*>(scratch);
  parallel_for(m, 8 * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) quantize_activation_row(e, x + i * k, k, act + i * x_row);
  });
  // Column-major inside a chunk: one weight row stays in L1 while every activation row meets it.
  auto columns = [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j)
      for (int64_t i = 0; i < m; ++i) y[i * n + j] = dot(blocks, w + j * w_row, act + i * x_row);
  };
  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) y[i * n + j] = dot(blocks, w + j * w_row, act + i * x_row);
  };
  if (n >= 4 * static_cast<int64_t>(pool_threads()) || m < n)
    parallel_for(n, m * k, columns);
  else
    parallel_for(m, n * k, rows);
}

}  // namespace maxc::cpu
