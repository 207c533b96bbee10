// float32 matmul against a right-hand side packed ahead of time: the kernel for weights.
// A weight is the same matrix on every call, so its layout is chosen once, when the model
// binds it, instead of on each call as oneDNN's gemm does (it copies panels of B every time,
// a whole extra pass over the weights at batch 1, where the product is memory-bound).
//
// The packed layout: panels of kPanel (16) columns, each panel K rows of 16 contiguous
// floats, the last panel zero-padded. A 6 x 16 tile of results stays in twelve AVX
// registers while k is walked; k is blocked so a panel's slice stays in L1 across the
// row tiles and the rows' slice in L2 across panels.
#pragma once

#include <cstdint>

#include "kernels/cpu/matmul_epilogue.h"

namespace maxc::cpu {

struct PackedGemm {
  static constexpr int64_t kPanel = 16;

  // Bytes of the packed form of a k x n matrix.
  static uint64_t packed_bytes(int64_t k, int64_t n);
  // Packs b, whose element (p, j) is b[p * stride_k + j * stride_n] (row-major [k, n] is
  // (n, 1); a transposed [n, k] is (1, k)). Runs on the team.
  static void pack(const float* b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n, float* packed);
};

// c[m, n] = epilogue(a[m, k] @ B) with B in PackedGemm's layout; rows of a and c are lda and
// ldc floats apart. `bias` has e.bias_len floats when e.has_bias. Runs on the team.
void gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b, float* c,
                 int64_t ldc, const float* bias, const MatmulEpilogue& e);

}  // namespace maxc::cpu
