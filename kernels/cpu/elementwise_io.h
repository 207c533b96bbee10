// Moving a block between storage and an elementwise program's registers, converting dtypes
// on the way (kernels/cpu/cast.h says what each conversion means). SIMD-cloned per compute
// type like the steps.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace maxc::cpu::elem {

// dst[i] = base[offset + i * stride] as a T, for i in [0, n). stride 0 fills, 1 streams.
void load_run(DType src, const void* base, int64_t offset, int64_t stride, int64_t n, float* dst);
void load_run(DType src, const void* base, int64_t offset, int64_t stride, int64_t n, double* dst);
void load_run(DType src, const void* base, int64_t offset, int64_t stride, int64_t n, int64_t* dst);
void load_run(DType src, const void* base, int64_t offset, int64_t stride, int64_t n, uint64_t* dst);

// base[offset + i] = src[i] converted to `dst`, for i in [0, n).
void store_run(DType dst, void* base, int64_t offset, const float* src, int64_t n);
void store_run(DType dst, void* base, int64_t offset, const double* src, int64_t n);
void store_run(DType dst, void* base, int64_t offset, const int64_t* src, int64_t n);
void store_run(DType dst, void* base, int64_t offset, const uint64_t* src, int64_t n);

// v[i] = v[i] stored as `dtype` and read back: rounds to float16, wraps to int8, 0/1 for bool.
void narrow_run(DType dtype, float* v, int64_t n);
void narrow_run(DType dtype, double* v, int64_t n);
void narrow_run(DType dtype, int64_t* v, int64_t n);
void narrow_run(DType dtype, uint64_t* v, int64_t n);

}  // namespace maxc::cpu::elem
