/* Compile-time checks of the public layout and constants (C11 for _Static_assert).
 *
 * Built twice: against include/max_c.h (what ships today) and against
 * abi_tests/frozen/max_c_1_0.h (what 1.0 programs were compiled with); MAX_C_HEADER names
 * the header. A failing assertion is a build error that names the field or constant.
 *
 * Within ABI major 1 nothing here may change, with one exception: a minor version may
 * append fields to an options struct, which grows its sizeof (update that one line on
 * purpose, next to the new field's offset) but never moves an existing field.
 *
 * What a minor version adds (1.1: max_dim_t, MAX_DEVICE_REF_*, MAX_ATTR_*, MAX_OP_INPUT_*,
 * MAX_OP_ATTR_*) is asserted under #ifndef MAX_C_FROZEN_1_0, since the frozen header does not
 * declare it; the minor itself is pinned per header (0 frozen, 1 today). */
#include <stddef.h>
#include <stdint.h>

#include MAX_C_HEADER

#define EXPECT(cond) _Static_assert(cond, #cond)
#define EXPECT_EQ(a, b) _Static_assert((a) == (b), #a " == " #b)
/* offset and size of one member */
#define FIELD(type, member, offset, size)                                   \
  EXPECT_EQ(offsetof(type, member), offset);                                \
  EXPECT_EQ(sizeof(((type*)0)->member), size)
/* the exact type of an expression (catches int32_t turning into int64_t or unsigned) */
#define IS_TYPE(expr, type) EXPECT(_Generic((expr), type: 1, default: 0))

/* ---- the integer typedefs are int32_t, as DESIGN §2 requires of enums ---- */
IS_TYPE((max_status_code_t)0, int32_t);
IS_TYPE((max_log_level_t)0, int32_t);
IS_TYPE((max_dtype_t)0, int32_t);
IS_TYPE((max_device_kind_t)0, int32_t);
IS_TYPE(MAX_ABI_VERSION, uint32_t);
#ifndef MAX_C_FROZEN_1_0
/* 1.1 */
IS_TYPE((max_device_ref_kind_t)0, int32_t);
IS_TYPE((max_attr_kind_t)0, int32_t);
IS_TYPE((max_op_input_arity_t)0, int32_t);
IS_TYPE((max_op_attr_presence_t)0, int32_t);
#endif

/* ---- versions ---- */
EXPECT_EQ(MAX_ABI_VERSION_MAJOR, 1);
EXPECT(MAX_ABI_VERSION_MINOR >= 0);
EXPECT_EQ(MAX_ABI_VERSION, ((uint32_t)MAX_ABI_VERSION_MAJOR << 16) | (uint32_t)MAX_ABI_VERSION_MINOR);
#ifdef MAX_C_FROZEN_1_0
EXPECT_EQ(MAX_ABI_VERSION_MINOR, 0);
EXPECT_EQ(MAX_ABI_VERSION, 0x00010000u);
#else
/* Today's header: 1.8 (run options: max_run_options_t, max_model_execute_with_options). Bump
 * this line, on purpose, with the next minor. */
EXPECT_EQ(MAX_ABI_VERSION_MINOR, 8);
EXPECT_EQ(MAX_ABI_VERSION, 0x00010008u);
#endif
EXPECT_EQ(DLPACK_MAJOR_VERSION, 1);
EXPECT_EQ(DLPACK_MINOR_VERSION, 1);

/* ---- status codes ---- */
EXPECT_EQ(MAX_STATUS_OK, 0);
EXPECT_EQ(MAX_STATUS_CANCELLED, 1);
EXPECT_EQ(MAX_STATUS_UNKNOWN, 2);
EXPECT_EQ(MAX_STATUS_INVALID_ARGUMENT, 3);
EXPECT_EQ(MAX_STATUS_DEADLINE_EXCEEDED, 4);
EXPECT_EQ(MAX_STATUS_NOT_FOUND, 5);
EXPECT_EQ(MAX_STATUS_ALREADY_EXISTS, 6);
EXPECT_EQ(MAX_STATUS_PERMISSION_DENIED, 7);
EXPECT_EQ(MAX_STATUS_RESOURCE_EXHAUSTED, 8);
EXPECT_EQ(MAX_STATUS_FAILED_PRECONDITION, 9);
EXPECT_EQ(MAX_STATUS_ABORTED, 10);
EXPECT_EQ(MAX_STATUS_OUT_OF_RANGE, 11);
EXPECT_EQ(MAX_STATUS_UNIMPLEMENTED, 12);
EXPECT_EQ(MAX_STATUS_INTERNAL, 13);
EXPECT_EQ(MAX_STATUS_UNAVAILABLE, 14);
EXPECT_EQ(MAX_STATUS_DATA_LOSS, 15);
EXPECT_EQ(MAX_STATUS_UNAUTHENTICATED, 16);

/* ---- log levels ---- */
EXPECT_EQ(MAX_LOG_OFF, 0);
EXPECT_EQ(MAX_LOG_ERROR, 1);
EXPECT_EQ(MAX_LOG_WARNING, 2);
EXPECT_EQ(MAX_LOG_INFO, 3);
EXPECT_EQ(MAX_LOG_DEBUG, 4);
EXPECT_EQ(MAX_LOG_TRACE, 5);

/* ---- dtypes: MAX's own numbers ---- */
EXPECT_EQ(MAX_DTYPE_INVALID, 0);
EXPECT_EQ(MAX_DTYPE_BOOL, 1);
EXPECT_EQ(MAX_DTYPE_FLOAT4_E2M1FN, 64);
EXPECT_EQ(MAX_DTYPE_FLOAT8_E4M3FN, 75);
EXPECT_EQ(MAX_DTYPE_FLOAT8_E4M3FNUZ, 76);
EXPECT_EQ(MAX_DTYPE_FLOAT8_E5M2, 77);
EXPECT_EQ(MAX_DTYPE_FLOAT8_E5M2FNUZ, 78);
EXPECT_EQ(MAX_DTYPE_FLOAT16, 79);
EXPECT_EQ(MAX_DTYPE_BFLOAT16, 80);
EXPECT_EQ(MAX_DTYPE_FLOAT32, 81);
EXPECT_EQ(MAX_DTYPE_FLOAT64, 82);
EXPECT_EQ(MAX_DTYPE_UINT8, 134);
EXPECT_EQ(MAX_DTYPE_INT8, 135);
EXPECT_EQ(MAX_DTYPE_UINT16, 136);
EXPECT_EQ(MAX_DTYPE_INT16, 137);
EXPECT_EQ(MAX_DTYPE_UINT32, 138);
EXPECT_EQ(MAX_DTYPE_INT32, 139);
EXPECT_EQ(MAX_DTYPE_UINT64, 140);
EXPECT_EQ(MAX_DTYPE_INT64, 141);
#ifndef MAX_C_FROZEN_1_0
/* 1.7: the sub-byte integers, in MAX's integer numbering. */
EXPECT_EQ(MAX_DTYPE_UINT2, 130);
EXPECT_EQ(MAX_DTYPE_INT2, 131);
EXPECT_EQ(MAX_DTYPE_UINT4, 132);
EXPECT_EQ(MAX_DTYPE_INT4, 133);
/* 1.7: MAX's number for its exponent-only float8. */
EXPECT_EQ(MAX_DTYPE_FLOAT8_E8M0FNU, 73);
/* 1.3: quantization encodings. */
EXPECT_EQ(sizeof(max_quant_encoding_t), 4);
EXPECT_EQ(MAX_QUANT_NONE, 0);
EXPECT_EQ(MAX_QUANT_Q4_0, 1);
EXPECT_EQ(MAX_QUANT_Q4_K, 2);
EXPECT_EQ(MAX_QUANT_Q5_K, 3);
EXPECT_EQ(MAX_QUANT_Q6_K, 4);
EXPECT_EQ(MAX_QUANT_Q8_0, 5);
#endif

/* ---- device kinds and limits ---- */
EXPECT_EQ(MAX_DEVICE_KIND_CPU, 1);
EXPECT_EQ(MAX_DEVICE_KIND_CUDA, 2);
EXPECT_EQ(MAX_DEVICE_KIND_HIP, 3);
EXPECT_EQ(MAX_TENSOR_MAX_RANK, 64);

#ifndef MAX_C_FROZEN_1_0
/* ---- 1.1: graph device refs, attribute kinds, op registry arity and presence ---- */
EXPECT_EQ(MAX_DEVICE_REF_CPU, 0);
EXPECT_EQ(MAX_DEVICE_REF_GPU, 1);
EXPECT_EQ(MAX_ATTR_INT, 0);
EXPECT_EQ(MAX_ATTR_FLOAT, 1);
EXPECT_EQ(MAX_ATTR_STRING, 2);
EXPECT_EQ(MAX_ATTR_DTYPE, 3);
EXPECT_EQ(MAX_ATTR_INTS, 4);
EXPECT_EQ(MAX_ATTR_FLOATS, 5);
EXPECT_EQ(MAX_ATTR_DIMS, 6);
EXPECT_EQ(MAX_ATTR_GRAPH, 7);
EXPECT_EQ(MAX_ATTR_BOOL, 8);
EXPECT_EQ(MAX_ATTR_DEVICE, 9);
EXPECT_EQ(MAX_OP_INPUT_ONE, 0);
EXPECT_EQ(MAX_OP_INPUT_OPTIONAL, 1);
EXPECT_EQ(MAX_OP_INPUT_VARIADIC, 2);
EXPECT_EQ(MAX_OP_INPUT_ANY, 3);
EXPECT_EQ(MAX_OP_ATTR_REQUIRED, 0);
EXPECT_EQ(MAX_OP_ATTR_OPTIONAL, 1);
EXPECT_EQ(MAX_OP_ATTR_DEFAULTED, 2);
#endif

/* ---- DLPack enums and flags (the specification's values) ---- */
EXPECT_EQ(kDLCPU, 1);
EXPECT_EQ(kDLCUDA, 2);
EXPECT_EQ(kDLCUDAHost, 3);
EXPECT_EQ(kDLOpenCL, 4);
EXPECT_EQ(kDLVulkan, 7);
EXPECT_EQ(kDLMetal, 8);
EXPECT_EQ(kDLVPI, 9);
EXPECT_EQ(kDLROCM, 10);
EXPECT_EQ(kDLROCMHost, 11);
EXPECT_EQ(kDLExtDev, 12);
EXPECT_EQ(kDLCUDAManaged, 13);
EXPECT_EQ(kDLOneAPI, 14);
EXPECT_EQ(kDLWebGPU, 15);
EXPECT_EQ(kDLHexagon, 16);
EXPECT_EQ(kDLMAIA, 17);
EXPECT_EQ(kDLInt, 0);
EXPECT_EQ(kDLUInt, 1);
EXPECT_EQ(kDLFloat, 2);
EXPECT_EQ(kDLOpaqueHandle, 3);
EXPECT_EQ(kDLBfloat, 4);
EXPECT_EQ(kDLComplex, 5);
EXPECT_EQ(kDLBool, 6);
EXPECT_EQ(kDLFloat8_e3m4, 7);
EXPECT_EQ(kDLFloat8_e4m3, 8);
EXPECT_EQ(kDLFloat8_e4m3b11fnuz, 9);
EXPECT_EQ(kDLFloat8_e4m3fn, 10);
EXPECT_EQ(kDLFloat8_e4m3fnuz, 11);
EXPECT_EQ(kDLFloat8_e5m2, 12);
EXPECT_EQ(kDLFloat8_e5m2fnuz, 13);
EXPECT_EQ(kDLFloat8_e8m0fnu, 14);
EXPECT_EQ(kDLFloat6_e2m3fn, 15);
EXPECT_EQ(kDLFloat6_e3m2fn, 16);
EXPECT_EQ(kDLFloat4_e2m1fn, 17);
EXPECT_EQ(DLPACK_FLAG_BITMASK_READ_ONLY, 1);
EXPECT_EQ(DLPACK_FLAG_BITMASK_IS_COPIED, 2);
EXPECT_EQ(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 4);

/* ---- struct layout, x86-64 (LP64, SysV) ---- */
#if defined(__x86_64__) && defined(__LP64__)

EXPECT_EQ(sizeof(DLDeviceType), 4);

EXPECT_EQ(sizeof(DLPackVersion), 8);
EXPECT_EQ(_Alignof(DLPackVersion), 4);
FIELD(DLPackVersion, major, 0, 4);
FIELD(DLPackVersion, minor, 4, 4);

EXPECT_EQ(sizeof(DLDevice), 8);
EXPECT_EQ(_Alignof(DLDevice), 4);
FIELD(DLDevice, device_type, 0, 4);
FIELD(DLDevice, device_id, 4, 4);

EXPECT_EQ(sizeof(DLDataType), 4);
EXPECT_EQ(_Alignof(DLDataType), 2);
FIELD(DLDataType, code, 0, 1);
FIELD(DLDataType, bits, 1, 1);
FIELD(DLDataType, lanes, 2, 2);

EXPECT_EQ(sizeof(DLTensor), 48);
EXPECT_EQ(_Alignof(DLTensor), 8);
FIELD(DLTensor, data, 0, 8);
FIELD(DLTensor, device, 8, 8);
FIELD(DLTensor, ndim, 16, 4);
FIELD(DLTensor, dtype, 20, 4);
FIELD(DLTensor, shape, 24, 8);
FIELD(DLTensor, strides, 32, 8);
FIELD(DLTensor, byte_offset, 40, 8);

EXPECT_EQ(sizeof(DLManagedTensor), 64);
EXPECT_EQ(_Alignof(DLManagedTensor), 8);
FIELD(DLManagedTensor, dl_tensor, 0, 48);
FIELD(DLManagedTensor, manager_ctx, 48, 8);
FIELD(DLManagedTensor, deleter, 56, 8);

EXPECT_EQ(sizeof(DLManagedTensorVersioned), 80);
EXPECT_EQ(_Alignof(DLManagedTensorVersioned), 8);
FIELD(DLManagedTensorVersioned, version, 0, 8);
FIELD(DLManagedTensorVersioned, manager_ctx, 8, 8);
FIELD(DLManagedTensorVersioned, deleter, 16, 8);
FIELD(DLManagedTensorVersioned, flags, 24, 8);
FIELD(DLManagedTensorVersioned, dl_tensor, 32, 48);

/* max_context_options_t: 1.0 fields. A later minor appends after log_level (offset 28) and
 * changes the sizeof line below, never these offsets. */
EXPECT_EQ(_Alignof(max_context_options_t), 8);
FIELD(max_context_options_t, struct_size, 0, 8);
FIELD(max_context_options_t, devices, 8, 8);
FIELD(max_context_options_t, num_devices, 16, 8);
FIELD(max_context_options_t, num_threads, 24, 4);
FIELD(max_context_options_t, log_level, 28, 4);
EXPECT_EQ(sizeof(max_context_options_t), 32);

#ifndef MAX_C_FROZEN_1_0
/* max_dim_t (1.1): passed by pointer in arrays, so its size is part of the ABI too. */
EXPECT_EQ(sizeof(max_dim_t), 16);
EXPECT_EQ(_Alignof(max_dim_t), 8);
FIELD(max_dim_t, size, 0, 8);
FIELD(max_dim_t, expr, 8, 8);

/* max_compile_options_t (1.2): later minors append after plan_cache_capacity. */
EXPECT_EQ(_Alignof(max_compile_options_t), 8);
FIELD(max_compile_options_t, struct_size, 0, 8);
FIELD(max_compile_options_t, enable_fusion, 8, 4);
FIELD(max_compile_options_t, enable_constant_folding, 12, 4);
FIELD(max_compile_options_t, fold_limit_bytes, 16, 8);
FIELD(max_compile_options_t, plan_cache_capacity, 24, 8);
FIELD(max_compile_options_t, copy_inputs_to_device, 32, 4); /* 1.4 */
FIELD(max_compile_options_t, file_device, 40, 8);           /* 1.5 */
EXPECT_EQ(sizeof(max_compile_options_t), 48);

/* max_run_options_t (1.8). */
EXPECT_EQ(_Alignof(max_run_options_t), 8);
FIELD(max_run_options_t, struct_size, 0, 8);
FIELD(max_run_options_t, timeout_us, 8, 8);
FIELD(max_run_options_t, cancel_flag, 16, 8);
EXPECT_EQ(sizeof(max_run_options_t), 24);
#endif

#endif /* other targets: the values above are checked, the layouts are not pinned */

int max_c_layout_asserts_translation_unit_is_not_empty;
