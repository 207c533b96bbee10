/*
 * max_c.h -- the whole public ABI of libmax_c.
 *
 * max_c is an inference engine with the concepts of Modular's MAX: a driver (devices and
 * tensors), dtypes, graphs, an engine (context = InferenceSession, compiled model, model)
 * and weights. This header is C99 and is also valid C++.
 *
 * Conventions, which hold for every function below unless its comment says otherwise:
 *
 *  - Naming: functions are max_<object>_<verb>, types max_<object>_t, constants
 *    MAX_<GROUP>_<NAME>.
 *  - Errors: a fallible function returns max_status_t*: NULL on success, otherwise a status
 *    object with a code and a message naming what was wrong. The caller owns it and frees it
 *    with max_status_release(). On failure every out_* parameter is set to NULL (or zero)
 *    when the out pointer itself is not NULL. No function aborts, asserts or throws on bad
 *    input: NULL handles, NULL out pointers and out-of-range values give
 *    MAX_STATUS_INVALID_ARGUMENT (or the code that fits better).
 *  - Queries of plain values (dtype traits, versions, status accessors, the log level)
 *    return their answer directly and are total: an unknown input gives 0, NULL or "".
 *  - Handles are opaque and reference counted. *_create and functions that return a handle
 *    through out_* give the caller one reference; *_retain adds one, *_release drops one and
 *    frees the object at zero. *_release(NULL) does nothing. Children keep their parents
 *    alive (a tensor its device), so handles may be released in any order.
 *  - Threads: context, device and tensor handles may be used from many threads at once,
 *    except that writing a tensor's contents while another thread reads them is the caller's
 *    race. tensor_list and option structs need external synchronization. Deleters and
 *    release callbacks may run on any thread.
 *  - Options structs start with size_t struct_size. Fill them with their *_init function,
 *    which writes defaults for the size you pass. The library reads (and *_init writes) only
 *    the first min(struct_size, the library's sizeof) bytes, never past either: an older
 *    (smaller) struct gets defaults for the fields it lacks, and the tail of a newer (larger)
 *    one, fields this library does not know, is ignored (an older library cannot honour
 *    them; check max_abi_version() before relying on a newer field). struct_size must not
 *    exceed the size of the struct you pass.
 *  - Versioning: within ABI major 1 the library only adds (functions, appended struct
 *    fields, appended enum values). Call max_check_abi(MAX_ABI_VERSION) once at start-up.
 */
#ifndef MAX_C_H_
#define MAX_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(MAX_C_BUILDING_LIBRARY)
#define MAX_API __attribute__((visibility("default")))
#else
#define MAX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
 * DLPack 1.1 declarations (https://dmlc.github.io/dlpack), under the specification's own
 * include guard: a program that includes the real dlpack.h first still compiles.
 * ====================================================================================== */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* DLPACK_DLPACK_H_ */

/* ======================================================================================
 * Versions
 * ====================================================================================== */

#define MAX_ABI_VERSION_MAJOR 1
#define MAX_ABI_VERSION_MINOR 8
/* The version this header describes, packed as (major << 16) | minor. */
#define MAX_ABI_VERSION ((uint32_t)((MAX_ABI_VERSION_MAJOR << 16) | MAX_ABI_VERSION_MINOR))

typedef struct max_status_t max_status_t;

/* The ABI version the loaded library implements, packed like MAX_ABI_VERSION.
 * Thread-safe. */
MAX_API uint32_t max_abi_version(void);

/* The library's release version, e.g. "1.0.0". Static storage. Thread-safe. */
MAX_API const char* max_version_string(void);

/* Checks that the loaded library can serve a program built against header_version (pass
 * MAX_ABI_VERSION). Fails with MAX_STATUS_FAILED_PRECONDITION when the majors differ or the
 * library's minor is older than the header's, with a message such as "libmax_c ABI 1.0 is
 * older than the header 1.4 this program was built with". Thread-safe. */
MAX_API max_status_t* max_check_abi(uint32_t header_version);

/* ======================================================================================
 * Status
 * ====================================================================================== */

typedef int32_t max_status_code_t;
#define MAX_STATUS_OK 0
#define MAX_STATUS_CANCELLED 1
#define MAX_STATUS_UNKNOWN 2
#define MAX_STATUS_INVALID_ARGUMENT 3
#define MAX_STATUS_DEADLINE_EXCEEDED 4
#define MAX_STATUS_NOT_FOUND 5
#define MAX_STATUS_ALREADY_EXISTS 6
#define MAX_STATUS_PERMISSION_DENIED 7
#define MAX_STATUS_RESOURCE_EXHAUSTED 8
#define MAX_STATUS_FAILED_PRECONDITION 9
#define MAX_STATUS_ABORTED 10
#define MAX_STATUS_OUT_OF_RANGE 11
#define MAX_STATUS_UNIMPLEMENTED 12
#define MAX_STATUS_INTERNAL 13
#define MAX_STATUS_UNAVAILABLE 14
#define MAX_STATUS_DATA_LOSS 15
#define MAX_STATUS_UNAUTHENTICATED 16

/* The status's code; MAX_STATUS_OK for NULL (success). Thread-safe. */
MAX_API max_status_code_t max_status_code(const max_status_t* status);

/* The status's UTF-8 message; "" for NULL. The string lives as long as the status.
 * Thread-safe. */
MAX_API const char* max_status_message(const max_status_t* status);

/* The code's upper-case name ("INVALID_ARGUMENT"), "UNKNOWN_CODE" for a value past the
 * table. Static storage. Thread-safe. */
MAX_API const char* max_status_code_name(max_status_code_t code);

/* Frees a status returned by any function. NULL does nothing. A status may be freed from any
 * thread, once. */
MAX_API void max_status_release(max_status_t* status);

/* ======================================================================================
 * Logging: leveled, to stderr, quiet (MAX_LOG_WARNING) by default. The environment
 * variable MAX_C_LOG_LEVEL (a number or a name: "off", "error", "warning", "info",
 * "debug", "trace") sets the starting level.
 * ====================================================================================== */

typedef int32_t max_log_level_t;
#define MAX_LOG_OFF 0
#define MAX_LOG_ERROR 1
#define MAX_LOG_WARNING 2
#define MAX_LOG_INFO 3
#define MAX_LOG_DEBUG 4
#define MAX_LOG_TRACE 5

/* Sets the process-wide level; messages above it are not printed. Fails with
 * INVALID_ARGUMENT outside [MAX_LOG_OFF, MAX_LOG_TRACE]. Thread-safe. */
MAX_API max_status_t* max_log_set_level(max_log_level_t level);

/* The process-wide level. Thread-safe. */
MAX_API max_log_level_t max_log_level(void);

/* ======================================================================================
 * DType: MAX's element types, with MAX's own numbers.
 *
 * ABI 1.7 added UINT2, INT2, UINT4, INT4 (130-133) and FLOAT8_E8M0FNU (73), with no new
 * function: to a library older than 1.7 they are unknown codes (max_dtype_is_valid gives 0,
 * and calls given them fail), so a program that uses them needs a 1.7 library, which
 * max_check_abi(MAX_ABI_VERSION) with this header checks.
 *
 * UINT2, INT2, UINT4 and INT4 extend MAX's set with MAX's own numbering of integers
 * (0x80 | log2(bits) << 1 | signed, as UINT8 = 134 and INT8 = 135). Like FLOAT4_E2M1FN they
 * are packed, the earliest element in the lowest bits of its byte (as ONNX packs them, and
 * DLPack, where they are kDLUInt/kDLInt with 2 or 4 bits), and size_in_bytes rounds them up
 * to 1.
 *
 * FLOAT8_E8M0FNU (73, MAX's number) is the MX formats' scale type: 8 exponent bits, no sign and
 * no mantissa, so code e is 2^(e - 127) and 0xFF is NaN; it has no zero and no infinity.
 * It is a float and a float8 (max_dtype_is_float8), and DLPack's kDLFloat8_e8m0fnu. A cast to
 * it is ONNX Cast's with round_mode "up": the sign is dropped, a float32 exponent with any
 * mantissa bit set goes up one, past 2^127 it stays 2^127 (NaN when the cast's `saturate` is
 * false), zero is 2^-127, and infinity and NaN are NaN.
 * ====================================================================================== */

typedef int32_t max_dtype_t;
#define MAX_DTYPE_INVALID 0
#define MAX_DTYPE_BOOL 1
#define MAX_DTYPE_FLOAT4_E2M1FN 64
#define MAX_DTYPE_FLOAT8_E8M0FNU 73
#define MAX_DTYPE_FLOAT8_E4M3FN 75
#define MAX_DTYPE_FLOAT8_E4M3FNUZ 76
#define MAX_DTYPE_FLOAT8_E5M2 77
#define MAX_DTYPE_FLOAT8_E5M2FNUZ 78
#define MAX_DTYPE_FLOAT16 79
#define MAX_DTYPE_BFLOAT16 80
#define MAX_DTYPE_FLOAT32 81
#define MAX_DTYPE_FLOAT64 82
#define MAX_DTYPE_UINT2 130
#define MAX_DTYPE_INT2 131
#define MAX_DTYPE_UINT4 132
#define MAX_DTYPE_INT4 133
#define MAX_DTYPE_UINT8 134
#define MAX_DTYPE_INT8 135
#define MAX_DTYPE_UINT16 136
#define MAX_DTYPE_INT16 137
#define MAX_DTYPE_UINT32 138
#define MAX_DTYPE_INT32 139
#define MAX_DTYPE_UINT64 140
#define MAX_DTYPE_INT64 141

/* Traits of a dtype. All are thread-safe and total: an unknown code gives 0 (or NULL for
 * the name). Predicates return 1 or 0. size_in_bytes rounds sub-byte types up (float4_e2m1fn
 * has 4 bits and 1 byte); tensors of sub-byte types are packed. */
MAX_API int32_t max_dtype_is_valid(max_dtype_t dtype);
MAX_API int32_t max_dtype_size_in_bits(max_dtype_t dtype);
MAX_API int32_t max_dtype_size_in_bytes(max_dtype_t dtype);
MAX_API int32_t max_dtype_align(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_float(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_float8(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_half(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_integral(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_signed_integral(max_dtype_t dtype);
MAX_API int32_t max_dtype_is_unsigned_integral(max_dtype_t dtype);

/* MAX's member name ("float32"), static storage; NULL for an unknown code. */
MAX_API const char* max_dtype_name(max_dtype_t dtype);

/* Looks a dtype up by MAX's member name. NOT_FOUND (naming it) when there is none. */
MAX_API max_status_t* max_dtype_from_name(const char* name, max_dtype_t* out_dtype);

/* ======================================================================================
 * Devices
 * ====================================================================================== */

typedef struct max_device_t max_device_t;

typedef int32_t max_device_kind_t;
#define MAX_DEVICE_KIND_CPU 1
#define MAX_DEVICE_KIND_CUDA 2
#define MAX_DEVICE_KIND_HIP 3

/* Number of accelerators this process can use, CUDA's (libcuda) and HIP's (libamdhip64)
 * together; 0 on a machine without one. The first call loads the drivers. Thread-safe. */
MAX_API max_status_t* max_accelerator_count(int32_t* out_count);

/* Gets the device of a kind and id. Devices are singletons per (kind, id): asking twice
 * gives two references to one object. For the CPU, id -1 and 0 both mean the host.
 * For an accelerator, id -1 means the first one; CUDA and HIP devices are numbered apart.
 * A graph's gpu:<id> is the CUDA device <id> where the process has CUDA devices, else the
 * HIP device <id>. NOT_FOUND when no such device exists,
 * INVALID_ARGUMENT for an unknown kind. Thread-safe. */
MAX_API max_status_t* max_device_create(max_device_kind_t kind, int32_t id,
                                        max_device_t** out_device);
MAX_API void max_device_retain(max_device_t* device);
MAX_API void max_device_release(max_device_t* device);

MAX_API max_status_t* max_device_kind(const max_device_t* device, max_device_kind_t* out_kind);
/* Zero-based; always 0 for the CPU. */
MAX_API max_status_t* max_device_id(const max_device_t* device, int32_t* out_id);
/* "cpu" or "gpu"; the string lives as long as the device. */
MAX_API max_status_t* max_device_label(const max_device_t* device, const char** out_label);
/* "cpu", "cuda" or "hip"; the string lives as long as the device. */
MAX_API max_status_t* max_device_api(const max_device_t* device, const char** out_api);
/* 1 for the host. */
MAX_API max_status_t* max_device_is_host(const max_device_t* device, int32_t* out_is_host);
/* Waits for every operation queued on the device. */
MAX_API max_status_t* max_device_synchronize(max_device_t* device);

/* ======================================================================================
 * Context (MAX's InferenceSession): the devices and the thread team models run on.
 * ====================================================================================== */

typedef struct max_context_t max_context_t;

typedef struct max_context_options_t {
  size_t struct_size;
  /* Devices the context may use; NULL (with num_devices 0) means the CPU alone. The
   * context retains them. */
  max_device_t* const* devices;
  size_t num_devices;
  /* Threads of the context's pool, the calling thread included (num_threads - 1 workers),
   * shared by every execute on the context; 0 means the MAX_C_NUM_THREADS environment
   * variable when set (INVALID_ARGUMENT at create when it is not a count), else one per
   * available core. */
  int32_t num_threads;
  /* The process-wide log level to set when the context is created, or -1 to leave it. */
  max_log_level_t log_level;
} max_context_options_t;

/* Fills the first struct_size bytes of *options with defaults and sets options->struct_size.
 * struct_size must be at least sizeof(size_t); pass sizeof(max_context_options_t). */
MAX_API max_status_t* max_context_options_init(max_context_options_t* options,
                                               size_t struct_size);

/* Creates a context. options may be NULL for defaults. INVALID_ARGUMENT for a negative
 * thread count, a NULL device in the list, an unknown log level, or a newer struct whose
 * unknown tail is not zero. Thread-safe. */
MAX_API max_status_t* max_context_create(const max_context_options_t* options,
                                         max_context_t** out_context);
MAX_API void max_context_retain(max_context_t* context);
MAX_API void max_context_release(max_context_t* context);

MAX_API max_status_t* max_context_num_threads(const max_context_t* context,
                                              int32_t* out_num_threads);
MAX_API max_status_t* max_context_num_devices(const max_context_t* context,
                                              size_t* out_num_devices);
/* The index-th device (a new reference). OUT_OF_RANGE past the end. */
MAX_API max_status_t* max_context_device(const max_context_t* context, size_t index,
                                         max_device_t** out_device);

/* ======================================================================================
 * Tensors (MAX's driver Tensor/Buffer): storage on a device plus dtype, shape and strides.
 *
 * Strides count elements, like DLPack's. Shapes are int64 arrays of `rank` entries, each
 * >= 0; rank 0 is a scalar with one element. The storage is shared by views.
 * ====================================================================================== */

typedef struct max_tensor_t max_tensor_t;
typedef struct max_tensor_list_t max_tensor_list_t;
typedef struct max_buffer_t max_buffer_t;

/* Called once when the library no longer needs borrowed memory, with the user_data given
 * alongside it. It may run on any thread. */
typedef void (*max_release_fn)(void* user_data);

/* The most dimensions a tensor may have. */
#define MAX_TENSOR_MAX_RANK 64

/* A new zero-filled contiguous tensor. device NULL means the CPU. INVALID_ARGUMENT for an
 * unknown dtype, a rank outside [0, MAX_TENSOR_MAX_RANK], dims NULL with rank > 0, or a
 * negative dim; RESOURCE_EXHAUSTED when the dims (zeros aside) multiply to more than
 * 2^57 - 1 elements, a limit that keeps every size in bytes and bits within int64, or when
 * memory runs out. */
MAX_API max_status_t* max_tensor_create(max_device_t* device, max_dtype_t dtype,
                                        const int64_t* dims, int32_t rank,
                                        max_tensor_t** out_tensor);

/* A new contiguous tensor holding a copy of `data`, which is contiguous row-major host
 * memory of exactly `num_bytes` bytes (INVALID_ARGUMENT otherwise, stating both sizes). */
MAX_API max_status_t* max_tensor_create_from_host(max_device_t* device, max_dtype_t dtype,
                                                  const int64_t* dims, int32_t rank,
                                                  const void* data, size_t num_bytes,
                                                  max_tensor_t** out_tensor);

/* A CPU tensor over caller-owned host memory, without copying. strides NULL means
 * contiguous. read_only 1 makes every write through the library fail. On success the library
 * calls release(user_data) exactly once, when the last view of the memory goes away; on
 * failure it never calls it and the memory stays the caller's. release may be NULL. */
MAX_API max_status_t* max_tensor_create_borrowed(max_dtype_t dtype, const int64_t* dims,
                                                 int32_t rank, const int64_t* strides,
                                                 void* data, int32_t read_only,
                                                 max_release_fn release, void* user_data,
                                                 max_tensor_t** out_tensor);

MAX_API void max_tensor_retain(max_tensor_t* tensor);
MAX_API void max_tensor_release(max_tensor_t* tensor);

MAX_API max_status_t* max_tensor_dtype(const max_tensor_t* tensor, max_dtype_t* out_dtype);
MAX_API max_status_t* max_tensor_rank(const max_tensor_t* tensor, int32_t* out_rank);
/* The dims and strides arrays (rank entries; NULL for rank 0) live as long as the tensor. */
MAX_API max_status_t* max_tensor_dims(const max_tensor_t* tensor, const int64_t** out_dims);
MAX_API max_status_t* max_tensor_strides(const max_tensor_t* tensor,
                                         const int64_t** out_strides);
MAX_API max_status_t* max_tensor_num_elements(const max_tensor_t* tensor,
                                              int64_t* out_num_elements);
/* Bytes the elements occupy when contiguous. */
MAX_API max_status_t* max_tensor_byte_size(const max_tensor_t* tensor, size_t* out_bytes);
/* The tensor's device (a new reference). */
MAX_API max_status_t* max_tensor_device(const max_tensor_t* tensor, max_device_t** out_device);
MAX_API max_status_t* max_tensor_is_contiguous(const max_tensor_t* tensor,
                                               int32_t* out_is_contiguous);
MAX_API max_status_t* max_tensor_is_read_only(const max_tensor_t* tensor,
                                              int32_t* out_is_read_only);

/* The address of the first element of a host tensor, valid while the tensor lives.
 * FAILED_PRECONDITION for a device tensor. */
MAX_API max_status_t* max_tensor_data(const max_tensor_t* tensor, const void** out_data);
/* As max_tensor_data, for writing: FAILED_PRECONDITION for a read-only tensor. */
MAX_API max_status_t* max_tensor_mutable_data(max_tensor_t* tensor, void** out_data);

/* Copies the elements, in row-major order, into `dst` of exactly max_tensor_byte_size()
 * bytes (INVALID_ARGUMENT naming both sizes otherwise). Works for strided views. */
MAX_API max_status_t* max_tensor_to_host(const max_tensor_t* tensor, void* dst,
                                         size_t num_bytes);

/* A deep contiguous copy on `device` (NULL: the tensor's own device). */
MAX_API max_status_t* max_tensor_copy(const max_tensor_t* tensor, max_device_t* device,
                                      max_tensor_t** out_tensor);

/* Copies src's elements into dst (MAX's inplace_copy_from): same dtype and shape, else
 * INVALID_ARGUMENT; dst read-only gives FAILED_PRECONDITION. Either may be strided. */
MAX_API max_status_t* max_tensor_copy_from(max_tensor_t* dst, const max_tensor_t* src);

/* A view of a contiguous tensor's memory with another dtype and/or shape (MAX's view).
 * The byte size must stay the same. dims NULL with rank -1 keeps the shape (only valid when
 * the element size is unchanged). INVALID_ARGUMENT when the tensor is not contiguous or the
 * sizes differ, naming both. */
MAX_API max_status_t* max_tensor_view(const max_tensor_t* tensor, max_dtype_t dtype,
                                      const int64_t* dims, int32_t rank,
                                      max_tensor_t** out_tensor);

/* ---- tensor lists: ordered tensor handles, e.g. a model's outputs ---- */

MAX_API max_status_t* max_tensor_list_create(max_tensor_list_t** out_list);
MAX_API void max_tensor_list_retain(max_tensor_list_t* list);
MAX_API void max_tensor_list_release(max_tensor_list_t* list);
/* Appends a reference to tensor (the list retains it). */
MAX_API max_status_t* max_tensor_list_append(max_tensor_list_t* list, max_tensor_t* tensor);
MAX_API max_status_t* max_tensor_list_size(const max_tensor_list_t* list, size_t* out_size);
/* The index-th tensor (a new reference). OUT_OF_RANGE past the end. */
MAX_API max_status_t* max_tensor_list_get(const max_tensor_list_t* list, size_t index,
                                          max_tensor_t** out_tensor);

/* ---- buffers: immutable owned bytes, e.g. a serialized graph ----
 * The bytes are always followed by a NUL that the size does not count, so a text buffer
 * reads as a C string. */

/* A buffer holding a copy of size bytes at data (data may be NULL only when size is 0). */
MAX_API max_status_t* max_buffer_create(const void* data, size_t size,
                                        max_buffer_t** out_buffer);
MAX_API void max_buffer_retain(max_buffer_t* buffer);
MAX_API void max_buffer_release(max_buffer_t* buffer);
/* The bytes, valid while the buffer lives. */
MAX_API max_status_t* max_buffer_data(const max_buffer_t* buffer, const void** out_data);
MAX_API max_status_t* max_buffer_size(const max_buffer_t* buffer, size_t* out_size);

/* ======================================================================================
 * DLPack exchange
 *
 * Export gives the consumer a DLManagedTensorVersioned (or the unversioned DLManagedTensor)
 * that shares the tensor's memory; shape and strides are always filled; a read-only tensor
 * sets DLPACK_FLAG_BITMASK_READ_ONLY. The consumer calls its deleter once when done; the
 * tensor handle may be released before or after. Calling the deleter of a struct the
 * library exported a second time does nothing rather than freeing twice (the library keeps
 * track of which of its exports are alive); the struct itself is gone after the first call.
 *
 * Import takes a producer's struct. On success the new tensor owns it and calls its deleter
 * exactly once, when the last view of the memory goes away. On failure nothing is taken:
 * the struct and its deleter stay the caller's. NULL strides mean row-major contiguous;
 * shapes of more than 2^57 - 1 elements, and strides that reach further than that, are
 * refused (RESOURCE_EXHAUSTED, INVALID_ARGUMENT).
 * DLPACK_FLAG_BITMASK_READ_ONLY makes the tensor read-only. Unsupported major versions,
 * devices, dtypes or lanes give INVALID_ARGUMENT (or UNIMPLEMENTED) naming them.
 * ====================================================================================== */

MAX_API max_status_t* max_tensor_to_dlpack(max_tensor_t* tensor,
                                           DLManagedTensorVersioned** out_managed);
MAX_API max_status_t* max_tensor_from_dlpack(DLManagedTensorVersioned* managed,
                                             max_tensor_t** out_tensor);
MAX_API max_status_t* max_tensor_to_dlpack_unversioned(max_tensor_t* tensor,
                                                       DLManagedTensor** out_managed);
MAX_API max_status_t* max_tensor_from_dlpack_unversioned(DLManagedTensor* managed,
                                                         max_tensor_t** out_tensor);

/* The DLPack device of a tensor, for __dlpack_device__. */
MAX_API max_status_t* max_tensor_dlpack_device(const max_tensor_t* tensor,
                                               DLDevice* out_device);

/* ======================================================================================
 * Graphs (MAX's max.graph), ABI 1.1
 *
 * A graph has typed named inputs, ops added through one generic entry point
 * (max_graph_add_op with an attrs handle), constants, named external weights, named outputs,
 * and subgraphs. Every failed call leaves the graph as it was. Values (max_value_t) belong to
 * their graph: they are never released and stay valid as long as the graph. A graph and the
 * attrs handles need external synchronization; the op registry is immutable and thread-safe.
 * ====================================================================================== */

typedef struct max_graph_t max_graph_t;
typedef struct max_value_t max_value_t;
typedef struct max_attrs_t max_attrs_t;

/* A dimension as a caller writes it: `size` when `expr` is NULL; otherwise `expr` is a
 * symbol ("batch") or an expression of symbols and integers with + - * // and parentheses
 * ("batch * 5", "(seq + 1) // 2"), which the graph keeps in a canonical form. */
typedef struct max_dim_t {
  int64_t size;
  const char* expr;
} max_dim_t;

/* Where a graph value lives (MAX's DeviceRef): a kind and an id. */
typedef int32_t max_device_ref_kind_t;
#define MAX_DEVICE_REF_CPU 0
#define MAX_DEVICE_REF_GPU 1

/* The kinds of op attributes, for max_attrs_set_* and registry introspection. */
typedef int32_t max_attr_kind_t;
#define MAX_ATTR_INT 0
#define MAX_ATTR_FLOAT 1
#define MAX_ATTR_STRING 2
#define MAX_ATTR_DTYPE 3
#define MAX_ATTR_INTS 4
#define MAX_ATTR_FLOATS 5
#define MAX_ATTR_DIMS 6
#define MAX_ATTR_GRAPH 7
#define MAX_ATTR_BOOL 8
#define MAX_ATTR_DEVICE 9

/* An empty graph. name NULL means "main". */
MAX_API max_status_t* max_graph_create(const char* name, max_graph_t** out_graph);
MAX_API void max_graph_retain(max_graph_t* graph);
MAX_API void max_graph_release(max_graph_t* graph);

/* The graph's name; lives as long as the graph. */
MAX_API max_status_t* max_graph_name(const max_graph_t* graph, const char** out_name);

/* Adds a named input of type tensor<dims, dtype, device>. ALREADY_EXISTS when the name is
 * taken; INVALID_ARGUMENT for an unknown dtype, a bad dim expression or device. */
MAX_API max_status_t* max_graph_add_input(max_graph_t* graph, const char* name,
                                          max_dtype_t dtype, const max_dim_t* dims,
                                          int32_t rank, max_device_ref_kind_t device_kind,
                                          int32_t device_id, max_value_t** out_value);

/* Adds a constant holding a copy of a host tensor's elements (strided tensors are packed).
 * The constant is placed on the host (cpu:0). */
MAX_API max_status_t* max_graph_add_constant(max_graph_t* graph, const max_tensor_t* tensor,
                                             max_value_t** out_value);
/* ABI 1.5. As max_graph_add_constant, placed on device_kind:device_id (a GPU graph's scalars
 * and tables live on its GPU: a graph does not span devices). The tensor may be on any
 * device; its elements are read now. INVALID_ARGUMENT for a bad device kind or id. */
MAX_API max_status_t* max_graph_add_constant_on(max_graph_t* graph, const max_tensor_t* tensor,
                                                max_device_ref_kind_t device_kind,
                                                int32_t device_id, max_value_t** out_value);

/* Declares the external weight `name`, bound when a model is initialized. Declaring it again
 * with the same type gives the same value; with another type INVALID_ARGUMENT. */
MAX_API max_status_t* max_graph_add_weight(max_graph_t* graph, const char* name,
                                           max_dtype_t dtype, const max_dim_t* dims,
                                           int32_t rank, max_device_ref_kind_t device_kind,
                                           int32_t device_id, max_value_t** out_value);

/* Adds op `op` (version 0: the newest) on `inputs` with `attrs` (NULL: none), checking arity,
 * dtypes, shapes and attributes, and writes its outputs' values to `outputs` (room for
 * `capacity`) and their count to *out_num_outputs. NOT_FOUND for an unknown op;
 * INVALID_ARGUMENT naming the op, the input and the mismatch; OUT_OF_RANGE when capacity is
 * too small: the op is then not added, and, unlike other failures, *out_num_outputs holds
 * the count needed (so NULL with capacity 0 asks for the count alone). */
MAX_API max_status_t* max_graph_add_op(max_graph_t* graph, const char* op, int32_t version,
                                       max_value_t* const* inputs, size_t num_inputs,
                                       const max_attrs_t* attrs, max_value_t** outputs,
                                       size_t capacity, size_t* out_num_outputs);

/* Sets the graph's outputs. names may be NULL (or hold NULLs) for "output<i>". */
MAX_API max_status_t* max_graph_set_outputs(max_graph_t* graph, max_value_t* const* values,
                                            const char* const* names, size_t num_outputs);

/* Appends a copy of `subgraph` as a subgraph of `graph` (for control flow and `call`) and
 * gives its index, which a MAX_ATTR_GRAPH attribute refers to. Later changes to `subgraph`
 * do not reach the copy, so finish it (inputs, ops, outputs) first.
 *
 * The ops that run subgraphs (ABI 1.6) pass them every value they use: a subgraph sees
 * nothing of the graph around it, and its inputs, in order, have exactly the types of the
 * op's operands. Weights a subgraph declares are the model's weights, like the main graph's.
 *   cond(pred, args...)      then_graph, else_graph: pred is a rank-0 bool; both branches
 *                            give outputs of the same types, which are the op's.
 *   while_loop(values...)    predicate (gives one rank-0 bool), body (gives the values'
 *                            types): while predicate(v) holds, v = body(v).
 *   call(args...)            graph, prefix: inlined at compile; the callee's weights are
 *                            named prefix + name.
 * Both engines run all three. On a GPU, cond and while_loop read each predicate on the host,
 * so a call waits for the device there, and a captured model cannot hold them. */
MAX_API max_status_t* max_graph_add_subgraph(max_graph_t* graph, const max_graph_t* subgraph,
                                             int64_t* out_index);

MAX_API max_status_t* max_graph_num_inputs(const max_graph_t* graph, size_t* out_count);
/* The index-th input's value (owned by the graph) and name (lives as long as the graph). */
MAX_API max_status_t* max_graph_input(const max_graph_t* graph, size_t index,
                                      max_value_t** out_value, const char** out_name);
MAX_API max_status_t* max_graph_num_outputs(const max_graph_t* graph, size_t* out_count);
MAX_API max_status_t* max_graph_output(const max_graph_t* graph, size_t index,
                                       max_value_t** out_value, const char** out_name);
MAX_API max_status_t* max_graph_num_ops(const max_graph_t* graph, size_t* out_count);

/* Re-checks the whole graph (every op re-inferred). */
MAX_API max_status_t* max_graph_verify(const max_graph_t* graph);

/* ---- values ---- */

MAX_API max_status_t* max_value_dtype(const max_value_t* value, max_dtype_t* out_dtype);
MAX_API max_status_t* max_value_rank(const max_value_t* value, int32_t* out_rank);
/* The index-th dim: *out_size is its size when static, else -1; *out_expr (may be NULL if
 * unwanted) is its canonical text ("10", "batch", "batch * 5"), living as long as the graph. */
MAX_API max_status_t* max_value_dim(const max_value_t* value, int32_t index, int64_t* out_size,
                                    const char** out_expr);
MAX_API max_status_t* max_value_device(const max_value_t* value,
                                       max_device_ref_kind_t* out_kind, int32_t* out_id);
/* The value's type as text: "tensor<[batch, 10], float32, cpu:0>" (lives as long as the
 * graph). */
MAX_API max_status_t* max_value_type_string(const max_value_t* value, const char** out_text);

/* ---- attributes: a name -> typed value map passed to max_graph_add_op ---- */

MAX_API max_status_t* max_attrs_create(max_attrs_t** out_attrs);
MAX_API void max_attrs_retain(max_attrs_t* attrs);
MAX_API void max_attrs_release(max_attrs_t* attrs);
/* Each setter copies its arguments and replaces an earlier value of the same name. */
MAX_API max_status_t* max_attrs_set_int(max_attrs_t* attrs, const char* name, int64_t value);
MAX_API max_status_t* max_attrs_set_float(max_attrs_t* attrs, const char* name, double value);
MAX_API max_status_t* max_attrs_set_bool(max_attrs_t* attrs, const char* name, int32_t value);
MAX_API max_status_t* max_attrs_set_string(max_attrs_t* attrs, const char* name,
                                           const char* value);
MAX_API max_status_t* max_attrs_set_dtype(max_attrs_t* attrs, const char* name,
                                          max_dtype_t value);
MAX_API max_status_t* max_attrs_set_ints(max_attrs_t* attrs, const char* name,
                                         const int64_t* values, size_t count);
MAX_API max_status_t* max_attrs_set_floats(max_attrs_t* attrs, const char* name,
                                           const double* values, size_t count);
MAX_API max_status_t* max_attrs_set_dims(max_attrs_t* attrs, const char* name,
                                         const max_dim_t* dims, size_t count);
MAX_API max_status_t* max_attrs_set_graph(max_attrs_t* attrs, const char* name,
                                          int64_t subgraph_index);
MAX_API max_status_t* max_attrs_set_device(max_attrs_t* attrs, const char* name,
                                           max_device_ref_kind_t kind, int32_t id);

/* ---- the op registry, for bindings that check calls and generate helpers ---- */

typedef int32_t max_op_input_arity_t;
#define MAX_OP_INPUT_ONE 0
#define MAX_OP_INPUT_OPTIONAL 1
#define MAX_OP_INPUT_VARIADIC 2
/* Zero or more values; only last (ABI 1.6: the operands of cond and call). */
#define MAX_OP_INPUT_ANY 3

typedef int32_t max_op_attr_presence_t;
#define MAX_OP_ATTR_REQUIRED 0
#define MAX_OP_ATTR_OPTIONAL 1
#define MAX_OP_ATTR_DEFAULTED 2

/* Number of registered (op, version) pairs, listed sorted by name then version. */
MAX_API max_status_t* max_op_count(size_t* out_count);
/* The index-th op's name (static storage) and version. */
MAX_API max_status_t* max_op_at(size_t index, const char** out_name, int32_t* out_version);
/* Inputs of op `name` (version 0: newest). NOT_FOUND for an unknown op. */
MAX_API max_status_t* max_op_num_inputs(const char* name, int32_t version, size_t* out_count);
MAX_API max_status_t* max_op_input(const char* name, int32_t version, size_t index,
                                   const char** out_input_name,
                                   max_op_input_arity_t* out_arity);
MAX_API max_status_t* max_op_num_attrs(const char* name, int32_t version, size_t* out_count);
MAX_API max_status_t* max_op_attr(const char* name, int32_t version, size_t index,
                                  const char** out_attr_name, max_attr_kind_t* out_kind,
                                  max_op_attr_presence_t* out_presence);

/* ---- serialization (the MAXG format) and printing ---- */

/* The graph in the MAXG format, in a new buffer. */
MAX_API max_status_t* max_graph_serialize(const max_graph_t* graph, max_buffer_t** out_buffer);
/* Reads a MAXG image (copied as needed). DATA_LOSS for a truncated or corrupt image,
 * INVALID_ARGUMENT for a well-formed but invalid graph. */
MAX_API max_status_t* max_graph_deserialize(const void* data, size_t size,
                                            max_graph_t** out_graph);
/* Writes the graph to a MAXG file; large constants stream to its aligned data segment. */
MAX_API max_status_t* max_graph_save(const max_graph_t* graph, const char* path);
/* Loads a MAXG file; large constants stay in the mmap'd file. NOT_FOUND when the file does
 * not exist; DATA_LOSS / INVALID_ARGUMENT as for max_graph_deserialize. */
MAX_API max_status_t* max_graph_load(const char* path, max_graph_t** out_graph);

/* The graph as readable text (NUL-terminated; the size excludes the NUL). */
MAX_API max_status_t* max_graph_to_text(const max_graph_t* graph, max_buffer_t** out_text);
/* The graph in Graphviz DOT (NUL-terminated; the size excludes the NUL). */
MAX_API max_status_t* max_graph_to_dot(const max_graph_t* graph, max_buffer_t** out_dot);

/* ======================================================================================
 * Engine (ABI 1.2): compile a graph into a compiled model, bind weights to make a model,
 * execute it (MAX's InferenceSession.load and Model.execute).
 *
 * compiled_model and model are immutable to their users and thread-safe: many threads may
 * execute one model at once, each call with its own working memory. A model keeps its
 * compiled model alive, and a compiled model its context.
 * ====================================================================================== */

typedef struct max_compiled_model_t max_compiled_model_t;
typedef struct max_model_t max_model_t;
typedef struct max_tensor_spec_t max_tensor_spec_t;

typedef struct max_compile_options_t {
  size_t struct_size;
  /* Pattern fusion and elementwise fusion; 0 turns both off (results stay the same). */
  int32_t enable_fusion;
  /* Folding of ops whose inputs are all constants, up to fold_limit_bytes of results. */
  int32_t enable_constant_folding;
  uint64_t fold_limit_bytes;
  /* Plans kept per compiled model for distinct concrete input shapes (least recently used
   * goes first); at least 1. */
  int64_t plan_cache_capacity;
  /* ABI 1.4. 1: an input on another device than the model's is copied to it on each call
   * (a host array fed to a GPU model); 0, the default: such an input is INVALID_ARGUMENT. */
  int32_t copy_inputs_to_device;
  /* ABI 1.5. For max_context_compile_file: the device a model file wholly on the host (an
   * ONNX model, which carries no placement) is moved onto before it compiles, so that it runs
   * there; it must be one of the context's devices. NULL, the default, keeps the file's own
   * placement. Borrowed for the call. Ignored by max_context_compile (a graph names its
   * devices). */
  const max_device_t* file_device;
} max_compile_options_t;

/* Fills the first struct_size bytes of *options with defaults (fusion and folding on, a
 * 1 MiB fold limit, 16 plans) and sets struct_size. Pass sizeof(max_compile_options_t). */
MAX_API max_status_t* max_compile_options_init(max_compile_options_t* options,
                                               size_t struct_size);

/* Compiles `graph` for the device it is placed on (the device of its values' types). The
 * graph is read, not kept: it may be changed or released afterwards. options may be NULL for
 * defaults. INVALID_ARGUMENT for a graph that does not verify or has no outputs, and for a
 * graph placed on a device the context was not created with (naming the value and the
 * device); UNIMPLEMENTED naming the op when a node has no kernel on that device for its
 * dtypes and shapes, and naming two values when the graph spans devices. On a GPU the
 * kernels are compiled here (NVRTC, with an on-disk cache); without NVRTC that is
 * UNAVAILABLE. Thread-safe for distinct graphs. */
MAX_API max_status_t* max_context_compile(max_context_t* context, const max_graph_t* graph,
                                          const max_compile_options_t* options,
                                          max_compiled_model_t** out_compiled);
/* As max_context_compile, for a model file: a path ending in ".onnx" is imported as an ONNX
 * model (opset 7 or newer; its initializers become the compiled model's own weights, which
 * max_model_create binds), anything else is read as a MAXG file (see max_graph_load for its
 * errors). With options->file_device set, the model is moved onto that device first
 * (FAILED_PRECONDITION when the file already places a value elsewhere). An ONNX model whose
 * graph depends on the values of some inputs (a Reshape's shape, a reduction's axes fed as
 * graph inputs) compiles with the signature its file declares; each distinct set of those
 * values is then compiled on the execute that first gives it (plan_cache_capacity of them
 * are kept), and errors of that compile are that execute's. Such a model is not captured
 * (max_model_capture: UNIMPLEMENTED). UNIMPLEMENTED names the ONNX node and operator we
 * cannot import; DATA_LOSS or INVALID_ARGUMENT, with the offset, a malformed ONNX file. */
MAX_API max_status_t* max_context_compile_file(max_context_t* context, const char* path,
                                               const max_compile_options_t* options,
                                               max_compiled_model_t** out_compiled);
MAX_API void max_compiled_model_retain(max_compiled_model_t* compiled);
MAX_API void max_compiled_model_release(max_compiled_model_t* compiled);

/* The model's signature: inputs and outputs in order, and the weights it must be given.
 * Each spec is a new reference. OUT_OF_RANGE past the end. Thread-safe. */
MAX_API max_status_t* max_compiled_model_num_inputs(const max_compiled_model_t* compiled,
                                                    size_t* out_count);
MAX_API max_status_t* max_compiled_model_input(const max_compiled_model_t* compiled,
                                               size_t index, max_tensor_spec_t** out_spec);
MAX_API max_status_t* max_compiled_model_num_outputs(const max_compiled_model_t* compiled,
                                                     size_t* out_count);
MAX_API max_status_t* max_compiled_model_output(const max_compiled_model_t* compiled,
                                                size_t index, max_tensor_spec_t** out_spec);
MAX_API max_status_t* max_compiled_model_num_weights(const max_compiled_model_t* compiled,
                                                     size_t* out_count);
MAX_API max_status_t* max_compiled_model_weight(const max_compiled_model_t* compiled,
                                                size_t index, max_tensor_spec_t** out_spec);

/* A tensor spec (MAX's TensorSpec): the name, dtype, shape and device of one input, output
 * or weight. Immutable and thread-safe; strings it returns live as long as the spec. */
MAX_API void max_tensor_spec_retain(max_tensor_spec_t* spec);
MAX_API void max_tensor_spec_release(max_tensor_spec_t* spec);
MAX_API max_status_t* max_tensor_spec_name(const max_tensor_spec_t* spec, const char** out_name);
MAX_API max_status_t* max_tensor_spec_dtype(const max_tensor_spec_t* spec, max_dtype_t* out_dtype);
MAX_API max_status_t* max_tensor_spec_rank(const max_tensor_spec_t* spec, size_t* out_rank);
/* Dim `axis` as a number, or -1 when it is symbolic or an expression; then *out_name holds
 * its text ("batch", "seq + 1"), else *out_name is NULL. out_name may be NULL. */
MAX_API max_status_t* max_tensor_spec_dim(const max_tensor_spec_t* spec, size_t axis,
                                          int64_t* out_dim, const char** out_name);
MAX_API max_status_t* max_tensor_spec_device(const max_tensor_spec_t* spec,
                                             max_device_t** out_device);

/* Makes a model: the compiled model with its weights bound by name. Every weight the graph
 * declares must be given exactly once with its declared dtype and shape, except those that
 * came with the model's file (ONNX initializers), which are bound unless given here:
 * NOT_FOUND names a missing weight, INVALID_ARGUMENT an unknown name, a duplicate or a
 * mismatch. Contiguous tensors
 * on the model's device are used in place (the model retains them; do not write to them while
 * the model lives); others are copied to it, once, here. Thread-safe. */
MAX_API max_status_t* max_model_create(max_compiled_model_t* compiled,
                                       const char* const* weight_names,
                                       max_tensor_t* const* weights, size_t num_weights,
                                       max_model_t** out_model);
MAX_API void max_model_retain(max_model_t* model);
MAX_API void max_model_release(max_model_t* model);
/* The compiled model (a new reference). */
MAX_API max_status_t* max_model_compiled_model(const max_model_t* model,
                                               max_compiled_model_t** out_compiled);

/* Runs the model on `inputs` (by position, as many as the model has) and returns its
 * outputs in a new list of new tensors. Inputs are checked before anything runs: their
 * count, dtype, rank, static dims, that every symbolic dim means one value across inputs,
 * and that they are on the model's device; INVALID_ARGUMENT names the input and the mismatch
 * and the model stays usable. num_inputs is checked against the model before `inputs` is
 * read, so a wrong count never reads past the array. Inputs are only read. The outputs are on the model's device;
 * on a GPU the call returns when they hold their values. Thread-safe: concurrent calls on one
 * model are supported. */
MAX_API max_status_t* max_model_execute(max_model_t* model, max_tensor_t* const* inputs,
                                        size_t num_inputs, max_tensor_list_t** out_outputs);
/* As max_model_execute with inputs given by name, in any order; NOT_FOUND for an unknown
 * name, INVALID_ARGUMENT for a missing or repeated one. */
MAX_API max_status_t* max_model_execute_named(max_model_t* model, const char* const* names,
                                              max_tensor_t* const* inputs, size_t num_inputs,
                                              max_tensor_list_t** out_outputs);
/* ---- run options (ABI 1.8): a deadline and a cancellation flag for one execute ----
 *
 * The executor checks them before every step of the model and before every iteration of a
 * loop (ONNX Loop and Scan, while_loop), so a call stops within one step of its deadline or
 * of its cancellation, with DEADLINE_EXCEEDED or CANCELLED naming the op ("op 'while_loop'
 * (iteration 81920)"); the model stays usable and later calls run normally. One step is not
 * interrupted inside (a single large matmul finishes first). A loop whose trip count comes
 * from a file can run for as long as the file says: serving untrusted models, set a
 * deadline. */
typedef struct max_run_options_t {
  size_t struct_size;
  /* The longest the call may run, in microseconds from its start; 0, the default, is no
   * limit. Negative values are INVALID_ARGUMENT. */
  int64_t timeout_us;
  /* A flag the caller owns and may set from any thread while the call runs (an atomic
   * store where the language has one, a plain aligned int32 write otherwise): nonzero
   * cancels the call. It must stay valid until the call returns; the library only reads it.
   * NULL, the default: no flag. One flag may serve many calls (onnxruntime's
   * RunOptions.terminate); clear it before reusing it. */
  const int32_t* cancel_flag;
} max_run_options_t;

/* Fills the first struct_size bytes of *options with defaults (no deadline, no flag) and
 * sets struct_size. Pass sizeof(max_run_options_t). */
MAX_API max_status_t* max_run_options_init(max_run_options_t* options, size_t struct_size);

/* As max_model_execute, under `options` (NULL: none, the same as max_model_execute).
 * Thread-safe; each call has its own options. */
MAX_API max_status_t* max_model_execute_with_options(max_model_t* model,
                                                     max_tensor_t* const* inputs,
                                                     size_t num_inputs,
                                                     const max_run_options_t* options,
                                                     max_tensor_list_t** out_outputs);

/* Swaps the named weights in place without recompiling (the others stay); the same checks
 * as max_model_create apply to the names given, and nothing changes when one fails. Calls
 * already running finish with the old weights. Thread-safe. */
MAX_API max_status_t* max_model_reload(max_model_t* model, const char* const* weight_names,
                                       max_tensor_t* const* weights, size_t num_weights);

/* ==== Weights (ABI 1.3): safetensors and GGUF files, a registry of named tensors ==========
 *
 * A max_weights_t (MAX's weights registry) maps names to tensors: every tensor of the
 * safetensors and GGUF files added to it (mapped, not read: a tensor whose bytes are aligned
 * for its dtype is a read-only view of the file), and tensors added from memory or DLPack
 * (shared, not copied). A model binds the weights its graph declares from it by name.
 *
 * A block-quantized tensor (GGUF's Q4_0, Q4_K, Q5_K, Q6_K, Q8_0) is uint8 with dims
 * [rows..., row_bytes], as MAX allocates it; its encoding says how to read the bytes, and
 * the graph ops "dequantize" and "qmatmul" take its name ("q4_k") as their `encoding`.
 *
 * Thread-safety: adding needs the caller's synchronization against every other use of the
 * registry; once filled, any number of threads may query it and bind models from it. */

typedef struct max_weights_t max_weights_t;

/* Block-quantization encodings. Values are stable. */
typedef int32_t max_quant_encoding_t;
#define MAX_QUANT_NONE 0
#define MAX_QUANT_Q4_0 1
#define MAX_QUANT_Q4_K 2
#define MAX_QUANT_Q5_K 3
#define MAX_QUANT_Q6_K 4
#define MAX_QUANT_Q8_0 5

/* "q4_k" and so on ("none" for MAX_QUANT_NONE); NULL for an unknown value. Static storage. */
MAX_API const char* max_quant_encoding_name(max_quant_encoding_t encoding);
/* Elements and bytes of one block. INVALID_ARGUMENT for MAX_QUANT_NONE and unknown values.
 * Either out pointer may be NULL. */
MAX_API max_status_t* max_quant_encoding_block(max_quant_encoding_t encoding,
                                               int32_t* out_elements_per_block,
                                               int32_t* out_block_bytes);

/* An empty registry. */
MAX_API max_status_t* max_weights_create(max_weights_t** out_weights);
MAX_API void max_weights_retain(max_weights_t* weights);
MAX_API void max_weights_release(max_weights_t* weights);

/* Adds every tensor of a weights file, or nothing when anything fails. The format comes
 * from the name (".safetensors", ".gguf", or a sharded checkpoint's ".safetensors.index.json",
 * whose shards are opened relative to it and must lie inside its directory, symlinks
 * included: INVALID_ARGUMENT otherwise), else from the content.
 * The file stays mapped while its tensors live. If it shrinks meanwhile (truncated or
 * rewritten in place), reads past its new end do not end the process with SIGBUS: a
 * chained SIGBUS handler maps zero pages there, and the next max_model_execute that reads
 * the file fails with DATA_LOSS naming it (reload the weights to go on). NOT_FOUND or
 * PERMISSION_DENIED for a file that cannot be opened; DATA_LOSS naming the file, the tensor
 * and the offset for a truncated or corrupt one; INVALID_ARGUMENT for an unknown dtype or an
 * unrecognised format; UNIMPLEMENTED for a GGUF tensor type we do not read (Q4_1, IQ2_XS,
 * ...); ALREADY_EXISTS naming a weight the registry has. */
MAX_API max_status_t* max_weights_add_file(max_weights_t* weights, const char* path);
/* Adds `tensor` under `name` by reference (the registry retains it). With an encoding other
 * than MAX_QUANT_NONE it must be uint8 [rows..., row_bytes] with row_bytes a whole number of
 * blocks. INVALID_ARGUMENT for an empty name or a tensor that does not fit the encoding;
 * ALREADY_EXISTS when the name is taken. */
MAX_API max_status_t* max_weights_add_tensor(max_weights_t* weights, const char* name,
                                             max_tensor_t* tensor,
                                             max_quant_encoding_t encoding);

/* The number of tensors, and the name of tensor `index` in the order they were added
 * (OUT_OF_RANGE past the end). The name is owned by the registry and lives as long as it. */
MAX_API max_status_t* max_weights_count(const max_weights_t* weights, size_t* out_count);
MAX_API max_status_t* max_weights_name(const max_weights_t* weights, size_t index,
                                       const char** out_name);
/* What the registry knows of `name` without touching its bytes: dtype, rank and dims as
 * stored (uint8 [..., row_bytes] when quantized; *out_dims is owned by the registry) and the
 * encoding. Any out pointer may be NULL. NOT_FOUND naming the weight when absent. */
MAX_API max_status_t* max_weights_info(const max_weights_t* weights, const char* name,
                                       max_dtype_t* out_dtype, int32_t* out_rank,
                                       const int64_t** out_dims,
                                       max_quant_encoding_t* out_encoding);
/* The tensor `name` as a new reference: a read-only host view of the file (which stays
 * mapped while the view lives, even after the registry is released), a read-only copy when
 * the file's bytes are not aligned for the dtype, or the tensor that was added. NOT_FOUND
 * naming the weight when absent. */
MAX_API max_status_t* max_weights_tensor(const max_weights_t* weights, const char* name,
                                         max_tensor_t** out_tensor);

/* Writes every tensor of `weights`, in order, as one GGUF v3 file at `path` (quantized ones
 * with their encoding), with general.name set to `name` unless it is NULL or empty: how
 * weights are converted for GGUF readers. INVALID_ARGUMENT for a dtype GGUF cannot hold (bool,
 * unsigned integers wider than 8 bits, float8) or more than 4 dims; an I/O error naming the
 * path. A failed write leaves `path` as it was. Thread-safe against readers of `weights`. */
MAX_API max_status_t* max_weights_save_gguf(const max_weights_t* weights, const char* path,
                                            const char* name);

/* Quantizes a float32 host tensor [..., k] into a new uint8 tensor [..., row_bytes] of
 * `encoding`, fitting every block's scales by least squares: what qmatmul reads. Slow (a
 * conversion step, not an inference kernel). INVALID_ARGUMENT for another dtype, a scalar,
 * MAX_QUANT_NONE or an unknown value, or k not a whole number of blocks; FAILED_PRECONDITION
 * for device memory. Thread-safe. */
MAX_API max_status_t* max_tensor_quantize(const max_tensor_t* tensor, max_quant_encoding_t encoding,
                                          max_tensor_t** out_tensor);

/* As max_model_create, with each weight the graph declares taken by name from `weights`
 * (else from the model file's own weights). Tensors of the registry that the graph does not
 * declare are ignored. NOT_FOUND names a declared weight that neither has; INVALID_ARGUMENT
 * a dtype or shape that differs from the declaration. Thread-safe. */
MAX_API max_status_t* max_model_create_from_weights(max_compiled_model_t* compiled,
                                                    const max_weights_t* weights,
                                                    max_model_t** out_model);
/* As max_model_reload, for every declared weight that `weights` has; the others stay.
 * All-or-nothing; calls already running finish with the old weights. Thread-safe. */
MAX_API max_status_t* max_model_reload_from_weights(max_model_t* model,
                                                    const max_weights_t* weights);

/* ==== Device graphs (ABI 1.4): capture once, replay many times ============================
 *
 * MAX's Model.capture / replay / debug_verify_replay. A capture runs the model once, as
 * max_model_execute does, and records the run under a key the caller picks; a replay runs
 * the recording again. On a GPU the recording is a CUDA graph: one launch replaces the
 * run's many, which is what makes small-batch inference fast. Every address in it is fixed,
 * so the capture's outputs are the replay's too: each replay rewrites, in place, the tensors
 * max_model_capture returned (copy them out to keep a result). On the CPU a replay runs the
 * captured plan into those same tensors, so one program serves both devices.
 *
 * `graph_keys` has one key per device the model runs on: one. A key is any value; capturing
 * under a key that holds a graph replaces it. A graph keeps the weights it was captured with
 * (a max_model_reload applies to later captures). Graphs live as long as the model.
 *
 * Thread-safety: all three are thread-safe; replays of one key take turns, and so must the
 * caller's reads of that key's outputs. */

/* Runs the model on `inputs` (checked as max_model_execute checks them) and records the run
 * under graph_keys[0]. Returns the outputs in a new list; its tensors are shared with the
 * graph. FAILED_PRECONDITION when the model's work cannot be recorded (an op that waits on
 * the host mid-run); INVALID_ARGUMENT for num_keys other than 1. */
MAX_API max_status_t* max_model_capture(max_model_t* model, const uint64_t* graph_keys, size_t num_keys,
                                        max_tensor_t* const* inputs, size_t num_inputs,
                                        max_tensor_list_t** out_outputs);
/* Runs the graph of graph_keys[0] on `inputs`, which must have the dtypes and shapes it was
 * captured with (INVALID_ARGUMENT names the difference), rewriting the capture's outputs, and
 * returns when they hold their values. FAILED_PRECONDITION when nothing is captured under
 * the key. */
MAX_API max_status_t* max_model_replay(max_model_t* model, const uint64_t* graph_keys, size_t num_keys,
                                       max_tensor_t* const* inputs, size_t num_inputs);
/* Runs the model eagerly on `inputs` (new outputs, discarded) and checks that it launches
 * the kernels the graph of graph_keys[0] recorded, in order and with the same launch shapes:
 * FAILED_PRECONDITION names the first difference, or that nothing is captured under the key.
 * A debugging aid: a graph that passes replays what execute would run. */
MAX_API max_status_t* max_model_debug_verify_replay(max_model_t* model, const uint64_t* graph_keys,
                                                    size_t num_keys, max_tensor_t* const* inputs,
                                                    size_t num_inputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MAX_C_H_ */
