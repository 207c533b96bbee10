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
/* 1.1: a graph "main" with input x: float32 [batch, 3] (g_value), another graph "other" with
 * its own input (g_other_value), and an attrs handle. */
static max_graph_t* g_graph;
static max_graph_t* g_other_graph;
static max_value_t* g_value;
static max_value_t* g_other_value;
static max_attrs_t* g_attrs;
/* 1.2: g_graph compiled (g_compiled), its model (g_model, no weights), and a spec. */
static max_compiled_model_t* g_compiled;
static max_model_t* g_model;
static max_tensor_spec_t* g_spec;

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

#define GRAPH_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_graph, AS(max_graph_t, g_tensor), out_type, "graph", out_arg, "graph")
/* Values are not refcounted objects: a wrong-kind pointer is caught by the value's own tag. */
#define VALUE_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_value, AS(max_value_t, g_tensor), out_type, "value", out_arg, "value")

#define TENSOR_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_tensor, AS(max_tensor_t, g_buffer), out_type, "tensor", out_arg, "tensor")
#define DEVICE_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_device, AS(max_device_t, g_tensor), out_type, "device", out_arg, "device")

static const max_dtype_t kUnknownDTypes[] = {0, 2, -1, 63, 65, 74, 83, 129, 142, 255, INT32_MIN, INT32_MAX};
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
  const int64_t wraps[1] = {((int64_t)1 << 58) + 1};
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
  /* 2^58 + 1 float64s are 2^64 + 64 bits: once OK with a byte size of 8. */
  EXPECT_STATUS(max_tensor_create(NULL, MAX_DTYPE_FLOAT64, wraps, 1, &t),
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
 * Graphs (1.1)
 * ====================================================================================== */

/* The number of ops and the printed text of a graph: a failed call must change neither. */
typedef struct {
  size_t num_ops, num_inputs, num_outputs;
  char text[8192];
} graph_snapshot;

static void snapshot(const max_graph_t* g, graph_snapshot* out) {
  max_buffer_t* text = NULL;
  const void* data = NULL;
  size_t size = 0;
  memset(out, 0, sizeof *out);
  EXPECT_OK(max_graph_num_ops(g, &out->num_ops));
  EXPECT_OK(max_graph_num_inputs(g, &out->num_inputs));
  EXPECT_OK(max_graph_num_outputs(g, &out->num_outputs));
  EXPECT_OK(max_graph_to_text(g, &text));
  EXPECT_OK(max_buffer_data(text, &data));
  EXPECT_OK(max_buffer_size(text, &size));
  assert_true(size < sizeof out->text);
  memcpy(out->text, data, size);
  max_buffer_release(text);
}

static void expect_unchanged(const max_graph_t* g, const graph_snapshot* before) {
  graph_snapshot after;
  snapshot(g, &after);
  assert_int_equal(after.num_ops, before->num_ops);
  assert_int_equal(after.num_inputs, before->num_inputs);
  assert_int_equal(after.num_outputs, before->num_outputs);
  assert_string_equal(after.text, before->text);
}

/* A dim expression nested `depth` parentheses deep around "1" (caller frees). */
static char* nested_parens(size_t depth) {
  char* s = (char*)malloc(2 * depth + 2);
  assert_non_null(s);
  memset(s, '(', depth);
  s[depth] = '1';
  memset(s + depth + 1, ')', depth);
  s[2 * depth + 1] = '\0';
  return s;
}

/* Shared by max_graph_add_input and max_graph_add_weight, which take the same type arguments. */
typedef max_status_t* (*add_typed_fn)(max_graph_t*, const char*, max_dtype_t, const max_dim_t*,
                                      int32_t, max_device_ref_kind_t, int32_t, max_value_t**);

static void typed_value_misuse(add_typed_fn f, const char* fn) {
  const max_dim_t dims[2] = {{0, "n"}, {4, NULL}};
  max_dim_t bad[1] = {{0, "2 +"}};
  max_dim_t many[MAX_TENSOR_MAX_RANK + 1];
  max_value_t* v = SENTINEL_PTR;
  graph_snapshot before;
  char* deep;
  size_t i;
  for (i = 0; i < sizeof many / sizeof many[0]; ++i) many[i].size = 1, many[i].expr = NULL;
  snapshot(g_graph, &before);

#define TYPED_BAD(call, ...)                \
  do {                                      \
    v = SENTINEL_PTR;                       \
    EXPECT_BAD(call, __VA_ARGS__);          \
    assert_null(v);                         \
  } while (0)
  TYPED_BAD(f(NULL, "w", MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, &v), "graph is NULL");
  EXPECT_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, NULL),
             "out_value is NULL");
  TYPED_BAD(f(AS(max_graph_t, g_tensor), "w", MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, &v),
            "graph is not a graph handle");
  TYPED_BAD(f(AS(max_graph_t, g_attrs), "w", MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, &v),
            "graph is not a graph handle");
  TYPED_BAD(f(g_graph, NULL, MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, &v), "name is NULL");
  for (i = 0; i < N_UNKNOWN_DTYPES; ++i)
    TYPED_BAD(f(g_graph, "w", kUnknownDTypes[i], dims, 2, MAX_DEVICE_REF_CPU, 0, &v), "dtype",
              "is not a dtype");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, dims, 2, 7, 0, &v), "device kind 7");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, dims, 2, -1, 0, &v), "device kind -1");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, -1, &v),
            "device id -1");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, NULL, 2, MAX_DEVICE_REF_CPU, 0, &v), "dims is NULL");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, dims, -1, MAX_DEVICE_REF_CPU, 0, &v), "-1");
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, many, MAX_TENSOR_MAX_RANK + 1, MAX_DEVICE_REF_CPU,
              0, &v), "65");
  /* bad dim expressions */
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "'2 +'");
  bad[0].expr = "";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "dim");
  bad[0].expr = "(batch";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "(batch");
  bad[0].expr = "batch $ 2";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "'$'");
  bad[0].expr = "n // 0";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "zero");
  bad[0].expr = "99999999999999999999";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "overflow");
  bad[0].expr = "-3";
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "negative");
  bad[0].expr = NULL;
  bad[0].size = -3;
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "negative");
  deep = nested_parens(5000); /* longer than the parser's limit */
  bad[0].expr = deep;
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "cannot parse dim");
  free(deep);
  deep = nested_parens(1000); /* short enough, too deep */
  bad[0].expr = deep;
  TYPED_BAD(f(g_graph, "w", MAX_DTYPE_FLOAT32, bad, 1, MAX_DEVICE_REF_CPU, 0, &v), "nested deeper");
  free(deep);
#undef TYPED_BAD
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_create) { EXPECT_BAD(max_graph_create("g", NULL), "out_graph is NULL"); }

MISUSE(max_graph_retain) {
  (void)fn;
  max_graph_retain(NULL);
  max_graph_retain(g_graph);
  max_graph_release(g_graph);
}

MISUSE(max_graph_release) {
  (void)fn;
  max_graph_release(NULL);
}

MISUSE(max_graph_name) { GRAPH_GETTER(max_graph_name, const char*, "out_name"); }

MISUSE(max_graph_add_input) {
  const max_dim_t dims[1] = {{3, NULL}};
  max_value_t* v = SENTINEL_PTR;
  graph_snapshot before;
  typed_value_misuse(max_graph_add_input, fn);
  snapshot(g_graph, &before);
  EXPECT_BAD(max_graph_add_input(g_graph, "", MAX_DTYPE_FLOAT32, dims, 1, MAX_DEVICE_REF_CPU, 0, &v),
             "empty name");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_add_input(g_graph, "x", MAX_DTYPE_FLOAT32, dims, 1, MAX_DEVICE_REF_CPU,
                                    0, &v),
                MAX_STATUS_ALREADY_EXISTS, fn, "'x'");
  assert_null(v);
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_add_constant) {
  max_value_t* v = SENTINEL_PTR;
  graph_snapshot before;
  snapshot(g_graph, &before);
  EXPECT_BAD(max_graph_add_constant(NULL, g_tensor, &v), "graph is NULL");
  assert_null(v);
  EXPECT_BAD(max_graph_add_constant(g_graph, g_tensor, NULL), "out_value is NULL");
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant(g_graph, NULL, &v), "tensor is NULL");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant(AS(max_graph_t, g_tensor), g_tensor, &v), "not a graph handle");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant(g_graph, AS(max_tensor_t, g_graph), &v), "not a tensor handle");
  assert_null(v);
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_add_constant_on) {
  max_value_t* v = SENTINEL_PTR;
  graph_snapshot before;
  snapshot(g_graph, &before);
  EXPECT_BAD(max_graph_add_constant_on(NULL, g_tensor, MAX_DEVICE_REF_GPU, 0, &v), "graph is NULL");
  assert_null(v);
  EXPECT_BAD(max_graph_add_constant_on(g_graph, g_tensor, MAX_DEVICE_REF_GPU, 0, NULL), "out_value is NULL");
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant_on(g_graph, NULL, MAX_DEVICE_REF_GPU, 0, &v), "tensor is NULL");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant_on(g_graph, AS(max_tensor_t, g_graph), MAX_DEVICE_REF_GPU, 0, &v),
             "not a tensor handle");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant_on(g_graph, g_tensor, 7, 0, &v), "device kind 7");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_constant_on(g_graph, g_tensor, MAX_DEVICE_REF_GPU, -1, &v), "device id -1");
  assert_null(v);
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_add_weight) {
  const max_dim_t dims[1] = {{3, NULL}};
  const max_dim_t other[1] = {{4, NULL}};
  max_value_t* v = SENTINEL_PTR;
  graph_snapshot before;
  typed_value_misuse(max_graph_add_weight, fn);
  /* a second declaration with another type */
  EXPECT_OK(max_graph_add_weight(g_other_graph, "w_misuse", MAX_DTYPE_FLOAT32, dims, 1,
                                 MAX_DEVICE_REF_CPU, 0, &v));
  snapshot(g_other_graph, &before);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_weight(g_other_graph, "w_misuse", MAX_DTYPE_FLOAT32, other, 1,
                                  MAX_DEVICE_REF_CPU, 0, &v),
             "'w_misuse'");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_weight(g_other_graph, "w_misuse", MAX_DTYPE_INT32, dims, 1,
                                  MAX_DEVICE_REF_CPU, 0, &v),
             "'w_misuse'");
  assert_null(v);
  v = SENTINEL_PTR;
  EXPECT_BAD(max_graph_add_weight(g_other_graph, "", MAX_DTYPE_INT32, dims, 1, MAX_DEVICE_REF_CPU,
                                  0, &v),
             "name");
  assert_null(v);
  expect_unchanged(g_other_graph, &before);
}

MISUSE(max_graph_add_op) {
  max_value_t* in1[1] = {g_value};
  max_value_t* in2[2] = {g_value, g_value};
  max_value_t* mixed[2] = {g_value, g_other_value};
  max_value_t* with_null[2] = {g_value, NULL};
  max_value_t* wrong_kind[1] = {AS(max_value_t, g_tensor)};
  max_value_t* outs[4] = {SENTINEL_PTR, SENTINEL_PTR, SENTINEL_PTR, SENTINEL_PTR};
  size_t n = 99;
  graph_snapshot before;
  max_attrs_t* bad_attrs = NULL;
  snapshot(g_graph, &before);

  EXPECT_BAD(max_graph_add_op(NULL, "relu", 0, in1, 1, NULL, outs, 4, &n), "graph is NULL");
  assert_int_equal(n, 0);
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, in1, 1, NULL, outs, 4, NULL),
             "out_num_outputs is NULL");
  n = 99;
  EXPECT_BAD(max_graph_add_op(AS(max_graph_t, g_tensor), "relu", 0, in1, 1, NULL, outs, 4, &n),
             "graph is not a graph handle");
  assert_int_equal(n, 0);
  EXPECT_BAD(max_graph_add_op(g_graph, NULL, 0, in1, 1, NULL, outs, 4, &n), "op is NULL");
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, NULL, 1, NULL, outs, 4, &n), "inputs is NULL");
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, in1, 1, NULL, NULL, 4, &n), "outputs is NULL");
  EXPECT_BAD(max_graph_add_op(g_graph, "add", 0, with_null, 2, NULL, outs, 4, &n),
             "inputs[1] is NULL");
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, wrong_kind, 1, NULL, outs, 4, &n),
             "inputs[0] is not a value handle");
  /* a value of another graph */
  n = 99;
  EXPECT_BAD(max_graph_add_op(g_graph, "add", 0, mixed, 2, NULL, outs, 4, &n), "inputs[1]",
             "graph 'other'");
  assert_int_equal(n, 0);
  /* wrong-kind attrs */
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, in1, 1, AS(max_attrs_t, g_graph), outs, 4, &n),
             "attrs is not an attrs handle");
  /* unknown op, unknown version */
  EXPECT_STATUS(max_graph_add_op(g_graph, "no_such_op", 0, in1, 1, NULL, outs, 4, &n),
                MAX_STATUS_NOT_FOUND, fn, "'no_such_op'");
  EXPECT_STATUS(max_graph_add_op(g_graph, "relu", 99, in1, 1, NULL, outs, 4, &n),
                MAX_STATUS_NOT_FOUND, fn, "'relu'", "99");
  EXPECT_STATUS(max_graph_add_op(g_graph, "relu", -1, in1, 1, NULL, outs, 4, &n),
                MAX_STATUS_NOT_FOUND, fn, "'relu'");
  /* wrong arity, attrs of the wrong kind */
  EXPECT_BAD(max_graph_add_op(g_graph, "relu", 0, in2, 2, NULL, outs, 4, &n), "op 'relu'", "got 2");
  EXPECT_BAD(max_graph_add_op(g_graph, "add", 0, in1, 1, NULL, outs, 4, &n), "op 'add'", "got 1");
  EXPECT_OK(max_attrs_create(&bad_attrs));
  EXPECT_OK(max_attrs_set_string(bad_attrs, "axis", "zero"));
  EXPECT_BAD(max_graph_add_op(g_graph, "softmax", 0, in1, 1, bad_attrs, outs, 4, &n),
             "op 'softmax'", "'axis'");
  max_attrs_release(bad_attrs);
  /* too small a capacity: OUT_OF_RANGE, the op is not added, and the count it needs is
   * reported (the header's "NULL with capacity 0 to ask only for the count") */
  n = 99;
  EXPECT_STATUS(max_graph_add_op(g_graph, "relu", 0, in1, 1, NULL, outs, 0, &n),
                MAX_STATUS_OUT_OF_RANGE, fn, "'relu'");
  assert_int_equal(n, 1);
  n = 99;
  EXPECT_STATUS(max_graph_add_op(g_graph, "relu", 0, in1, 1, NULL, NULL, 0, &n),
                MAX_STATUS_OUT_OF_RANGE, fn, "'relu'");
  assert_int_equal(n, 1);
  assert_ptr_equal(outs[0], SENTINEL_PTR);
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_set_outputs) {
  max_value_t* values[2] = {g_value, g_value};
  max_value_t* mixed[1] = {g_other_value};
  max_value_t* with_null[1] = {NULL};
  max_value_t* wrong_kind[1] = {AS(max_value_t, g_buffer)};
  const char* same[2] = {"y", "y"};
  graph_snapshot before;
  snapshot(g_graph, &before);
  EXPECT_BAD(max_graph_set_outputs(NULL, values, NULL, 1), "graph is NULL");
  EXPECT_BAD(max_graph_set_outputs(AS(max_graph_t, g_list), values, NULL, 1), "not a graph handle");
  EXPECT_BAD(max_graph_set_outputs(g_graph, NULL, NULL, 1), "values is NULL");
  EXPECT_BAD(max_graph_set_outputs(g_graph, with_null, NULL, 1), "values[0] is NULL");
  EXPECT_BAD(max_graph_set_outputs(g_graph, wrong_kind, NULL, 1), "values[0] is not a value");
  EXPECT_BAD(max_graph_set_outputs(g_graph, mixed, NULL, 1), "values[0]", "graph 'other'");
  EXPECT_BAD(max_graph_set_outputs(g_graph, values, same, 2), "'y'");
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_add_subgraph) {
  int64_t index = 12345;
  graph_snapshot before;
  snapshot(g_graph, &before);
  EXPECT_BAD(max_graph_add_subgraph(NULL, g_other_graph, &index), "graph is NULL");
  assert_int_equal(index, 0);
  EXPECT_BAD(max_graph_add_subgraph(g_graph, NULL, &index), "subgraph is NULL");
  EXPECT_BAD(max_graph_add_subgraph(g_graph, g_other_graph, NULL), "out_index is NULL");
  index = 12345;
  EXPECT_BAD(max_graph_add_subgraph(AS(max_graph_t, g_attrs), g_other_graph, &index),
             "graph is not a graph handle");
  assert_int_equal(index, 0);
  EXPECT_BAD(max_graph_add_subgraph(g_graph, AS(max_graph_t, g_tensor), &index),
             "subgraph is not a graph handle");
  expect_unchanged(g_graph, &before);
}

MISUSE(max_graph_num_inputs) { GRAPH_GETTER(max_graph_num_inputs, size_t, "out_count"); }
MISUSE(max_graph_num_outputs) { GRAPH_GETTER(max_graph_num_outputs, size_t, "out_count"); }
MISUSE(max_graph_num_ops) { GRAPH_GETTER(max_graph_num_ops, size_t, "out_count"); }

/* max_graph_input and max_graph_output: (graph, index, out_value, out_name?) */
typedef max_status_t* (*named_at_fn)(const max_graph_t*, size_t, max_value_t**, const char**);

static void named_at_misuse(named_at_fn f, size_t count, const char* fn) {
  max_value_t* v = SENTINEL_PTR;
  const char* name = SENTINEL_PTR;
  EXPECT_BAD(f(NULL, 0, &v, &name), "graph is NULL");
  assert_null(v);
  assert_null(name);
  EXPECT_BAD(f(g_graph, 0, NULL, &name), "out_value is NULL");
  v = SENTINEL_PTR;
  name = SENTINEL_PTR;
  EXPECT_BAD(f(AS(max_graph_t, g_tensor), 0, &v, &name), "graph is not a graph handle");
  assert_null(v);
  assert_null(name);
  v = SENTINEL_PTR;
  name = SENTINEL_PTR;
  EXPECT_STATUS(f(g_graph, count, &v, &name), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(v);
  assert_null(name);
  v = SENTINEL_PTR;
  EXPECT_STATUS(f(g_graph, SIZE_MAX, &v, NULL), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(v);
}

MISUSE(max_graph_input) {
  size_t n = 0;
  EXPECT_OK(max_graph_num_inputs(g_graph, &n));
  named_at_misuse(max_graph_input, n, fn);
}

MISUSE(max_graph_output) {
  size_t n = 0;
  EXPECT_OK(max_graph_num_outputs(g_graph, &n));
  named_at_misuse(max_graph_output, n, fn);
}

MISUSE(max_graph_verify) {
  EXPECT_BAD(max_graph_verify(NULL), "graph is NULL");
  EXPECT_BAD(max_graph_verify(AS(max_graph_t, g_context)), "not a graph handle");
  EXPECT_OK(max_graph_verify(g_graph));
}

/* ---- values ---- */

MISUSE(max_value_dtype) { VALUE_GETTER(max_value_dtype, max_dtype_t, "out_dtype"); }
MISUSE(max_value_rank) { VALUE_GETTER(max_value_rank, int32_t, "out_rank"); }
MISUSE(max_value_type_string) { VALUE_GETTER(max_value_type_string, const char*, "out_text"); }

MISUSE(max_value_dim) {
  int64_t size = 12345;
  const char* expr = SENTINEL_PTR;
  EXPECT_BAD(max_value_dim(NULL, 0, &size, &expr), "value is NULL");
  assert_int_equal(size, 0);
  assert_null(expr);
  EXPECT_BAD(max_value_dim(g_value, 0, NULL, &expr), "out_size is NULL");
  size = 12345;
  expr = SENTINEL_PTR;
  EXPECT_BAD(max_value_dim(AS(max_value_t, g_graph), 0, &size, &expr), "not a value handle");
  assert_int_equal(size, 0);
  assert_null(expr);
  expr = SENTINEL_PTR;
  EXPECT_STATUS(max_value_dim(g_value, 2, &size, &expr), MAX_STATUS_OUT_OF_RANGE, fn, "index 2");
  assert_null(expr);
  EXPECT_STATUS(max_value_dim(g_value, -1, &size, NULL), MAX_STATUS_OUT_OF_RANGE, fn, "index -1");
  EXPECT_STATUS(max_value_dim(g_value, INT32_MAX, &size, NULL), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  EXPECT_OK(max_value_dim(g_value, 1, &size, NULL)); /* out_expr may be NULL */
  assert_int_equal(size, 3);
}

MISUSE(max_value_device) {
  max_device_ref_kind_t kind = 12345;
  int32_t id = 12345;
  EXPECT_BAD(max_value_device(NULL, &kind, &id), "value is NULL");
  assert_int_equal(kind, 0);
  assert_int_equal(id, 0);
  EXPECT_BAD(max_value_device(g_value, NULL, &id), "out_kind is NULL");
  EXPECT_BAD(max_value_device(g_value, &kind, NULL), "out_id is NULL");
  kind = 12345;
  id = 12345;
  EXPECT_BAD(max_value_device(AS(max_value_t, g_attrs), &kind, &id), "not a value handle");
  assert_int_equal(kind, 0);
  assert_int_equal(id, 0);
}

/* ---- attrs ---- */

MISUSE(max_attrs_create) { EXPECT_BAD(max_attrs_create(NULL), "out_attrs is NULL"); }

MISUSE(max_attrs_retain) {
  (void)fn;
  max_attrs_retain(NULL);
  max_attrs_retain(g_attrs);
  max_attrs_release(g_attrs);
}

MISUSE(max_attrs_release) {
  (void)fn;
  max_attrs_release(NULL);
}

/* Every setter: NULL attrs, a wrong-kind handle, a NULL name. */
#define ATTRS_SETTER_MISUSE(f, ...)                                                   \
  do {                                                                                \
    EXPECT_BAD(f(NULL, "a", __VA_ARGS__), "attrs is NULL");                           \
    EXPECT_BAD(f(AS(max_attrs_t, g_graph), "a", __VA_ARGS__), "not an attrs handle"); \
    EXPECT_BAD(f(AS(max_attrs_t, g_tensor), "a", __VA_ARGS__), "not an attrs handle"); \
    EXPECT_BAD(f(g_attrs, NULL, __VA_ARGS__), "name is NULL");                        \
    EXPECT_OK(f(g_attrs, "a", __VA_ARGS__));                                          \
  } while (0)

MISUSE(max_attrs_set_int) { ATTRS_SETTER_MISUSE(max_attrs_set_int, 1); }
MISUSE(max_attrs_set_float) { ATTRS_SETTER_MISUSE(max_attrs_set_float, 1.5); }
MISUSE(max_attrs_set_bool) { ATTRS_SETTER_MISUSE(max_attrs_set_bool, 1); }

MISUSE(max_attrs_set_string) {
  ATTRS_SETTER_MISUSE(max_attrs_set_string, "v");
  EXPECT_BAD(max_attrs_set_string(g_attrs, "a", NULL), "value is NULL");
}

MISUSE(max_attrs_set_dtype) {
  size_t i;
  ATTRS_SETTER_MISUSE(max_attrs_set_dtype, MAX_DTYPE_INT64);
  for (i = 0; i < N_UNKNOWN_DTYPES; ++i)
    EXPECT_BAD(max_attrs_set_dtype(g_attrs, "a", kUnknownDTypes[i]), "is not a dtype");
}

MISUSE(max_attrs_set_ints) {
  const int64_t v[2] = {1, 2};
  ATTRS_SETTER_MISUSE(max_attrs_set_ints, v, 2);
  EXPECT_BAD(max_attrs_set_ints(g_attrs, "a", NULL, 2), "values is NULL");
  EXPECT_OK(max_attrs_set_ints(g_attrs, "a", NULL, 0)); /* an empty list */
}

MISUSE(max_attrs_set_floats) {
  const double v[2] = {1, 2};
  ATTRS_SETTER_MISUSE(max_attrs_set_floats, v, 2);
  EXPECT_BAD(max_attrs_set_floats(g_attrs, "a", NULL, 2), "values is NULL");
  EXPECT_OK(max_attrs_set_floats(g_attrs, "a", NULL, 0));
}

MISUSE(max_attrs_set_dims) {
  const max_dim_t v[2] = {{2, NULL}, {0, "batch"}};
  max_dim_t bad[1] = {{0, "2 +"}};
  max_dim_t many[MAX_TENSOR_MAX_RANK + 1];
  char* deep = nested_parens(5000);
  size_t i;
  for (i = 0; i < sizeof many / sizeof many[0]; ++i) many[i].size = 1, many[i].expr = NULL;
  ATTRS_SETTER_MISUSE(max_attrs_set_dims, v, 2);
  EXPECT_BAD(max_attrs_set_dims(g_attrs, "a", NULL, 2), "dims is NULL");
  EXPECT_BAD(max_attrs_set_dims(g_attrs, "a", bad, 1), "'2 +'");
  EXPECT_BAD(max_attrs_set_dims(g_attrs, "a", many, MAX_TENSOR_MAX_RANK + 1), "65");
  EXPECT_BAD(max_attrs_set_dims(g_attrs, "a", many, SIZE_MAX), "dims");
  bad[0].expr = deep;
  EXPECT_BAD(max_attrs_set_dims(g_attrs, "a", bad, 1), "cannot parse dim");
  free(deep);
}

MISUSE(max_attrs_set_graph) {
  ATTRS_SETTER_MISUSE(max_attrs_set_graph, 0);
  EXPECT_BAD(max_attrs_set_graph(g_attrs, "a", -1), "-1");
  EXPECT_BAD(max_attrs_set_graph(g_attrs, "a", INT64_MIN), "negative");
}

MISUSE(max_attrs_set_device) {
  ATTRS_SETTER_MISUSE(max_attrs_set_device, MAX_DEVICE_REF_GPU, 1);
  EXPECT_BAD(max_attrs_set_device(g_attrs, "a", 2, 0), "device kind 2");
  EXPECT_BAD(max_attrs_set_device(g_attrs, "a", -1, 0), "device kind -1");
  EXPECT_BAD(max_attrs_set_device(g_attrs, "a", MAX_DEVICE_REF_CPU, -1), "device id -1");
}

/* ---- the op registry ---- */

MISUSE(max_op_count) { EXPECT_BAD(max_op_count(NULL), "out_count is NULL"); }

MISUSE(max_op_at) {
  size_t n = 0;
  const char* name = SENTINEL_PTR;
  int32_t version = 12345;
  EXPECT_OK(max_op_count(&n));
  EXPECT_BAD(max_op_at(0, NULL, &version), "out_name is NULL");
  EXPECT_BAD(max_op_at(0, &name, NULL), "out_version is NULL");
  name = SENTINEL_PTR;
  version = 12345;
  EXPECT_STATUS(max_op_at(n, &name, &version), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(name);
  assert_int_equal(version, 0);
  EXPECT_STATUS(max_op_at(SIZE_MAX, &name, &version), MAX_STATUS_OUT_OF_RANGE, fn, "index");
}

/* (name, version, out_count) lookups */
typedef max_status_t* (*op_count_fn)(const char*, int32_t, size_t*);

static void op_count_misuse(op_count_fn f, const char* fn) {
  size_t n = 12345;
  EXPECT_BAD(f(NULL, 0, &n), "name is NULL");
  assert_int_equal(n, 0);
  EXPECT_BAD(f("add", 0, NULL), "out_count is NULL");
  n = 12345;
  EXPECT_STATUS(f("no_such_op", 0, &n), MAX_STATUS_NOT_FOUND, fn, "'no_such_op'");
  assert_int_equal(n, 0);
  EXPECT_STATUS(f("", 0, &n), MAX_STATUS_NOT_FOUND, fn, "''");
  EXPECT_STATUS(f("add", 99, &n), MAX_STATUS_NOT_FOUND, fn, "'add'", "99");
  EXPECT_STATUS(f("add", -1, &n), MAX_STATUS_NOT_FOUND, fn, "'add'");
}

MISUSE(max_op_num_inputs) { op_count_misuse(max_op_num_inputs, fn); }
MISUSE(max_op_num_attrs) { op_count_misuse(max_op_num_attrs, fn); }

MISUSE(max_op_input) {
  const char* name = SENTINEL_PTR;
  max_op_input_arity_t arity = 12345;
  EXPECT_BAD(max_op_input(NULL, 0, 0, &name, &arity), "name is NULL");
  assert_null(name);
  EXPECT_BAD(max_op_input("add", 0, 0, NULL, &arity), "out_input_name is NULL");
  EXPECT_BAD(max_op_input("add", 0, 0, &name, NULL), "out_arity is NULL");
  name = SENTINEL_PTR;
  arity = 12345;
  EXPECT_STATUS(max_op_input("no_such_op", 0, 0, &name, &arity), MAX_STATUS_NOT_FOUND, fn,
                "'no_such_op'");
  assert_null(name);
  assert_int_equal(arity, 0);
  EXPECT_STATUS(max_op_input("add", 99, 0, &name, &arity), MAX_STATUS_NOT_FOUND, fn, "99");
  name = SENTINEL_PTR;
  EXPECT_STATUS(max_op_input("add", 0, 2, &name, &arity), MAX_STATUS_OUT_OF_RANGE, fn,
                "op 'add'", "index 2");
  assert_null(name);
  EXPECT_STATUS(max_op_input("add", 0, SIZE_MAX, &name, &arity), MAX_STATUS_OUT_OF_RANGE, fn,
                "index");
}

MISUSE(max_op_attr) {
  const char* name = SENTINEL_PTR;
  max_attr_kind_t kind = 12345;
  max_op_attr_presence_t presence = 12345;
  EXPECT_BAD(max_op_attr(NULL, 0, 0, &name, &kind, &presence), "name is NULL");
  assert_null(name);
  EXPECT_BAD(max_op_attr("softmax", 0, 0, NULL, &kind, &presence), "out_attr_name is NULL");
  EXPECT_BAD(max_op_attr("softmax", 0, 0, &name, NULL, &presence), "out_kind is NULL");
  EXPECT_BAD(max_op_attr("softmax", 0, 0, &name, &kind, NULL), "out_presence is NULL");
  name = SENTINEL_PTR;
  kind = presence = 12345;
  EXPECT_STATUS(max_op_attr("no_such_op", 0, 0, &name, &kind, &presence), MAX_STATUS_NOT_FOUND, fn,
                "'no_such_op'");
  assert_null(name);
  assert_int_equal(kind, 0);
  assert_int_equal(presence, 0);
  EXPECT_STATUS(max_op_attr("softmax", 0, 1, &name, &kind, &presence), MAX_STATUS_OUT_OF_RANGE,
                fn, "op 'softmax'", "index 1");
  assert_null(name);
  EXPECT_STATUS(max_op_attr("add", 0, 0, &name, &kind, &presence), MAX_STATUS_OUT_OF_RANGE, fn,
                "op 'add'");
}

/* ---- serialization and printing ---- */

MISUSE(max_graph_serialize) {
  GRAPH_GETTER(max_graph_serialize, max_buffer_t*, "out_buffer");
}

MISUSE(max_graph_deserialize) {
  static const unsigned char garbage[64] = {'n', 'o', 't', ' ', 'a', ' ', 'g', 'r', 'a', 'p', 'h'};
  max_graph_t* g = SENTINEL_PTR;
  EXPECT_BAD(max_graph_deserialize(NULL, 16, &g), "data is NULL with size 16");
  assert_null(g);
  EXPECT_BAD(max_graph_deserialize(garbage, sizeof garbage, NULL), "out_graph is NULL");
  g = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_deserialize(garbage, sizeof garbage, &g), MAX_STATUS_DATA_LOSS, fn);
  assert_null(g);
  g = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_deserialize(NULL, 0, &g), MAX_STATUS_DATA_LOSS, fn);
  assert_null(g);
  g = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_deserialize(garbage, 1, &g), MAX_STATUS_DATA_LOSS, fn);
  assert_null(g);
}

MISUSE(max_graph_save) {
  EXPECT_BAD(max_graph_save(NULL, "/tmp/never_written.maxg"), "graph is NULL");
  EXPECT_BAD(max_graph_save(g_graph, NULL), "path is NULL");
  EXPECT_BAD(max_graph_save(AS(max_graph_t, g_tensor), "/tmp/never_written.maxg"),
             "not a graph handle");
  EXPECT_STATUS(max_graph_save(g_graph, "/nonexistent_dir_of_max_c_tests/g.maxg"),
                MAX_STATUS_NOT_FOUND, fn, "/nonexistent_dir_of_max_c_tests/g.maxg");
}

MISUSE(max_graph_load) {
  max_graph_t* g = SENTINEL_PTR;
  EXPECT_BAD(max_graph_load(NULL, &g), "path is NULL");
  assert_null(g);
  EXPECT_BAD(max_graph_load("/nonexistent_file_of_max_c_tests.maxg", NULL), "out_graph is NULL");
  g = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_load("/nonexistent_file_of_max_c_tests.maxg", &g), MAX_STATUS_NOT_FOUND,
                fn, "/nonexistent_file_of_max_c_tests.maxg");
  assert_null(g);
  g = SENTINEL_PTR;
  EXPECT_BAD(max_graph_load("/", &g), "not a regular file");
  assert_null(g);
  g = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_load("/dev/null", &g), MAX_STATUS_INVALID_ARGUMENT, fn);
  assert_null(g);
}

MISUSE(max_graph_to_text) { GRAPH_GETTER(max_graph_to_text, max_buffer_t*, "out_text"); }
MISUSE(max_graph_to_dot) { GRAPH_GETTER(max_graph_to_dot, max_buffer_t*, "out_dot"); }

/* ======================================================================================
 * 1.2: the engine
 * ====================================================================================== */

#define COMPILED_GETTER(f, out_type, out_arg)                                                  \
  GETTER_MISUSE(f, g_compiled, AS(max_compiled_model_t, g_tensor), out_type, "compiled", out_arg, \
                "compiled model")
#define SPEC_GETTER(f, out_type, out_arg) \
  GETTER_MISUSE(f, g_spec, AS(max_tensor_spec_t, g_tensor), out_type, "spec", out_arg, "tensor spec")

MISUSE(max_compile_options_init) {
  max_compile_options_t o;
  EXPECT_BAD(max_compile_options_init(NULL, sizeof o), "options is NULL");
  EXPECT_BAD(max_compile_options_init(&o, 0), "struct_size 0");
}

MISUSE(max_context_compile) {
  max_compiled_model_t* c = SENTINEL_PTR;
  max_compile_options_t o;
  max_graph_t* empty = NULL;
  EXPECT_BAD(max_context_compile(NULL, g_graph, NULL, &c), "context is NULL");
  assert_null(c);
  EXPECT_BAD(max_context_compile(g_context, NULL, NULL, &c), "graph is NULL");
  EXPECT_BAD(max_context_compile(g_context, g_graph, NULL, NULL), "out_compiled is NULL");
  EXPECT_BAD(max_context_compile(g_context, AS(max_graph_t, g_tensor), NULL, &c), "not a graph handle");
  EXPECT_BAD(max_context_compile(AS(max_context_t, g_tensor), g_graph, NULL, &c), "not a context handle");
  EXPECT_OK(max_compile_options_init(&o, sizeof o));
  o.plan_cache_capacity = 0;
  c = SENTINEL_PTR;
  EXPECT_BAD(max_context_compile(g_context, g_graph, &o, &c), "plan_cache_capacity");
  assert_null(c);
  o.struct_size = 1;
  EXPECT_BAD(max_context_compile(g_context, g_graph, &o, &c), "struct_size");
  EXPECT_OK(max_graph_create("empty", &empty));
  EXPECT_BAD(max_context_compile(g_context, empty, NULL, &c), "no outputs");
  assert_null(c);
  max_graph_release(empty);
}

MISUSE(max_context_compile_file) {
  max_compiled_model_t* c = SENTINEL_PTR;
  EXPECT_BAD(max_context_compile_file(NULL, "/x.maxg", NULL, &c), "context is NULL");
  assert_null(c);
  EXPECT_BAD(max_context_compile_file(g_context, NULL, NULL, &c), "path is NULL");
  EXPECT_BAD(max_context_compile_file(g_context, "/x.maxg", NULL, NULL), "out_compiled is NULL");
  c = SENTINEL_PTR;
  EXPECT_STATUS(max_context_compile_file(g_context, "/nonexistent_file_of_max_c_tests.maxg", NULL, &c),
                MAX_STATUS_NOT_FOUND, fn, "/nonexistent_file_of_max_c_tests.maxg");
  assert_null(c);
  {
    max_compile_options_t o;
    EXPECT_OK(max_compile_options_init(&o, sizeof o));
    o.file_device = AS(max_device_t, g_tensor);
    c = SENTINEL_PTR;
    EXPECT_BAD(max_context_compile_file(g_context, "/x.maxg", &o, &c), "options->file_device", "not a device handle");
    assert_null(c);
  }
}

MISUSE(max_compiled_model_retain) {
  (void)fn;
  max_compiled_model_retain(NULL);
  max_compiled_model_retain(g_compiled);
  max_compiled_model_release(g_compiled);
}
MISUSE(max_compiled_model_release) {
  (void)fn;
  max_compiled_model_release(NULL);
}

MISUSE(max_compiled_model_num_inputs) { COMPILED_GETTER(max_compiled_model_num_inputs, size_t, "out_count"); }
MISUSE(max_compiled_model_num_outputs) { COMPILED_GETTER(max_compiled_model_num_outputs, size_t, "out_count"); }
MISUSE(max_compiled_model_num_weights) { COMPILED_GETTER(max_compiled_model_num_weights, size_t, "out_count"); }

typedef max_status_t* (*spec_at_fn)(const max_compiled_model_t*, size_t, max_tensor_spec_t**);
static void spec_at_misuse(spec_at_fn f, size_t count, const char* fn) {
  max_tensor_spec_t* s = SENTINEL_PTR;
  EXPECT_BAD(f(NULL, 0, &s), "compiled is NULL");
  assert_null(s);
  EXPECT_BAD(f(g_compiled, 0, NULL), "out_spec is NULL");
  s = SENTINEL_PTR;
  EXPECT_BAD(f(AS(max_compiled_model_t, g_tensor), 0, &s), "not a compiled model handle");
  assert_null(s);
  s = SENTINEL_PTR;
  EXPECT_STATUS(f(g_compiled, count, &s), MAX_STATUS_OUT_OF_RANGE, fn, "index");
  assert_null(s);
  EXPECT_STATUS(f(g_compiled, SIZE_MAX, &s), MAX_STATUS_OUT_OF_RANGE, fn, "index");
}
MISUSE(max_compiled_model_input) { spec_at_misuse(max_compiled_model_input, 1, fn); }
MISUSE(max_compiled_model_output) { spec_at_misuse(max_compiled_model_output, 1, fn); }
MISUSE(max_compiled_model_weight) { spec_at_misuse(max_compiled_model_weight, 0, fn); }

MISUSE(max_tensor_spec_retain) {
  (void)fn;
  max_tensor_spec_retain(NULL);
  max_tensor_spec_retain(g_spec);
  max_tensor_spec_release(g_spec);
}
MISUSE(max_tensor_spec_release) {
  (void)fn;
  max_tensor_spec_release(NULL);
}
MISUSE(max_tensor_spec_name) { SPEC_GETTER(max_tensor_spec_name, const char*, "out_name"); }
MISUSE(max_tensor_spec_dtype) { SPEC_GETTER(max_tensor_spec_dtype, max_dtype_t, "out_dtype"); }
MISUSE(max_tensor_spec_rank) { SPEC_GETTER(max_tensor_spec_rank, size_t, "out_rank"); }
MISUSE(max_tensor_spec_device) { SPEC_GETTER(max_tensor_spec_device, max_device_t*, "out_device"); }

MISUSE(max_tensor_spec_dim) {
  int64_t d = 7;
  const char* name = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_spec_dim(NULL, 0, &d, &name), "spec is NULL");
  assert_int_equal(d, 0);
  assert_null(name);
  EXPECT_BAD(max_tensor_spec_dim(g_spec, 0, NULL, &name), "out_dim is NULL");
  EXPECT_BAD(max_tensor_spec_dim(AS(max_tensor_spec_t, g_tensor), 0, &d, NULL), "not a tensor spec handle");
  name = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_spec_dim(g_spec, 2, &d, &name), MAX_STATUS_OUT_OF_RANGE, fn, "axis 2");
  assert_null(name);
}

MISUSE(max_model_create) {
  max_model_t* m = SENTINEL_PTR;
  const char* names[1] = {"w"};
  max_tensor_t* weights[1] = {NULL};
  EXPECT_BAD(max_model_create(NULL, NULL, NULL, 0, &m), "compiled is NULL");
  assert_null(m);
  EXPECT_BAD(max_model_create(g_compiled, NULL, NULL, 0, NULL), "out_model is NULL");
  EXPECT_BAD(max_model_create(AS(max_compiled_model_t, g_tensor), NULL, NULL, 0, &m), "not a compiled model handle");
  EXPECT_BAD(max_model_create(g_compiled, NULL, weights, 1, &m), "weight_names is NULL");
  EXPECT_BAD(max_model_create(g_compiled, names, NULL, 1, &m), "weights is NULL");
  EXPECT_BAD(max_model_create(g_compiled, names, weights, 1, &m), "weights[0] is NULL");
  weights[0] = g_tensor;
  m = SENTINEL_PTR;
  EXPECT_BAD(max_model_create(g_compiled, names, weights, 1, &m), "weight 'w' is not a weight of this model");
  assert_null(m);
}

MISUSE(max_model_retain) {
  (void)fn;
  max_model_retain(NULL);
  max_model_retain(g_model);
  max_model_release(g_model);
}
MISUSE(max_model_release) {
  (void)fn;
  max_model_release(NULL);
}

MISUSE(max_model_compiled_model) {
  GETTER_MISUSE(max_model_compiled_model, g_model, AS(max_model_t, g_tensor), max_compiled_model_t*,
                "model", "out_compiled", "model");
}

MISUSE(max_model_execute) {
  max_tensor_list_t* out = SENTINEL_PTR;
  max_tensor_t* inputs[2] = {g_tensor, g_tensor};
  max_tensor_t* wrong[1] = {AS(max_tensor_t, g_buffer)};
  EXPECT_BAD(max_model_execute(NULL, inputs, 1, &out), "model is NULL");
  assert_null(out);
  EXPECT_BAD(max_model_execute(g_model, inputs, 1, NULL), "out_outputs is NULL");
  EXPECT_BAD(max_model_execute(AS(max_model_t, g_tensor), inputs, 1, &out), "not a model handle");
  EXPECT_BAD(max_model_execute(g_model, NULL, 1, &out), "inputs is NULL");
  EXPECT_BAD(max_model_execute(g_model, wrong, 1, &out), "inputs[0] is not a tensor handle");
  out = SENTINEL_PTR;
  EXPECT_BAD(max_model_execute(g_model, inputs, 2, &out), "takes 1 input(s) (x) but got 2");
  assert_null(out);
  EXPECT_BAD(max_model_execute(g_model, inputs, 0, &out), "takes 1 input(s) (x) but got 0");
  {
    /* The count is checked before the array is read: one element and a count far past it. */
    max_tensor_t* one[1] = {g_tensor};
    char expected[64];
    snprintf(expected, sizeof expected, "takes 1 input(s) (x) but got %zu", (size_t)SIZE_MAX);
    out = SENTINEL_PTR;
    EXPECT_BAD(max_model_execute(g_model, one, SIZE_MAX, &out), expected);
    assert_null(out);
  }
}

MISUSE(max_model_execute_named) {
  max_tensor_list_t* out = SENTINEL_PTR;
  max_tensor_t* inputs[2] = {g_tensor, g_tensor};
  const char* names[2] = {"x", "x"};
  const char* unknown[1] = {"nope"};
  EXPECT_BAD(max_model_execute_named(NULL, names, inputs, 1, &out), "model is NULL");
  assert_null(out);
  EXPECT_BAD(max_model_execute_named(g_model, names, inputs, 1, NULL), "out_outputs is NULL");
  EXPECT_BAD(max_model_execute_named(g_model, NULL, inputs, 1, &out), "names is NULL");
  EXPECT_BAD(max_model_execute_named(g_model, names, NULL, 1, &out), "inputs is NULL");
  EXPECT_BAD(max_model_execute_named(g_model, names, inputs, 2, &out), "input 'x' is given twice");
  EXPECT_BAD(max_model_execute_named(g_model, names, inputs, 0, &out), "input 'x' is missing");
  out = SENTINEL_PTR;
  EXPECT_STATUS(max_model_execute_named(g_model, unknown, inputs, 1, &out), MAX_STATUS_NOT_FOUND, fn, "'nope'");
  assert_null(out);
}

MISUSE(max_run_options_init) {
  max_run_options_t o;
  EXPECT_BAD(max_run_options_init(NULL, sizeof o), "options is NULL");
  EXPECT_BAD(max_run_options_init(&o, 0), "struct_size 0");
}

MISUSE(max_model_execute_with_options) {
  max_tensor_list_t* out = SENTINEL_PTR;
  max_tensor_t* inputs[2] = {g_tensor, g_tensor};
  max_run_options_t o;
  EXPECT_OK(max_run_options_init(&o, sizeof o));
  EXPECT_BAD(max_model_execute_with_options(NULL, inputs, 1, &o, &out), "model is NULL");
  assert_null(out);
  EXPECT_BAD(max_model_execute_with_options(g_model, inputs, 1, &o, NULL), "out_outputs is NULL");
  EXPECT_BAD(max_model_execute_with_options(AS(max_model_t, g_tensor), inputs, 1, &o, &out), "not a model handle");
  EXPECT_BAD(max_model_execute_with_options(g_model, NULL, 1, &o, &out), "inputs is NULL");
  EXPECT_BAD(max_model_execute_with_options(g_model, inputs, 2, NULL, &out), "takes 1 input(s) (x) but got 2");
  o.timeout_us = INT64_MIN;
  EXPECT_BAD(max_model_execute_with_options(g_model, inputs, 1, &o, &out), "options->timeout_us");
  o.timeout_us = 0;
  assert_null(out);
  /* A newer program's struct whose unknown field is set: the library reads only the fields it
     knows (max_c.h, struct_size), so the call runs. */
  o.struct_size = sizeof o + 8;
  {
    struct {
      max_run_options_t known;
      uint64_t future;
    } newer;
    newer.known = o;
    newer.future = 1;
    EXPECT_OK(max_model_execute_with_options(g_model, inputs, 1, &newer.known, &out));
  }
  assert_non_null(out);
  max_tensor_list_release(out);
}

MISUSE(max_model_reload) {
  const char* names[1] = {"w"};
  max_tensor_t* weights[1] = {NULL};
  EXPECT_BAD(max_model_reload(NULL, NULL, NULL, 0), "model is NULL");
  EXPECT_BAD(max_model_reload(AS(max_model_t, g_tensor), NULL, NULL, 0), "not a model handle");
  EXPECT_BAD(max_model_reload(g_model, NULL, weights, 1), "weight_names is NULL");
  EXPECT_BAD(max_model_reload(g_model, names, weights, 1), "weights[0] is NULL");
  weights[0] = g_tensor;
  EXPECT_BAD(max_model_reload(g_model, names, weights, 1), "weight 'w' is not a weight of this model");
  EXPECT_OK(max_model_reload(g_model, NULL, NULL, 0));
}

/* ---- 1.3: weights ---- */

MISUSE(max_quant_encoding_name) {
  (void)fn;
  assert_string_equal(max_quant_encoding_name(MAX_QUANT_Q4_K), "q4_k");
  assert_string_equal(max_quant_encoding_name(MAX_QUANT_NONE), "none");
  assert_null(max_quant_encoding_name(6));
  assert_null(max_quant_encoding_name(-1));
}

MISUSE(max_quant_encoding_block) {
  int32_t elements = 0, bytes = 0;
  EXPECT_BAD(max_quant_encoding_block(MAX_QUANT_NONE, &elements, &bytes), "no blocks");
  EXPECT_BAD(max_quant_encoding_block(99, &elements, &bytes), "encoding is 99");
  EXPECT_OK(max_quant_encoding_block(MAX_QUANT_Q6_K, &elements, &bytes));
  assert_int_equal(elements, 256);
  assert_int_equal(bytes, 210);
  EXPECT_OK(max_quant_encoding_block(MAX_QUANT_Q8_0, NULL, NULL));
}

MISUSE(max_weights_create) { EXPECT_BAD(max_weights_create(NULL), "out_weights is NULL"); }

MISUSE(max_weights_retain) {
  max_weights_t* w = NULL;
  (void)fn;
  max_weights_retain(NULL);
  EXPECT_OK(max_weights_create(&w));
  max_weights_retain(w);
  max_weights_release(w);
  max_weights_release(w);
}

MISUSE(max_weights_release) {
  (void)fn;
  max_weights_release(NULL);
}

MISUSE(max_weights_add_file) {
  max_weights_t* w = NULL;
  EXPECT_BAD(max_weights_add_file(NULL, "x.safetensors"), "weights is NULL");
  EXPECT_BAD(max_weights_add_file(AS(max_weights_t, g_tensor), "x.safetensors"), "not a weights handle");
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_add_file(w, NULL), "path is NULL");
  EXPECT_STATUS(max_weights_add_file(w, "/nonexistent/w.safetensors"), MAX_STATUS_NOT_FOUND, fn,
                "/nonexistent/w.safetensors");
  max_weights_release(w);
}

MISUSE(max_weights_add_tensor) {
  max_weights_t* w = NULL;
  EXPECT_BAD(max_weights_add_tensor(NULL, "a", g_tensor, MAX_QUANT_NONE), "weights is NULL");
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_add_tensor(w, NULL, g_tensor, MAX_QUANT_NONE), "name is NULL");
  EXPECT_BAD(max_weights_add_tensor(w, "a", NULL, MAX_QUANT_NONE), "tensor is NULL");
  EXPECT_BAD(max_weights_add_tensor(w, "a", g_tensor, 42), "encoding is 42");
  EXPECT_BAD(max_weights_add_tensor(w, "a", g_tensor, MAX_QUANT_Q4_0), "a");
  EXPECT_OK(max_weights_add_tensor(w, "a", g_tensor, MAX_QUANT_NONE));
  EXPECT_STATUS(max_weights_add_tensor(w, "a", g_tensor, MAX_QUANT_NONE), MAX_STATUS_ALREADY_EXISTS, fn, "'a'");
  max_weights_release(w);
}

MISUSE(max_weights_count) {
  max_weights_t* w = NULL;
  size_t n = 7;
  EXPECT_BAD(max_weights_count(NULL, &n), "weights is NULL");
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_count(w, NULL), "out_count is NULL");
  EXPECT_OK(max_weights_count(w, &n));
  assert_int_equal(n, 0);
  max_weights_release(w);
}

MISUSE(max_weights_name) {
  max_weights_t* w = NULL;
  const char* name = NULL;
  EXPECT_BAD(max_weights_name(NULL, 0, &name), "weights is NULL");
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_name(w, 0, NULL), "out_name is NULL");
  EXPECT_STATUS(max_weights_name(w, 0, &name), MAX_STATUS_OUT_OF_RANGE, fn, "index 0");
  EXPECT_OK(max_weights_add_tensor(w, "first", g_tensor, MAX_QUANT_NONE));
  EXPECT_OK(max_weights_name(w, 0, &name));
  assert_string_equal(name, "first");
  max_weights_release(w);
}

MISUSE(max_weights_info) {
  max_weights_t* w = NULL;
  max_dtype_t dtype = 0;
  int32_t rank = -1;
  const int64_t* dims = NULL;
  max_quant_encoding_t encoding = -1;
  EXPECT_BAD(max_weights_info(NULL, "a", &dtype, &rank, &dims, &encoding), "weights is NULL");
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_info(w, NULL, &dtype, &rank, &dims, &encoding), "name is NULL");
  EXPECT_STATUS(max_weights_info(w, "missing", &dtype, &rank, &dims, &encoding), MAX_STATUS_NOT_FOUND, fn,
                "'missing'");
  EXPECT_OK(max_weights_add_tensor(w, "a", g_tensor, MAX_QUANT_NONE));
  EXPECT_OK(max_weights_info(w, "a", &dtype, &rank, &dims, &encoding));
  assert_int_equal(encoding, MAX_QUANT_NONE);
  assert_true(rank >= 0);
  EXPECT_OK(max_weights_info(w, "a", NULL, NULL, NULL, NULL));
  max_weights_release(w);
}

MISUSE(max_weights_tensor) {
  max_weights_t* w = NULL;
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_BAD(max_weights_tensor(NULL, "a", &t), "weights is NULL");
  assert_null(t);
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_tensor(w, "a", NULL), "out_tensor is NULL");
  EXPECT_STATUS(max_weights_tensor(w, "a", &t), MAX_STATUS_NOT_FOUND, fn, "'a'");
  EXPECT_OK(max_weights_add_tensor(w, "a", g_tensor, MAX_QUANT_NONE));
  EXPECT_OK(max_weights_tensor(w, "a", &t));
  assert_ptr_equal(t, g_tensor);
  max_tensor_release(t);
  max_weights_release(w);
}

MISUSE(max_weights_save_gguf) {
  max_weights_t* w = NULL;
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_weights_save_gguf(NULL, "/tmp/x.gguf", NULL), "weights is NULL");
  EXPECT_BAD(max_weights_save_gguf(w, NULL, NULL), "path is NULL");
  EXPECT_OK(max_weights_add_tensor(w, "t", g_tensor, MAX_QUANT_NONE));
  EXPECT_OK(max_weights_save_gguf(w, "/tmp/max_c_misuse_save.gguf", NULL));
  remove("/tmp/max_c_misuse_save.gguf");
  max_weights_release(w);
}

MISUSE(max_tensor_quantize) {
  max_tensor_t* q = SENTINEL_PTR;
  EXPECT_BAD(max_tensor_quantize(NULL, MAX_QUANT_Q8_0, &q), "tensor is NULL");
  assert_null(q);
  EXPECT_BAD(max_tensor_quantize(g_tensor, MAX_QUANT_Q8_0, NULL), "out_tensor is NULL");
  EXPECT_BAD(max_tensor_quantize(g_tensor, MAX_QUANT_NONE, &q), "encoding");
  EXPECT_BAD(max_tensor_quantize(g_tensor, 77, &q), "encoding is 77");
  EXPECT_BAD(max_tensor_quantize(g_tensor, MAX_QUANT_Q8_0, &q), "32");
  assert_null(q);
}

MISUSE(max_model_create_from_weights) {
  max_weights_t* w = NULL;
  max_model_t* m = SENTINEL_PTR;
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_model_create_from_weights(NULL, w, &m), "compiled is NULL");
  assert_null(m);
  EXPECT_BAD(max_model_create_from_weights(g_compiled, NULL, &m), "weights is NULL");
  EXPECT_BAD(max_model_create_from_weights(g_compiled, AS(max_weights_t, g_tensor), &m), "not a weights handle");
  EXPECT_BAD(max_model_create_from_weights(g_compiled, w, NULL), "out_model is NULL");
  EXPECT_OK(max_model_create_from_weights(g_compiled, w, &m));
  max_model_release(m);
  max_weights_release(w);
}

MISUSE(max_model_reload_from_weights) {
  max_weights_t* w = NULL;
  EXPECT_OK(max_weights_create(&w));
  EXPECT_BAD(max_model_reload_from_weights(NULL, w), "model is NULL");
  EXPECT_BAD(max_model_reload_from_weights(g_model, NULL), "weights is NULL");
  EXPECT_OK(max_model_reload_from_weights(g_model, w));
  max_weights_release(w);
}

/* ---- 1.4: device graphs ---- */

/* The checks the three graph calls share: NULL and wrong handles, NULL arrays with counts, the
 * key count, inputs as execute checks them. `call` runs one of them on (model, keys, n_keys,
 * inputs, n_inputs). */
#define GRAPH_MISUSE(call)                                                                     \
  do {                                                                                         \
    const uint64_t keys[2] = {5, 5};                                                           \
    max_tensor_t* inputs[2] = {g_tensor, g_tensor};                                            \
    max_tensor_t* wrong[1] = {AS(max_tensor_t, g_buffer)};                                     \
    EXPECT_BAD(call(NULL, keys, 1, inputs, 1), "model is NULL");                               \
    EXPECT_BAD(call(AS(max_model_t, g_tensor), keys, 1, inputs, 1), "not a model handle");     \
    EXPECT_BAD(call(g_model, NULL, 1, inputs, 1), "graph_keys is NULL");                       \
    EXPECT_BAD(call(g_model, keys, 2, inputs, 1), "graph_keys has 2 keys");                    \
    EXPECT_BAD(call(g_model, keys, 0, inputs, 1), "graph_keys has 0 keys");                    \
    EXPECT_BAD(call(g_model, keys, 1, NULL, 1), "inputs is NULL");                             \
    EXPECT_BAD(call(g_model, keys, 1, wrong, 1), "inputs[0] is not a tensor handle");          \
  } while (0)

static max_status_t* capture_call(max_model_t* m, const uint64_t* keys, size_t n_keys, max_tensor_t* const* inputs,
                                  size_t n_inputs) {
  max_tensor_list_t* out = NULL;
  max_status_t* s = max_model_capture(m, keys, n_keys, inputs, n_inputs, &out);
  if (out) max_tensor_list_release(out);
  return s;
}

MISUSE(max_model_capture) {
  max_tensor_list_t* out = SENTINEL_PTR;
  const uint64_t key = 5;
  max_tensor_t* inputs[2] = {g_tensor, g_tensor};
  GRAPH_MISUSE(capture_call);
  EXPECT_BAD(max_model_capture(g_model, &key, 1, inputs, 1, NULL), "out_outputs is NULL");
  EXPECT_BAD(max_model_capture(g_model, &key, 1, inputs, 2, &out), "takes 1 input(s) (x) but got 2");
  assert_null(out);
}

MISUSE(max_model_replay) {
  const uint64_t key = 987654321;
  max_tensor_t* inputs[1] = {g_tensor};
  GRAPH_MISUSE(max_model_replay);
  EXPECT_STATUS(max_model_replay(g_model, &key, 1, inputs, 1), MAX_STATUS_FAILED_PRECONDITION, fn,
                "nothing is captured under graph key 987654321");
}

MISUSE(max_model_debug_verify_replay) {
  const uint64_t key = 987654321;
  max_tensor_t* inputs[1] = {g_tensor};
  GRAPH_MISUSE(max_model_debug_verify_replay);
  EXPECT_STATUS(max_model_debug_verify_replay(g_model, &key, 1, inputs, 1), MAX_STATUS_FAILED_PRECONDITION, fn,
                "nothing is captured under graph key 987654321");
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
    /* 1.1: graphs */
    T(max_graph_create), T(max_graph_retain), T(max_graph_release), T(max_graph_name),
    T(max_graph_add_input), T(max_graph_add_constant), T(max_graph_add_constant_on), T(max_graph_add_weight),
    T(max_graph_add_op), T(max_graph_set_outputs), T(max_graph_add_subgraph),
    T(max_graph_num_inputs), T(max_graph_input), T(max_graph_num_outputs), T(max_graph_output),
    T(max_graph_num_ops), T(max_graph_verify),
    T(max_value_dtype), T(max_value_rank), T(max_value_dim), T(max_value_device),
    T(max_value_type_string),
    T(max_attrs_create), T(max_attrs_retain), T(max_attrs_release), T(max_attrs_set_int),
    T(max_attrs_set_float), T(max_attrs_set_bool), T(max_attrs_set_string), T(max_attrs_set_dtype),
    T(max_attrs_set_ints), T(max_attrs_set_floats), T(max_attrs_set_dims), T(max_attrs_set_graph),
    T(max_attrs_set_device),
    T(max_op_count), T(max_op_at), T(max_op_num_inputs), T(max_op_input), T(max_op_num_attrs),
    T(max_op_attr),
    T(max_graph_serialize), T(max_graph_deserialize), T(max_graph_save), T(max_graph_load),
    T(max_graph_to_text), T(max_graph_to_dot),
    /* 1.2: the engine */
    T(max_compile_options_init), T(max_context_compile), T(max_context_compile_file),
    T(max_compiled_model_retain), T(max_compiled_model_release), T(max_compiled_model_num_inputs),
    T(max_compiled_model_input), T(max_compiled_model_num_outputs), T(max_compiled_model_output),
    T(max_compiled_model_num_weights), T(max_compiled_model_weight),
    T(max_tensor_spec_retain), T(max_tensor_spec_release), T(max_tensor_spec_name),
    T(max_tensor_spec_dtype), T(max_tensor_spec_rank), T(max_tensor_spec_dim), T(max_tensor_spec_device),
    T(max_model_create), T(max_model_retain), T(max_model_release), T(max_model_compiled_model),
    T(max_model_execute), T(max_model_execute_named), T(max_model_reload),
    /* 1.3: weights */
    T(max_quant_encoding_name), T(max_quant_encoding_block), T(max_weights_create),
    T(max_weights_retain), T(max_weights_release), T(max_weights_add_file),
    T(max_weights_add_tensor), T(max_weights_count), T(max_weights_name), T(max_weights_info),
    T(max_weights_tensor), T(max_weights_save_gguf), T(max_tensor_quantize),
    T(max_model_create_from_weights), T(max_model_reload_from_weights),
    /* 1.4: device graphs */
    T(max_model_capture), T(max_model_replay), T(max_model_debug_verify_replay),
    /* 1.8: run options */
    T(max_run_options_init), T(max_model_execute_with_options),
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
  {
    const max_dim_t x_dims[2] = {{0, "batch"}, {3, NULL}};
    max_value_t* y = NULL;
    const char* y_name = "y";
    if (max_graph_create(NULL, &g_graph) || max_graph_create("other", &g_other_graph)) return -1;
    if (max_graph_add_input(g_graph, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0,
                            &g_value))
      return -1;
    if (max_graph_add_input(g_other_graph, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU,
                            0, &g_other_value))
      return -1;
    {
      size_t n = 0;
      if (max_graph_add_op(g_graph, "relu", 0, &g_value, 1, NULL, &y, 1, &n) || n != 1) return -1;
    }
    if (max_graph_set_outputs(g_graph, &y, &y_name, 1)) return -1;
    if (max_attrs_create(&g_attrs)) return -1;
  }
  if (max_context_compile(g_context, g_graph, NULL, &g_compiled)) return -1;
  if (max_model_create(g_compiled, NULL, NULL, 0, &g_model)) return -1;
  if (max_compiled_model_input(g_compiled, 0, &g_spec)) return -1;
  return 0;
}

static int group_teardown(void** state) {
  (void)state;
  max_tensor_spec_release(g_spec);
  max_model_release(g_model);
  max_compiled_model_release(g_compiled);
  max_attrs_release(g_attrs);
  max_graph_release(g_other_graph);
  max_graph_release(g_graph);
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
