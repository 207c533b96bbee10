// A single-threaded float32 product of small blocks, for kernels that multiply pieces of
// their operands inside their own parallel loop (attention):
//   C[m, n] = alpha * A[m, k] @ B[k, n]  (+ C when accumulate)
// row-major with leading dims lda, ldb, ldc (elements). Tiles of 6 x 16 results stay in
// registers while k is walked; GCC's vector types give AVX2+FMA code in the x86-64-v3 clone.
#pragma once

#include <cstdint>

namespace maxc::cpu {

void gemm_small_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, bool accumulate, float* c, int64_t ldc);

}  // namespace maxc::cpu
