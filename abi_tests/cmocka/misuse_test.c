/* The misuse matrix: every function of the ABI called the wrong way. NULL handles, NULL out
 * pointers, handles of the wrong kind and out-of-range values must give a status with the
 * right code and a message that names the function and the argument; out parameters are
 * left NULL/zero; *_release(NULL) does nothing; total queries answer 0, NULL or "".
 *
 * One test per exported function, named misuse_<function>. The last test checks that list
 * against abi_tests/exported_symbols.txt: a new function without a misuse test fails here.
 * `misuse_test --coverage-only FILE` runs that check alone against another list (the suite's
 * self-test uses it to prove the check can fail). */
#include "abi_test.h"

#include <limits.h>

/* One of each handle, made by the group setup. */
static max_device_t* g_device;
static max_context_t* g_context;
static max_tensor_t* g_tensor;
static max_tensor_list_t* g_list;
static max_buffer_t* g_buffer;

/* A handle of one kind passed where another is expected. */
#define AS(type, handle) ((type*)(void*)(handle))

/* Each test's body gets `fn`, the function's name, which every message must mention. */
#define MISUSE(name)                                                        \
  static void misuse_body_##name(const char* fn);                           \
  static void misuse_##name(void** state) {                                 \
    (void)state;                                                            \
    misuse_body_##name(#name);                                              \
  }                                                                         \
  static void misuse_body_##name(const char* fn)

#define EXPECT_BAD(call, ...) EXPECT_STATUS(call, MAX_STATUS_INVALID_ARGUMENT, fn, __VA_ARGS__)

static int all_zero(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  size_t i;
  for (i = 0; i < n; ++i)
    if (b[i]) return 0;
  return 1;
}

#define EXPECT_CLEARED(out) \
  do { if (!all_zero(&(out), sizeof(out))) fail_msg("%s was not cleared on failure", #out); } while (0)
#define POISON(out) memset(&(out), 0x5a, sizeof(out))

/* The common shape `status f(handle, out)`: NULL handle, NULL out, wrong-kind handle. */
#define GETTER_MISUSE(f, good, wrong, out_type, handle_arg, out_arg, kind)             \
  do {                                                                                 \
    out_type out_;                                                                     \
    POISON(out_);                                                                      \
    EXPECT_BAD(f(NULL, &out_), handle_arg " is NULL");                                 \
    EXPECT_CLEARED(out_);                                                              \
    EXPECT_BAD(f(good, NULL), out_arg " is NULL");                                     \
    POISON(out_);                                                                      \
    EXPECT_BAD(f(wrong, &out_), handle_arg " is not a " kind " handle");               \
    EXPECT_CLEARED(out_);                                                              \
  } while (0)

#define TENSOR_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_tensor, AS(max_tensor_t, g_buffer), out_type, "tensor", out_arg, "tensor")
#define DEVICE_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_device, AS(max_device_t, g_tensor), out_type, "device", out_arg, "device")

static const max_dtype_t kUnknownDTypes[] = {0, 2, -1, 63, 65, 74, 83, 133, 142, 255, INT32_MIN, INT32_MAX};
#define N_UNKNOWN_DTYPES (sizeof kUnknownDTypes / sizeof kUnknownDTypes[0])

/* A dtype trait answers 0 for every unknown code. */
#define TRAIT_IS_TOTAL(f)                                                              \
  do {                                                                                 \
    size_t i_;                                                                         \
    (void)fn;                                                                          \
    for (i_ = 0; i_ < N_UNKNOWN_DTYPES; ++i_)                                          \
      if (f(kUnknownDTypes[i_]) != 0)                                                  \
        fail_msg("%s(%d) is %d, expected 0", #f, (int)kUnknownDTypes[i_],              \
                 (int)f(kUnknownDTypes[i_]));                                          \
  } while (0)

/* ======================================================================================
 * Versions, status, logging
 * ====================================================================================== */

MISUSE(max_abi_version) {
  (void)fn;
  assert_int_equal(max_abi_version() >> 16, MAX_ABI_VERSION_MAJOR);
}

MISUSE(max_version_string) {
  (void)fn;
  assert_non_null(max_version_string());
  assert_true(max_version_string()[0] != '\0');
}

MISUSE(max_check_abi) {
  EXPECT_STATUS(max_check_abi(0), MAX_STATUS_FAILED_PRECONDITION, fn, "major");
  EXPECT_STATUS(max_check_abi(0xffffffffu), MAX_STATUS_FAILED_PRECONDITION, fn, "65535");
  EXPECT_STATUS(max_check_abi(MAX_ABI_VERSION + 0x10000u), MAX_STATUS_FAILED_PRECONDITION, fn,
                "major");
  EXPECT_STATUS(max_check_abi((1u << 16) | 0xffffu), MAX_STATUS_FAILED_PRECONDITION, fn,
                "older than the header 1.65535");
}

MISUSE(max_status_code) {
  (void)fn;
  assert_int_equal(max_status_code(NULL), MAX_STATUS_OK);
}

MISUSE(max_status_message) {
  (void)fn;
  assert_non_null(max_status_message(NULL));
  assert_string_equal(max_status_message(NULL), "");
}

MISUSE(max_status_code_name) {
  static const max_status_code_t bad[] = {-1, 17, 100, INT32_MIN, INT32_MAX};
  size_t i;
  (void)fn;
  for (i = 0; i < sizeof bad / sizeof bad[0]; ++i)
    assert_string_equal(max_status_code_name(bad[i]), "UNKNOWN_CODE");
}

MISUSE(max_status_release) {
  (void)fn;
  max_status_release(NULL);
}

MISUSE(max_log_set_level) {
  max_log_level_t before = max_log_level();
  EXPECT_BAD(max_log_set_level(-1), "log level -1");
  EXPECT_BAD(max_log_set_level(MAX_LOG_TRACE + 1), "log level 6");
  EXPECT_BAD(max_log_set_level(INT32_MIN), "log level");
  assert_int_equal(max_log_level(), before);
}

MISUSE(max_log_level) {
  (void)fn;
  assert_in_range(max_log_level(), MAX_LOG_OFF, MAX_LOG_TRACE);
}

/* ======================================================================================
 * DTypes
 * ====================================================================================== */

MISUSE(max_dtype_is_valid) { TRAIT_IS_TOTAL(max_dtype_is_valid); }
MISUSE(max_dtype_size_in_bits) { TRAIT_IS_TOTAL(max_dtype_size_in_bits); }
MISUSE(max_dtype_size_in_bytes) { TRAIT_IS_TOTAL(max_dtype_size_in_bytes); }
MISUSE(max_dtype_align) { TRAIT_IS_TOTAL(max_dtype_align); }
MISUSE(max_dtype_is_float) { TRAIT_IS_TOTAL(max_dtype_is_float); }
MISUSE(max_dtype_is_float8) { TRAIT_IS_TOTAL(max_dtype_is_float8); }
MISUSE(max_dtype_is_half) { TRAIT_IS_TOTAL(max_dtype_is_half); }
MISUSE(max_dtype_is_integral) { TRAIT_IS_TOTAL(max_dtype_is_integral); }
MISUSE(max_dtype_is_signed_integral) { TRAIT_IS_TOTAL(max_dtype_is_signed_integral); }
MISUSE(max_dtype_is_unsigned_integral) { TRAIT_IS_TOTAL(max_dtype_is_unsigned_integral); }

MISUSE(max_dtype_name) {
  size_t i;
  (void)fn;
  for (i = 0; i < N_UNKNOWN_DTYPES; ++i) assert_null(max_dtype_name(kUnknownDTypes[i]));
}

MISUSE(max_dtype_from_name) {
  max_dtype_t d = 12345;
  EXPECT_BAD(max_dtype_from_name(NULL, &d), "name is NULL");
  assert_int_equal(d, 0);
  EXPECT_BAD(max_dtype_from_name("float32", NULL), "out_dtype is NULL");
  d = 12345;
  EXPECT_STATUS(max_dtype_from_name("float31", &d), MAX_STATUS_NOT_FOUND, fn, "'float31'");
  assert_int_equal(d, 0);
  d = 12345;
  EXPECT_STATUS(max_dtype_from_name("", &d), MAX_STATUS_NOT_FOUND, fn, "''");
  assert_int_equal(d, 0);
}

/* ======================================================================================
 * Devices
 * ====================================================================================== */

MISUSE(max_accelerator_count) { EXPECT_BAD(max_accelerator_count(NULL), "out_count is NULL"); }

MISUSE(max_device_create) {
  max_device_t* d = SENTINEL_PTR;
  EXPECT_BAD(max_device_create(9, 0, &d), "unknown device kind 9");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_BAD(max_device_create(0, 0, &d), "unknown device kind 0");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_BAD(max_device_create(-1, 0, &d), "unknown device kind -1");
  assert_null(d);
  EXPECT_BAD(max_device_create(MAX_DEVICE_KIND_CPU, 0, NULL), "out_device is NULL");
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_CPU, 1, &d), MAX_STATUS_NOT_FOUND, fn, "id 1");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_CPU, -2, &d), MAX_STATUS_NOT_FOUND, fn, "-2");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_CUDA, 1000, &d), MAX_STATUS_NOT_FOUND, fn, "1000");
  assert_null(d);
}

MISUSE(max_device_retain) {
  (void)fn;
  max_device_retain(NULL);
  max_device_retain(g_device);
  max_device_release(g_device);
}

MISUSE(max_device_release) {
  (void)fn;
  max_device_release(NULL);
}

MISUSE(max_device_kind) { DEVICE_GETTER(max_device_kind, max_device_kind_t, "out_kind"); }
MISUSE(max_device_id) { DEVICE_GETTER(max_device_id, int32_t, "out_id"); }
MISUSE(max_device_label) { DEVICE_GETTER(max_device_label, const char*, "out_label"); }
MISUSE(max_device_api) { DEVICE_GETTER(max_device_api, const char*, "out_api"); }
MISUSE(max_device_is_host) { DEVICE_GETTER(max_device_is_host, int32_t, "out_is_host"); }

MISUSE(max_device_synchronize) {
  EXPECT_BAD(max_device_synchronize(NULL), "device is NULL");
  EXPECT_BAD(max_device_synchronize(AS(max_device_t, g_context)), "not a device handle");
  EXPECT_OK(max_device_synchronize(g_device));
}

/* ======================================================================================
 * Context
 * ====================================================================================== */

MISUSE(max_context_options_init) {
  max_context_options_t o;
  EXPECT_BAD(max_context_options_init(NULL, sizeof o), "options is NULL");
  EXPECT_BAD(max_context_options_init(&o, 0), "struct_size 0");
  EXPECT_BAD(max_context_options_init(&o, sizeof(size_t) - 1), "struct_size");
}

MISUSE(max_context_create) {
  max_context_options_t o;
  max_context_t* c = SENTINEL_PTR;
  max_device_t* devices[2];
  EXPECT_BAD(max_context_create(NULL, NULL), "out_context is NULL");

  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_threads = -1;
  EXPECT_BAD(max_context_create(&o, &c), "num_threads");
  assert_null(c);

  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_devices = 2;
  c = SENTINEL_PTR;
  EXPECT_BAD(max_context_create(&o, &c), "devices is NULL");
  assert_null(c);

  devices[0] = g_device;
  devices[1] = NULL;
  o.devices = devices;
  c = SENTINEL_PTR;
  EXPECT_BAD(max_context_create(&o, &c), "devices[1] is NULL");
  assert_null(c);

  devices[1] = AS(max_device_t, g_tensor);
  c = SENTINEL_PTR;
  EXPECT_BAD(max_context_create(&o, &c), "devices[1] is not a device handle");
  assert_null(c);

  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.log_level = MAX_LOG_TRACE + 1;
  c = SENTINEL_PTR;
  EXPECT_BAD(max_context_create(&o, &c), "log_level 6");
  assert_null(c);
  o.log_level = -2;
  EXPECT_BAD(max_context_create(&o, &c), "log_level -2");
}

MISUSE(max_context_retain) {
  (void)fn;
  max_context_retain(NULL);
  max_context_retain(g_context);
  max_context_release(g_context);
}

MISUSE(max_context_release) {
  (void)fn;
  max_context_release(NULL);
}

MISUSE(max_context_num_threads) {
  GETTER_MISUSE(max_context_num_threads, g_context, AS(max_context_t, g_device), int32_t,
                "context", "out_num_threads", "context");
}

MISUSE(max_context_num_devices) {
  GETTER_MISUSE(max_context_num_devices, g_context, AS(max_context_t, g_list), size_t,
                "context", "out_num_devices", "context");
}

MISUSE(max_context_device) {
  max_device_t* d = SENTINEL_PTR;
  EXPECT_BAD(max_context_device(NULL, 0, &d), "context is NULL");
  assert_null(d);
  EXPECT_BAD(max_context_device(g_context, 0, NULL), "out_device is NULL");
  d = SENTINEL_PTR;
  EXPECT_BAD(max_context_device(AS(max_context_t, g_tensor), 0, &d), "not a context handle");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_context_device(g_context, 1, &d), MAX_STATUS_OUT_OF_RANGE, fn, "index 1");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_context_device(g_context, SIZE_MAX, &d), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(d);
}

/* ======================================================================================
 * Tensors
 * ====================================================================================== */

MISUSE(max_tensor_create) {
  const int64_t dims[2] = {2, 3};
  const int64_t negative[2] = {2, -3};
  const int64_t huge[3] = {INT64_MAX / 4, INT64_MAX / 4, 4};
  int64_t many[MAX_TENSOR_MAX_RANK + 1];
  max_tensor_t* t = SENTINEL_PTR;
  size_t i;
  for (i = 0; i < sizeof many / sizeof many[0]; ++i) many[i] = 1;

  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, dims, 2, NULL), "out_tensor is NULL");
  EXPECT_BAD(max_tensor_create(NULL, 2, dims, 2, &t), "dtype 2 is not a dtype");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_INVALID, dims, 2, &t), "dtype 0");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, dims, -1, &t), "rank -1");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, many, MAX_TENSOR_MAX_RANK + 1, &t),
             "rank 65");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, NULL, 2, &t), "dims is NULL");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, negative, 2, &t), "negative", "[2, -3]");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, huge, 3, &t),
                MAX_STATUS_RESOURCE_EXHAUSTED, fn, "too many elements");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create(AS(max_device_t, g_tensor), MAX_DTYPE_FLOAT32, dims, 2, &t),
             "device is not a device handle");
  assert_null(t);
  /* rank 64 is the limit, and allowed */
  EXPECT_OK(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, many, MAX_TENSOR_MAX_RANK, &t));
  max_tensor_release(t);
}

MISUSE(max_tensor_create_from_host) {
  const int64_t dims[2] = {2, 3};
  float data[6] = {0};
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, data, sizeof data, NULL),
             "out_tensor is NULL");
  EXPECT_BAD(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, NULL, sizeof data, &t),
             "data is NULL");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, data, 8, &t),
             "8 bytes", "needs 24");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_from_host(NULL, 2, dims, 2, data, sizeof data, &t), "dtype 2");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 65, data, sizeof data, &t),
             "rank 65");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_from_host(AS(max_device_t, g_buffer), MAX_DTYPE_FLOAT32, dims, 2,
                                         data, sizeof data, &t),
             "not a device handle");
  assert_null(t);
}

MISUSE(max_tensor_create_borrowed) {
  const int64_t dims[2] = {2, 3};
  const int64_t negative[1] = {-1};
  const int64_t strides[2] = {3, 1};
  float data[6] = {0};
  call_counter released = {0};
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 2, strides, data, 0, count_call,
                                        &released, NULL),
             "out_tensor is NULL");
  EXPECT_BAD(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 2, NULL, NULL, 0, count_call,
                                        &released, &t),
             "data is NULL");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_borrowed(2, dims, 2, NULL, data, 0, count_call, &released, &t),
             "dtype 2");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, -1, NULL, data, 0, count_call,
                                        &released, &t),
             "rank -1");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, NULL, 2, NULL, data, 0, count_call,
                                        &released, &t),
             "dims is NULL");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, negative, 1, NULL, data, 0, count_call,
                                        &released, &t),
             "negative");
  assert_null(t);
  /* On failure the memory stays the caller's: release is never called. */
  assert_int_equal(released.calls, 0);
}

MISUSE(max_tensor_retain) {
  (void)fn;
  max_tensor_retain(NULL);
  max_tensor_retain(g_tensor);
  max_tensor_release(g_tensor);
}

MISUSE(max_tensor_release) {
  (void)fn;
  max_tensor_release(NULL);
}

MISUSE(max_tensor_dtype) { TENSOR_GETTER(max_tensor_dtype, max_dtype_t, "out_dtype"); }
MISUSE(max_tensor_rank) { TENSOR_GETTER(max_tensor_rank, int32_t, "out_rank"); }
MISUSE(max_tensor_dims) { TENSOR_GETTER(max_tensor_dims, const int64_t*, "out_dims"); }
MISUSE(max_tensor_strides) { TENSOR_GETTER(max_tensor_strides, const int64_t*, "out_strides"); }
MISUSE(max_tensor_num_elements) {
  TENSOR_GETTER(max_tensor_num_elements, int64_t, "out_num_elements");
}
MISUSE(max_tensor_byte_size) { TENSOR_GETTER(max_tensor_byte_size, size_t, "out_bytes"); }
MISUSE(max_tensor_is_contiguous) {
  TENSOR_GETTER(max_tensor_is_contiguous, int32_t, "out_is_contiguous");
}
MISUSE(max_tensor_is_read_only) {
  TENSOR_GETTER(max_tensor_is_read_only, int32_t, "out_is_read_only");
}
MISUSE(max_tensor_data) { TENSOR_GETTER(max_tensor_data, const void*, "out_data"); }
MISUSE(max_tensor_mutable_data) { TENSOR_GETTER(max_tensor_mutable_data, void*, "out_data"); }
MISUSE(max_tensor_dlpack_device) { TENSOR_GETTER(max_tensor_dlpack_device, DLDevice, "out_device"); }

MISUSE(max_tensor_device) { TENSOR_GETTER(max_tensor_device, max_device_t*, "out_device"); }

MISUSE(max_tensor_to_host) {
  float out[6];
  EXPECT_BAD(max_tensor_to_host(NULL, out, sizeof out), "tensor is NULL");
  EXPECT_BAD(max_tensor_to_host(g_tensor, NULL, sizeof out), "dst is NULL");
  EXPECT_BAD(max_tensor_to_host(g_tensor, out, sizeof out - 1), "23 bytes", "needs 24");
  EXPECT_BAD(max_tensor_to_host(AS(max_tensor_t, g_list), out, sizeof out), "not a tensor handle");
  EXPECT_OK(max_tensor_to_host(g_tensor, out, sizeof out));
}

MISUSE(max_tensor_copy) {
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_copy(NULL, NULL, &t), "tensor is NULL");
  assert_null(t);
  EXPECT_BAD(max_tensor_copy(g_tensor, NULL, NULL), "out_tensor is NULL");
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_copy(AS(max_tensor_t, g_device), NULL, &t), "not a tensor handle");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_copy(g_tensor, AS(max_device_t, g_tensor), &t), "not a device handle");
  assert_null(t);
}

MISUSE(max_tensor_copy_from) {
  max_tensor_t* other = make_zeros(MAX_DTYPE_FLOAT32, (const int64_t[]){2, 3}, 2);
  EXPECT_BAD(max_tensor_copy_from(NULL, g_tensor), "dst is NULL");
  EXPECT_BAD(max_tensor_copy_from(other, NULL), "src is NULL");
  EXPECT_BAD(max_tensor_copy_from(AS(max_tensor_t, g_buffer), g_tensor), "dst is not a tensor");
  EXPECT_BAD(max_tensor_copy_from(other, AS(max_tensor_t, g_context)), "src is not a tensor");
  EXPECT_OK(max_tensor_copy_from(other, g_tensor));
  max_tensor_release(other);
}

MISUSE(max_tensor_view) {
  const int64_t dims[2] = {3, 2};
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(NULL, MAX_DTYPE_FLOAT32, dims, 2, &t), "tensor is NULL");
  assert_null(t);
  EXPECT_BAD(max_tensor_view(g_tensor, MAX_DTYPE_FLOAT32, dims, 2, NULL), "out_tensor is NULL");
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(g_tensor, 2, dims, 2, &t), "dtype 2");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(g_tensor, MAX_DTYPE_FLOAT32, dims, 65, &t), "rank 65");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(g_tensor, MAX_DTYPE_FLOAT32, dims, -1, &t), "rank -1");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(g_tensor, MAX_DTYPE_FLOAT32, NULL, 2, &t), "dims is NULL");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_view(AS(max_tensor_t, g_device), MAX_DTYPE_FLOAT32, dims, 2, &t),
             "not a tensor handle");
  assert_null(t);
}

/* ======================================================================================
 * Tensor lists and buffers
 * ====================================================================================== */

MISUSE(max_tensor_list_create) { EXPECT_BAD(max_tensor_list_create(NULL), "out_list is NULL"); }

MISUSE(max_tensor_list_retain) {
  (void)fn;
  max_tensor_list_retain(NULL);
  max_tensor_list_retain(g_list);
  max_tensor_list_release(g_list);
}

MISUSE(max_tensor_list_release) {
  (void)fn;
  max_tensor_list_release(NULL);
}

MISUSE(max_tensor_list_append) {
  size_t before = 0, after = 0;
  EXPECT_OK(max_tensor_list_size(g_list, &before));
  EXPECT_BAD(max_tensor_list_append(NULL, g_tensor), "list is NULL");
  EXPECT_BAD(max_tensor_list_append(g_list, NULL), "tensor is NULL");
  EXPECT_BAD(max_tensor_list_append(AS(max_tensor_list_t, g_tensor), g_tensor),
             "not a tensor list handle");
  EXPECT_BAD(max_tensor_list_append(g_list, AS(max_tensor_t, g_list)), "not a tensor handle");
  EXPECT_OK(max_tensor_list_size(g_list, &after));
  assert_int_equal(before, after);
}

MISUSE(max_tensor_list_size) {
  GETTER_MISUSE(max_tensor_list_size, g_list, AS(max_tensor_list_t, g_buffer), size_t, "list",
                "out_size", "tensor list");
}

MISUSE(max_tensor_list_get) {
  size_t n = 0;
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_OK(max_tensor_list_size(g_list, &n));
  EXPECT_BAD(max_tensor_list_get(NULL, 0, &t), "list is NULL");
  assert_null(t);
  EXPECT_BAD(max_tensor_list_get(g_list, 0, NULL), "out_tensor is NULL");
  t = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_list_get(AS(max_tensor_list_t, g_device), 0, &t), "not a tensor list");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_list_get(g_list, n, &t), MAX_STATUS_OUT_OF_RANGE, fn, "past the list");
  assert_null(t);
  t = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_list_get(g_list, SIZE_MAX, &t), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(t);
}

MISUSE(max_buffer_create) {
  max_buffer_t* b = SENTINEL_PTR;
  char bytes[4] = {1, 2, 3, 4};
  EXPECT_BAD(max_buffer_create(NULL, 4, &b), "data is NULL with size 4");
  assert_null(b);
  EXPECT_BAD(max_buffer_create(bytes, sizeof bytes, NULL), "out_buffer is NULL");
}

MISUSE(max_buffer_retain) {
  (void)fn;
  max_buffer_retain(NULL);
  max_buffer_retain(g_buffer);
  max_buffer_release(g_buffer);
}

MISUSE(max_buffer_release) {
  (void)fn;
  max_buffer_release(NULL);
}

MISUSE(max_buffer_data) {
  GETTER_MISUSE(max_buffer_data, g_buffer, AS(max_buffer_t, g_tensor), const void*, "buffer",
                "out_data", "buffer");
}

MISUSE(max_buffer_size) {
  GETTER_MISUSE(max_buffer_size, g_buffer, AS(max_buffer_t, g_list), size_t, "buffer", "out_size",
                "buffer");
}

/* ======================================================================================
 * DLPack
 * ====================================================================================== */

static void counting_versioned_deleter(DLManagedTensorVersioned* self) {
  ++((call_counter*)self->manager_ctx)->calls;
}
static void counting_unversioned_deleter(DLManagedTensor* self) {
  ++((call_counter*)self->manager_ctx)->calls;
}

MISUSE(max_tensor_to_dlpack) {
  DLManagedTensorVersioned* m = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_to_dlpack(NULL, &m), "tensor is NULL");
  assert_null(m);
  EXPECT_BAD(max_tensor_to_dlpack(g_tensor, NULL), "out_managed is NULL");
  m = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_to_dlpack(AS(max_tensor_t, g_device), &m), "not a tensor handle");
  assert_null(m);
}

MISUSE(max_tensor_to_dlpack_unversioned) {
  DLManagedTensor* m = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_to_dlpack_unversioned(NULL, &m), "tensor is NULL");
  assert_null(m);
  EXPECT_BAD(max_tensor_to_dlpack_unversioned(g_tensor, NULL), "out_managed is NULL");
  m = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_to_dlpack_unversioned(AS(max_tensor_t, g_buffer), &m), "not a tensor");
  assert_null(m);
}

MISUSE(max_tensor_from_dlpack) {
  float data[2] = {1, 2};
  int64_t shape[1] = {2};
  call_counter deleted = {0};
  DLManagedTensorVersioned m;
  max_tensor_t* t = SENTINEL_PTR;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.manager_ctx = &deleted;
  m.deleter = counting_versioned_deleter;
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype.code = kDLFloat;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = shape;
  EXPECT_BAD(max_tensor_from_dlpack(NULL, &t), "managed is NULL");
  assert_null(t);
  EXPECT_BAD(max_tensor_from_dlpack(&m, NULL), "out_tensor is NULL");
  assert_int_equal(deleted.calls, 0); /* not taken */
}

MISUSE(max_tensor_from_dlpack_unversioned) {
  float data[2] = {1, 2};
  int64_t shape[1] = {2};
  call_counter deleted = {0};
  DLManagedTensor m;
  max_tensor_t* t = SENTINEL_PTR;
  memset(&m, 0, sizeof m);
  m.manager_ctx = &deleted;
  m.deleter = counting_unversioned_deleter;
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype.code = kDLFloat;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = shape;
  EXPECT_BAD(max_tensor_from_dlpack_unversioned(NULL, &t), "managed is NULL");
  assert_null(t);
  EXPECT_BAD(max_tensor_from_dlpack_unversioned(&m, NULL), "out_tensor is NULL");
  assert_int_equal(deleted.calls, 0);
}

/* ======================================================================================
 * The table, and the check that it covers every exported function
 * ====================================================================================== */

#define T(name) cmocka_unit_test(misuse_##name)
static const struct CMUnitTest kMisuseTests[] = {
    T(max_abi_version), T(max_version_string), T(max_check_abi),
    T(max_status_code), T(max_status_message), T(max_status_code_name), T(max_status_release),
    T(max_log_set_level), T(max_log_level),
    T(max_dtype_is_valid), T(max_dtype_size_in_bits), T(max_dtype_size_in_bytes),
    T(max_dtype_align), T(max_dtype_is_float), T(max_dtype_is_float8), T(max_dtype_is_half),
    T(max_dtype_is_integral), T(max_dtype_is_signed_integral),
    T(max_dtype_is_unsigned_integral), T(max_dtype_name), T(max_dtype_from_name),
    T(max_accelerator_count), T(max_device_create), T(max_device_retain), T(max_device_release),
    T(max_device_kind), T(max_device_id), T(max_device_label), T(max_device_api),
    T(max_device_is_host), T(max_device_synchronize),
    T(max_context_options_init), T(max_context_create), T(max_context_retain),
    T(max_context_release), T(max_context_num_threads), T(max_context_num_devices),
    T(max_context_device),
    T(max_tensor_create), T(max_tensor_create_from_host), T(max_tensor_create_borrowed),
    T(max_tensor_retain), T(max_tensor_release), T(max_tensor_dtype), T(max_tensor_rank),
    T(max_tensor_dims), T(max_tensor_strides), T(max_tensor_num_elements),
    T(max_tensor_byte_size), T(max_tensor_device), T(max_tensor_is_contiguous),
    T(max_tensor_is_read_only), T(max_tensor_data), T(max_tensor_mutable_data),
    T(max_tensor_to_host), T(max_tensor_copy), T(max_tensor_copy_from), T(max_tensor_view),
    T(max_tensor_list_create), T(max_tensor_list_retain), T(max_tensor_list_release),
    T(max_tensor_list_append), T(max_tensor_list_size), T(max_tensor_list_get),
    T(max_buffer_create), T(max_buffer_retain), T(max_buffer_release), T(max_buffer_data),
    T(max_buffer_size),
    T(max_tensor_to_dlpack), T(max_tensor_from_dlpack), T(max_tensor_to_dlpack_unversioned),
    T(max_tensor_from_dlpack_unversioned), T(max_tensor_dlpack_device),
};
#undef T
#define N_MISUSE_TESTS (sizeof kMisuseTests / sizeof kMisuseTests[0])

static const char* g_symbols_file = MAX_C_EXPORTED_SYMBOLS_FILE;

static int covered(const char* function) {
  size_t i;
  for (i = 0; i < N_MISUSE_TESTS; ++i)
    if (strcmp(kMisuseTests[i].name + strlen("misuse_"), function) == 0) return 1;
  return 0;
}

static void covers_every_exported_function(void** state) {
  char line[512], missing[4096] = "", seen[N_MISUSE_TESTS];
  int n_missing = 0, n_exported = 0;
  size_t i;
  FILE* f = fopen(g_symbols_file, "r");
  (void)state;
  if (!f) fail_msg("cannot open the exported symbol list %s", g_symbols_file);
  memset(seen, 0, sizeof seen);
  while (fgets(line, sizeof line, f)) {
    char* at = strchr(line, '@');
    line[strcspn(line, "\r\n")] = '\0';
    if (at) *at = '\0';
    if (!line[0] || line[0] == '#') continue;
    ++n_exported;
    for (i = 0; i < N_MISUSE_TESTS; ++i)
      if (strcmp(kMisuseTests[i].name + strlen("misuse_"), line) == 0) seen[i] = 1;
    if (!covered(line)) {
      ++n_missing;
      if (strlen(missing) + strlen(line) + 3 < sizeof missing) {
        strcat(missing, " ");
        strcat(missing, line);
      }
    }
  }
  fclose(f);
  for (i = 0; i < N_MISUSE_TESTS; ++i)
    if (!seen[i])
      fail_msg("misuse test %s names a function that %s does not list", kMisuseTests[i].name,
               g_symbols_file);
  if (n_missing)
    fail_msg("FAILED: %d exported function(s) of %s have no misuse test here:%s", n_missing,
             g_symbols_file, missing);
  assert_true(n_exported > 0);
}

static int group_setup(void** state) {
  const int64_t dims[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const char bytes[3] = {'a', 'b', 'c'};
  (void)state;
  if (max_device_create(MAX_DEVICE_KIND_CPU, 0, &g_device)) return -1;
  if (max_context_create(NULL, &g_context)) return -1;
  if (max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, values, sizeof values,
                                  &g_tensor))
    return -1;
  if (max_tensor_list_create(&g_list) || max_tensor_list_append(g_list, g_tensor)) return -1;
  if (max_buffer_create(bytes, sizeof bytes, &g_buffer)) return -1;
  return 0;
}

static int group_teardown(void** state) {
  (void)state;
  max_buffer_release(g_buffer);
  max_tensor_list_release(g_list);
  max_tensor_release(g_tensor);
  max_context_release(g_context);
  max_device_release(g_device);
  return 0;
}

int main(int argc, char** argv) {
  const struct CMUnitTest coverage[] = {cmocka_unit_test(covers_every_exported_function)};
  int failures;
  if (argc == 3 && strcmp(argv[1], "--coverage-only") == 0) {
    g_symbols_file = argv[2];
    return cmocka_run_group_tests_name("misuse coverage", coverage, NULL, NULL);
  }
  failures = cmocka_run_group_tests_name("misuse matrix", kMisuseTests, group_setup,
                                         group_teardown);
  failures += cmocka_run_group_tests_name("misuse coverage", coverage, NULL, NULL);
  return failures;
}
