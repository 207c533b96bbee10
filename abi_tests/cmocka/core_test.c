/* Core behaviour through the ABI: versions, status codes, logging, dtypes, devices,
 * contexts, tensors, tensor lists and buffers.
 *
 * `core_test log` runs only the check of the starting log level against MAX_C_LOG_LEVEL
 * (CTest runs it with the variable set to several values). */
#include "abi_test.h"

#include <limits.h>

static const int64_t k2x3[2] = {2, 3};
static const float k123456[6] = {1, 2, 3, 4, 5, 6};

/* ======================================================================================
 * Versions and status
 * ====================================================================================== */

static void versions(void** state) {
  (void)state;
  assert_int_equal(max_abi_version(), MAX_ABI_VERSION);
  assert_int_equal(MAX_ABI_VERSION >> 16, MAX_ABI_VERSION_MAJOR);
  assert_int_equal(MAX_ABI_VERSION & 0xffffu, MAX_ABI_VERSION_MINOR);
  assert_string_equal(max_version_string(), MAX_C_EXPECTED_VERSION_STRING);
}

static void check_abi_accepts_this_and_older_minors(void** state) {
  (void)state;
  EXPECT_OK(max_check_abi(MAX_ABI_VERSION));
  EXPECT_OK(max_check_abi((uint32_t)MAX_ABI_VERSION_MAJOR << 16)); /* a 1.0 program */
}

static void check_abi_newer_header_message(void** state) {
  char want[160];
  const uint32_t newer_minor = MAX_ABI_VERSION_MINOR + 4;
  (void)state;
  snprintf(want, sizeof want,
           "libmax_c ABI %d.%d is older than the header %d.%u this program was built with",
           MAX_ABI_VERSION_MAJOR, MAX_ABI_VERSION_MINOR, MAX_ABI_VERSION_MAJOR, newer_minor);
  EXPECT_STATUS(max_check_abi(((uint32_t)MAX_ABI_VERSION_MAJOR << 16) | newer_minor),
                MAX_STATUS_FAILED_PRECONDITION, want);
}

static void check_abi_major_mismatch(void** state) {
  (void)state;
  EXPECT_STATUS(max_check_abi(2u << 16), MAX_STATUS_FAILED_PRECONDITION, "header 2.0",
                "major versions differ");
  EXPECT_STATUS(max_check_abi(0), MAX_STATUS_FAILED_PRECONDITION, "header 0.0", "major");
}

static void status_code_names(void** state) {
  static const char* const names[] = {
      "OK",          "CANCELLED",     "UNKNOWN",           "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",    "UNAVAILABLE",       "DATA_LOSS",
      "UNAUTHENTICATED"};
  int32_t code;
  (void)state;
  for (code = 0; code <= 16; ++code) assert_string_equal(max_status_code_name(code), names[code]);
  assert_string_equal(max_status_code_name(MAX_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  assert_string_equal(max_status_code_name(MAX_STATUS_UNAUTHENTICATED), "UNAUTHENTICATED");
  assert_string_equal(max_status_code_name(17), "UNKNOWN_CODE");
  assert_string_equal(max_status_code_name(-1), "UNKNOWN_CODE");
}

static void status_accessors(void** state) {
  max_status_t* s;
  (void)state;
  assert_int_equal(max_status_code(NULL), MAX_STATUS_OK);
  assert_string_equal(max_status_message(NULL), "");
  s = max_log_set_level(42);
  assert_non_null(s);
  assert_int_equal(max_status_code(s), MAX_STATUS_INVALID_ARGUMENT);
  /* the message names the function and the value */
  assert_non_null(strstr(max_status_message(s), "max_log_set_level"));
  assert_non_null(strstr(max_status_message(s), "42"));
  max_status_release(s);
}

/* ======================================================================================
 * Logging
 * ====================================================================================== */

static void log_level_set_and_get(void** state) {
  max_log_level_t before = max_log_level(), level;
  (void)state;
  for (level = MAX_LOG_OFF; level <= MAX_LOG_TRACE; ++level) {
    EXPECT_OK(max_log_set_level(level));
    assert_int_equal(max_log_level(), level);
  }
  EXPECT_OK(max_log_set_level(MAX_LOG_ERROR));
  EXPECT_STATUS(max_log_set_level(MAX_LOG_TRACE + 1), MAX_STATUS_INVALID_ARGUMENT, "6");
  EXPECT_STATUS(max_log_set_level(-1), MAX_STATUS_INVALID_ARGUMENT, "-1");
  assert_int_equal(max_log_level(), MAX_LOG_ERROR); /* a refused level changes nothing */
  EXPECT_OK(max_log_set_level(before));
}

/* The starting level: MAX_C_LOG_LEVEL names it ("off".."trace" or 0..5); warning otherwise. */
static void initial_log_level_from_env(void** state) {
  static const char* const names[] = {"off", "error", "warning", "info", "debug", "trace"};
  const char* env = getenv("MAX_C_LOG_LEVEL");
  max_log_level_t want = MAX_LOG_WARNING;
  int i;
  (void)state;
  if (env && *env) {
    for (i = 0; i <= MAX_LOG_TRACE; ++i)
      if (strcmp(env, names[i]) == 0 || (env[0] == '0' + i && env[1] == '\0')) want = i;
  }
  print_message("MAX_C_LOG_LEVEL=%s: expecting level %d\n", env ? env : "(unset)", want);
  assert_int_equal(max_log_level(), want);
}

/* ======================================================================================
 * DTypes: the traits of all 23, and unknown codes
 * ====================================================================================== */

typedef struct {
  max_dtype_t dtype;
  const char* name;
  int32_t bits, bytes, is_float, is_float8, is_half, is_integral, is_signed, is_unsigned;
} dtype_row;

static const dtype_row kDTypes[] = {
    /* dtype                        name               bits B  flt f8 half int sgn uns */
    {MAX_DTYPE_BOOL,            "bool",            8,  1, 0, 0, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT4_E2M1FN,   "float4_e2m1fn",   4,  1, 1, 0, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT8_E8M0FNU,  "float8_e8m0fnu",  8,  1, 1, 1, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT8_E4M3FN,   "float8_e4m3fn",   8,  1, 1, 1, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 8,  1, 1, 1, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT8_E5M2,     "float8_e5m2",     8,  1, 1, 1, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 8,  1, 1, 1, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT16,         "float16",         16, 2, 1, 0, 1, 0, 0, 0},
    {MAX_DTYPE_BFLOAT16,        "bfloat16",        16, 2, 1, 0, 1, 0, 0, 0},
    {MAX_DTYPE_FLOAT32,         "float32",         32, 4, 1, 0, 0, 0, 0, 0},
    {MAX_DTYPE_FLOAT64,         "float64",         64, 8, 1, 0, 0, 0, 0, 0},
    {MAX_DTYPE_UINT2,           "uint2",           2,  1, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT2,            "int2",            2,  1, 0, 0, 0, 1, 1, 0},
    {MAX_DTYPE_UINT4,           "uint4",           4,  1, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT4,            "int4",            4,  1, 0, 0, 0, 1, 1, 0},
    {MAX_DTYPE_UINT8,           "uint8",           8,  1, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT8,            "int8",            8,  1, 0, 0, 0, 1, 1, 0},
    {MAX_DTYPE_UINT16,          "uint16",          16, 2, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT16,           "int16",           16, 2, 0, 0, 0, 1, 1, 0},
    {MAX_DTYPE_UINT32,          "uint32",          32, 4, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT32,           "int32",           32, 4, 0, 0, 0, 1, 1, 0},
    {MAX_DTYPE_UINT64,          "uint64",          64, 8, 0, 0, 0, 1, 0, 1},
    {MAX_DTYPE_INT64,           "int64",           64, 8, 0, 0, 0, 1, 1, 0},
};
#define N_DTYPES (sizeof kDTypes / sizeof kDTypes[0])

#define EXPECT_TRAIT(f, row, field)                                                       \
  do {                                                                                    \
    if (f((row)->dtype) != (row)->field)                                                  \
      fail_msg("%s(%s) is %d, expected %d", #f, (row)->name, (int)f((row)->dtype),        \
               (int)(row)->field);                                                        \
  } while (0)

static void dtype_traits_of_all_23(void** state) {
  size_t i;
  (void)state;
  assert_int_equal(N_DTYPES, 23);
  for (i = 0; i < N_DTYPES; ++i) {
    const dtype_row* r = &kDTypes[i];
    max_dtype_t found = 0;
    assert_int_equal(max_dtype_is_valid(r->dtype), 1);
    assert_non_null(max_dtype_name(r->dtype));
    assert_string_equal(max_dtype_name(r->dtype), r->name);
    EXPECT_TRAIT(max_dtype_size_in_bits, r, bits);
    EXPECT_TRAIT(max_dtype_size_in_bytes, r, bytes);
    EXPECT_TRAIT(max_dtype_align, r, bytes);
    EXPECT_TRAIT(max_dtype_is_float, r, is_float);
    EXPECT_TRAIT(max_dtype_is_float8, r, is_float8);
    EXPECT_TRAIT(max_dtype_is_half, r, is_half);
    EXPECT_TRAIT(max_dtype_is_integral, r, is_integral);
    EXPECT_TRAIT(max_dtype_is_signed_integral, r, is_signed);
    EXPECT_TRAIT(max_dtype_is_unsigned_integral, r, is_unsigned);
    EXPECT_OK(max_dtype_from_name(r->name, &found));
    assert_int_equal(found, r->dtype);
  }
}

static void dtype_unknown_codes(void** state) {
  max_dtype_t code;
  size_t i;
  int known;
  (void)state;
  /* every code in [-8, 300] that is not one of the 23 is unknown to every trait */
  for (code = -8; code <= 300; ++code) {
    known = 0;
    for (i = 0; i < N_DTYPES; ++i) known |= kDTypes[i].dtype == code;
    if (known) continue;
    if (max_dtype_is_valid(code) || max_dtype_size_in_bits(code) || max_dtype_size_in_bytes(code) ||
        max_dtype_align(code) || max_dtype_is_float(code) || max_dtype_is_float8(code) ||
        max_dtype_is_half(code) || max_dtype_is_integral(code) ||
        max_dtype_is_signed_integral(code) || max_dtype_is_unsigned_integral(code) ||
        max_dtype_name(code) != NULL)
      fail_msg("dtype code %d is not a dtype, yet a trait answers non-zero", code);
  }
  assert_null(max_dtype_name(INT32_MAX));
  assert_int_equal(max_dtype_is_valid(INT32_MIN), 0);
}

static void dtype_from_unknown_name(void** state) {
  max_dtype_t d = 99;
  (void)state;
  EXPECT_STATUS(max_dtype_from_name("float128", &d), MAX_STATUS_NOT_FOUND, "'float128'");
  assert_int_equal(d, 0);
  EXPECT_STATUS(max_dtype_from_name("float32 ", &d), MAX_STATUS_NOT_FOUND, "float32");
}

/* ======================================================================================
 * Devices
 * ====================================================================================== */

static void cpu_device_is_a_singleton(void** state) {
  max_device_t *a = NULL, *b = NULL, *c = NULL;
  (void)state;
  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, 0, &a));
  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, 0, &b));
  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, -1, &c));
  assert_non_null(a);
  assert_ptr_equal(a, b);
  assert_ptr_equal(a, c);
  max_device_release(a);
  max_device_release(b);
  max_device_release(c);
  /* still the same object after every reference of ours went away */
  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, 0, &a));
  assert_ptr_equal(a, b);
  max_device_release(a);
}

static void cpu_device_properties(void** state) {
  max_device_t* d = cpu_device();
  max_device_kind_t kind = 0;
  int32_t id = -1, is_host = -1;
  const char *label = NULL, *api = NULL;
  (void)state;
  EXPECT_OK(max_device_kind(d, &kind));
  assert_int_equal(kind, MAX_DEVICE_KIND_CPU);
  EXPECT_OK(max_device_id(d, &id));
  assert_int_equal(id, 0);
  EXPECT_OK(max_device_label(d, &label));
  assert_string_equal(label, "cpu");
  EXPECT_OK(max_device_api(d, &api));
  assert_string_equal(api, "cpu");
  EXPECT_OK(max_device_is_host(d, &is_host));
  assert_int_equal(is_host, 1);
  EXPECT_OK(max_device_synchronize(d));
  max_device_retain(d);
  max_device_release(d);
  max_device_release(d);
}

static void accelerators(void** state) {
  int32_t count = -1;
  max_device_t* d = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_accelerator_count(&count));
  assert_true(count >= 0);
  if (count > 0) skip(); /* the NOT_FOUND cases below are for machines without one */
  assert_int_equal(count, 0);
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_CUDA, 0, &d), MAX_STATUS_NOT_FOUND, "CUDA",
                "id 0");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_CUDA, -1, &d), MAX_STATUS_NOT_FOUND, "CUDA");
  assert_null(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_device_create(MAX_DEVICE_KIND_HIP, 0, &d), MAX_STATUS_NOT_FOUND, "HIP");
  assert_null(d);
}

static void unknown_device_kind(void** state) {
  max_device_t* d = SENTINEL_PTR;
  (void)state;
  EXPECT_STATUS(max_device_create(9, 0, &d), MAX_STATUS_INVALID_ARGUMENT, "device kind 9");
  assert_null(d);
}

/* ======================================================================================
 * Context
 * ====================================================================================== */

static void context_defaults(void** state) {
  max_context_t* c = NULL;
  max_device_t *d = NULL, *cpu = cpu_device();
  int32_t threads = 0;
  size_t n = 0;
  (void)state;
  EXPECT_OK(max_context_create(NULL, &c));
  EXPECT_OK(max_context_num_threads(c, &threads));
  assert_true(threads >= 1);
  EXPECT_OK(max_context_num_devices(c, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_context_device(c, 0, &d));
  assert_ptr_equal(d, cpu);
  max_device_release(d);
  d = SENTINEL_PTR;
  EXPECT_STATUS(max_context_device(c, 1, &d), MAX_STATUS_OUT_OF_RANGE, "index 1", "1 device");
  assert_null(d);
  max_context_retain(c);
  max_context_release(c);
  max_context_release(c);
  max_device_release(cpu);
}

static void context_options(void** state) {
  max_context_options_t o;
  max_context_t* c = NULL;
  max_device_t* cpu = cpu_device();
  max_device_t* devices[2];
  max_device_t* d = NULL;
  int32_t threads = 0;
  size_t n = 0;
  max_log_level_t before = max_log_level();
  (void)state;
  devices[0] = cpu;
  devices[1] = cpu;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.devices = devices;
  o.num_devices = 2;
  o.num_threads = 1;
  o.log_level = MAX_LOG_TRACE;
  EXPECT_OK(max_context_create(&o, &c));
  max_device_release(cpu); /* the context holds its own references */
  assert_int_equal(max_log_level(), MAX_LOG_TRACE);
  EXPECT_OK(max_log_set_level(before));
  EXPECT_OK(max_context_num_threads(c, &threads));
  assert_int_equal(threads, 1);
  EXPECT_OK(max_context_num_devices(c, &n));
  assert_int_equal(n, 2);
  EXPECT_OK(max_context_device(c, 1, &d));
  assert_ptr_equal(d, devices[0]);
  max_device_release(d);
  max_context_release(c);
}

static void context_refuses_bad_options(void** state) {
  max_context_options_t o;
  max_context_t* c = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_threads = -4;
  EXPECT_STATUS(max_context_create(&o, &c), MAX_STATUS_INVALID_ARGUMENT, "num_threads", "-4");
  assert_null(c);
  o.num_threads = 0;
  o.log_level = 17;
  EXPECT_STATUS(max_context_create(&o, &c), MAX_STATUS_INVALID_ARGUMENT, "log_level 17");
}

/* ======================================================================================
 * Tensors
 * ====================================================================================== */

static void tensor_zeros(void** state) {
  max_tensor_t* t = make_zeros(MAX_DTYPE_FLOAT32, k2x3, 2);
  const float zeros[6] = {0};
  max_dtype_t dtype = 0;
  int32_t rank = 0, contiguous = 0, read_only = -1;
  const int64_t *dims = NULL, *strides = NULL;
  int64_t n = 0;
  size_t bytes = 0;
  max_device_t *d = NULL, *cpu = cpu_device();
  const void* data = NULL;
  void* mdata = NULL;
  (void)state;
  EXPECT_OK(max_tensor_dtype(t, &dtype));
  assert_int_equal(dtype, MAX_DTYPE_FLOAT32);
  EXPECT_OK(max_tensor_rank(t, &rank));
  assert_int_equal(rank, 2);
  EXPECT_OK(max_tensor_dims(t, &dims));
  assert_int_equal(dims[0], 2);
  assert_int_equal(dims[1], 3);
  EXPECT_OK(max_tensor_strides(t, &strides));
  assert_int_equal(strides[0], 3);
  assert_int_equal(strides[1], 1);
  EXPECT_OK(max_tensor_num_elements(t, &n));
  assert_int_equal(n, 6);
  EXPECT_OK(max_tensor_byte_size(t, &bytes));
  assert_int_equal(bytes, 24);
  EXPECT_OK(max_tensor_device(t, &d));
  assert_ptr_equal(d, cpu);
  EXPECT_OK(max_tensor_is_contiguous(t, &contiguous));
  assert_int_equal(contiguous, 1);
  EXPECT_OK(max_tensor_is_read_only(t, &read_only));
  assert_int_equal(read_only, 0);
  EXPECT_OK(max_tensor_data(t, &data));
  EXPECT_OK(max_tensor_mutable_data(t, &mdata));
  assert_ptr_equal(data, mdata);
  assert_int_equal((uintptr_t)data % sizeof(float), 0);
  expect_f32_contents(t, zeros, 6);
  ((float*)mdata)[2] = 7.0f;
  {
    const float want[6] = {0, 0, 7, 0, 0, 0};
    expect_f32_contents(t, want, 6);
  }
  max_device_release(d);
  max_device_release(cpu);
  max_tensor_release(t);
}

static void tensor_scalar_empty_and_subbyte(void** state) {
  max_tensor_t *scalar = make_zeros(MAX_DTYPE_INT64, NULL, 0);
  const int64_t empty_dims[2] = {0, 3};
  const int64_t f4_dims[1] = {3}, i2_dims[1] = {5};
  max_tensor_t *empty = make_zeros(MAX_DTYPE_FLOAT32, empty_dims, 2);
  max_tensor_t *f4 = make_zeros(MAX_DTYPE_FLOAT4_E2M1FN, f4_dims, 1);
  max_tensor_t *i4 = make_zeros(MAX_DTYPE_INT4, f4_dims, 1);
  max_tensor_t *u2 = make_zeros(MAX_DTYPE_UINT2, i2_dims, 1);
  const int64_t* dims = SENTINEL_PTR;
  int64_t n = -1;
  size_t bytes = 99;
  (void)state;
  EXPECT_OK(max_tensor_dims(scalar, &dims));
  assert_null(dims); /* rank 0 */
  EXPECT_OK(max_tensor_num_elements(scalar, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_tensor_byte_size(scalar, &bytes));
  assert_int_equal(bytes, 8);
  EXPECT_OK(max_tensor_num_elements(empty, &n));
  assert_int_equal(n, 0);
  EXPECT_OK(max_tensor_byte_size(empty, &bytes));
  assert_int_equal(bytes, 0);
  EXPECT_OK(max_tensor_to_host(empty, NULL, 0));
  EXPECT_OK(max_tensor_byte_size(f4, &bytes));
  assert_int_equal(bytes, 2); /* 3 packed 4-bit elements */
  EXPECT_OK(max_tensor_byte_size(i4, &bytes));
  assert_int_equal(bytes, 2); /* int4 packs like float4 */
  EXPECT_OK(max_tensor_byte_size(u2, &bytes));
  assert_int_equal(bytes, 2); /* 5 packed 2-bit elements */
  max_tensor_release(scalar);
  max_tensor_release(empty);
  max_tensor_release(f4);
  max_tensor_release(i4);
  max_tensor_release(u2);
}

/* Zero elements: NULL memory is fine for a borrowed empty tensor and for to_host's dst, and
 * every copy path must cope with it (memcpy with a NULL pointer is undefined even for 0 bytes). */
static void tensor_empty_with_null_memory(void** state) {
  const int64_t dims[2] = {0, 3};
  max_tensor_t *t = NULL, *copy = NULL, *dst = make_zeros(MAX_DTYPE_FLOAT32, dims, 2), *back = NULL;
  DLManagedTensorVersioned* m = NULL;
  int64_t n = -1;
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 2, NULL, NULL, 0, NULL, NULL, &t));
  EXPECT_OK(max_tensor_num_elements(t, &n));
  assert_int_equal(n, 0);
  EXPECT_OK(max_tensor_to_host(t, NULL, 0));
  EXPECT_OK(max_tensor_to_host(dst, NULL, 0));
  EXPECT_OK(max_tensor_copy(t, NULL, &copy));
  EXPECT_OK(max_tensor_copy_from(dst, t));
  EXPECT_OK(max_tensor_copy_from(t, dst));
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  EXPECT_OK(max_tensor_from_dlpack(m, &back));
  EXPECT_OK(max_tensor_to_host(back, NULL, 0));
  max_tensor_release(back);
  back = NULL;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, NULL, 0, &back));
  max_tensor_release(back);
  max_tensor_release(copy);
  max_tensor_release(dst);
  max_tensor_release(t);
}

static void tensor_from_host_copies(void** state) {
  float source[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t* t = make_tensor_f32(k2x3, 2, source, 6);
  const void* data = NULL;
  (void)state;
  source[0] = 100; /* the tensor holds a copy */
  expect_f32_contents(t, k123456, 6);
  EXPECT_OK(max_tensor_data(t, &data));
  assert_ptr_not_equal(data, source);
  max_tensor_release(t);
}

static void tensor_from_host_size_mismatch(void** state) {
  float source[6] = {0};
  max_tensor_t* t = SENTINEL_PTR;
  (void)state;
  EXPECT_STATUS(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, k2x3, 2, source, 20, &t),
                MAX_STATUS_INVALID_ARGUMENT, "20 bytes", "float32[2, 3]", "needs 24");
  assert_null(t);
  EXPECT_STATUS(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT64, k2x3, 2, source, 24, &t),
                MAX_STATUS_INVALID_ARGUMENT, "24 bytes", "float64[2, 3]", "needs 48");
}

/* Borrowed memory: no copy, writes show through, and release runs exactly once, when the
 * last view of the memory is gone (not when the first handle is released). */
static void tensor_borrowed_release_once(void** state) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  call_counter released = {0};
  max_tensor_t *t = NULL, *view = NULL, *copy = NULL, *got = NULL;
  max_tensor_list_t* list = NULL;
  const void* p = NULL;
  void* w = NULL;
  const int64_t flat[1] = {6};
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 0, count_call,
                                       &released, &t));
  EXPECT_OK(max_tensor_data(t, &p));
  assert_ptr_equal(p, data);
  EXPECT_OK(max_tensor_mutable_data(t, &w));
  ((float*)w)[0] = -1.0f;
  assert_true(data[0] == -1.0f);
  EXPECT_OK(max_tensor_view(t, MAX_DTYPE_INT32, flat, 1, &view));
  EXPECT_OK(max_tensor_copy(t, NULL, &copy));
  EXPECT_OK(max_tensor_list_create(&list));
  EXPECT_OK(max_tensor_list_append(list, view));
  max_tensor_release(t);
  max_tensor_release(view);
  max_tensor_release(copy);
  assert_int_equal(released.calls, 0);
  EXPECT_OK(max_tensor_list_get(list, 0, &got));
  max_tensor_list_release(list);
  assert_int_equal(released.calls, 0);
  max_tensor_release(got);
  assert_int_equal(released.calls, 1);
}

static void tensor_borrowed_read_only(void** state) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t *t = NULL, *src = make_zeros(MAX_DTYPE_FLOAT32, k2x3, 2), *view = NULL;
  void* w = SENTINEL_PTR;
  const void* r = NULL;
  int32_t read_only = 0;
  const int64_t flat[1] = {6};
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 1, NULL, NULL, &t));
  EXPECT_OK(max_tensor_is_read_only(t, &read_only));
  assert_int_equal(read_only, 1);
  EXPECT_OK(max_tensor_data(t, &r));
  EXPECT_STATUS(max_tensor_mutable_data(t, &w), MAX_STATUS_FAILED_PRECONDITION, "read-only");
  assert_null(w);
  EXPECT_STATUS(max_tensor_copy_from(t, src), MAX_STATUS_FAILED_PRECONDITION, "read-only");
  assert_true(data[0] == 1.0f);
  EXPECT_OK(max_tensor_view(t, MAX_DTYPE_FLOAT32, flat, 1, &view)); /* views stay read-only */
  EXPECT_OK(max_tensor_is_read_only(view, &read_only));
  assert_int_equal(read_only, 1);
  max_tensor_release(view);
  max_tensor_release(src);
  max_tensor_release(t);
}

/* Every other column of a row-major 3x4 matrix, as a borrowed strided view. */
static void tensor_strided_borrowed_view(void** state) {
  float m[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const int64_t dims[2] = {3, 2}, strides[2] = {4, 2};
  const float want[6] = {0, 2, 4, 6, 8, 10};
  max_tensor_t *t = NULL, *copy = NULL, *dst = NULL, *flat_view = NULL;
  const int64_t* got_strides = NULL;
  int32_t contiguous = 1;
  const int64_t flat[1] = {6};
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 2, strides, m, 0, NULL, NULL, &t));
  EXPECT_OK(max_tensor_strides(t, &got_strides));
  assert_int_equal(got_strides[0], 4);
  assert_int_equal(got_strides[1], 2);
  EXPECT_OK(max_tensor_is_contiguous(t, &contiguous));
  assert_int_equal(contiguous, 0);
  expect_f32_contents(t, want, 6);
  EXPECT_OK(max_tensor_copy(t, NULL, &copy));
  EXPECT_OK(max_tensor_is_contiguous(copy, &contiguous));
  assert_int_equal(contiguous, 1);
  expect_f32_contents(copy, want, 6);
  /* writing into the strided view changes only the selected elements */
  dst = make_tensor_f32(dims, 2, k123456, 6);
  EXPECT_OK(max_tensor_copy_from(t, dst));
  {
    const float after[12] = {1, 1, 2, 3, 3, 5, 4, 7, 5, 9, 6, 11};
    size_t i;
    for (i = 0; i < 12; ++i)
      if (m[i] != after[i]) fail_msg("m[%zu] is %g after copy_from, expected %g", i, m[i], after[i]);
  }
  EXPECT_STATUS(max_tensor_view(t, MAX_DTYPE_FLOAT32, flat, 1, &flat_view),
                MAX_STATUS_INVALID_ARGUMENT, "not contiguous");
  max_tensor_release(dst);
  max_tensor_release(copy);
  max_tensor_release(t);
}

static void tensor_copy_is_deep(void** state) {
  max_tensor_t *t = make_tensor_f32(k2x3, 2, k123456, 6), *copy = NULL, *on_cpu = NULL;
  max_device_t* cpu = cpu_device();
  void* w = NULL;
  (void)state;
  EXPECT_OK(max_tensor_copy(t, NULL, &copy));
  EXPECT_OK(max_tensor_copy(t, cpu, &on_cpu));
  EXPECT_OK(max_tensor_mutable_data(t, &w));
  ((float*)w)[0] = 50.0f;
  expect_f32_contents(copy, k123456, 6);
  expect_f32_contents(on_cpu, k123456, 6);
  max_tensor_release(on_cpu);
  max_tensor_release(copy);
  max_tensor_release(t);
  max_device_release(cpu);
}

static void tensor_copy_from(void** state) {
  const int64_t dims32[2] = {3, 2};
  max_tensor_t *dst = make_zeros(MAX_DTYPE_FLOAT32, k2x3, 2);
  max_tensor_t *src = make_tensor_f32(k2x3, 2, k123456, 6);
  max_tensor_t *wrong_shape = make_zeros(MAX_DTYPE_FLOAT32, dims32, 2);
  max_tensor_t *wrong_dtype = make_zeros(MAX_DTYPE_INT32, k2x3, 2);
  const float zeros[6] = {0};
  (void)state;
  EXPECT_STATUS(max_tensor_copy_from(dst, wrong_shape), MAX_STATUS_INVALID_ARGUMENT,
                "float32[3, 2]", "float32[2, 3]");
  EXPECT_STATUS(max_tensor_copy_from(dst, wrong_dtype), MAX_STATUS_INVALID_ARGUMENT,
                "int32[2, 3]", "float32[2, 3]");
  expect_f32_contents(dst, zeros, 6);
  EXPECT_OK(max_tensor_copy_from(dst, src));
  expect_f32_contents(dst, k123456, 6);
  max_tensor_release(dst);
  max_tensor_release(src);
  max_tensor_release(wrong_shape);
  max_tensor_release(wrong_dtype);
}

static void tensor_view(void** state) {
  max_tensor_t *t = make_tensor_f32(k2x3, 2, k123456, 6), *v = NULL, *same = NULL;
  const int64_t flat[1] = {6}, four[1] = {4};
  const void *a = NULL, *b = NULL;
  int32_t rank = 0;
  max_dtype_t dtype = 0;
  (void)state;
  EXPECT_OK(max_tensor_view(t, MAX_DTYPE_FLOAT32, flat, 1, &v));
  EXPECT_OK(max_tensor_rank(v, &rank));
  assert_int_equal(rank, 1);
  EXPECT_OK(max_tensor_data(t, &a));
  EXPECT_OK(max_tensor_data(v, &b));
  assert_ptr_equal(a, b); /* shares the memory */
  expect_f32_contents(v, k123456, 6);
  EXPECT_OK(max_tensor_view(t, MAX_DTYPE_INT32, NULL, -1, &same)); /* keep the shape */
  EXPECT_OK(max_tensor_dtype(same, &dtype));
  assert_int_equal(dtype, MAX_DTYPE_INT32);
  EXPECT_OK(max_tensor_rank(same, &rank));
  assert_int_equal(rank, 2);
  max_tensor_release(same);
  max_tensor_release(v);
  v = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_view(t, MAX_DTYPE_FLOAT32, four, 1, &v), MAX_STATUS_INVALID_ARGUMENT,
                "float32[4] has 16 bytes", "float32[2, 3] has 24");
  assert_null(v);
  EXPECT_STATUS(max_tensor_view(t, MAX_DTYPE_FLOAT64, NULL, -1, &v), MAX_STATUS_INVALID_ARGUMENT,
                "48 bytes", "24");
  assert_null(v);
  max_tensor_release(t);
}

static void tensor_to_host_size_mismatch(void** state) {
  max_tensor_t* t = make_tensor_f32(k2x3, 2, k123456, 6);
  float out[8];
  (void)state;
  EXPECT_STATUS(max_tensor_to_host(t, out, sizeof out), MAX_STATUS_INVALID_ARGUMENT, "32 bytes",
                "needs 24");
  max_tensor_release(t);
}

/* ======================================================================================
 * Tensor lists and buffers
 * ====================================================================================== */

static void tensor_list(void** state) {
  max_tensor_list_t* list = NULL;
  max_tensor_t *a = make_zeros(MAX_DTYPE_INT8, k2x3, 2), *b = make_tensor_f32(k2x3, 2, k123456, 6);
  max_tensor_t* got = NULL;
  size_t n = 99;
  (void)state;
  EXPECT_OK(max_tensor_list_create(&list));
  EXPECT_OK(max_tensor_list_size(list, &n));
  assert_int_equal(n, 0);
  EXPECT_OK(max_tensor_list_append(list, a));
  EXPECT_OK(max_tensor_list_append(list, b));
  EXPECT_OK(max_tensor_list_append(list, a));
  max_tensor_release(a);
  max_tensor_release(b);
  EXPECT_OK(max_tensor_list_size(list, &n));
  assert_int_equal(n, 3);
  EXPECT_OK(max_tensor_list_get(list, 1, &got));
  assert_ptr_equal(got, b);
  max_tensor_list_retain(list);
  max_tensor_list_release(list);
  max_tensor_list_release(list); /* the list goes; the reference we got stays valid */
  expect_f32_contents(got, k123456, 6);
  max_tensor_release(got);
}

static void buffer(void** state) {
  char bytes[5] = {'h', 'e', 'l', 'l', 'o'};
  max_buffer_t *b = NULL, *empty = NULL;
  const void* data = NULL;
  size_t size = 0;
  (void)state;
  EXPECT_OK(max_buffer_create(bytes, sizeof bytes, &b));
  bytes[0] = 'j'; /* the buffer owns a copy */
  EXPECT_OK(max_buffer_size(b, &size));
  assert_int_equal(size, 5);
  EXPECT_OK(max_buffer_data(b, &data));
  assert_ptr_not_equal(data, bytes);
  assert_memory_equal(data, "hello", 5);
  max_buffer_retain(b);
  max_buffer_release(b);
  max_buffer_release(b);
  EXPECT_OK(max_buffer_create(NULL, 0, &empty));
  EXPECT_OK(max_buffer_size(empty, &size));
  assert_int_equal(size, 0);
  max_buffer_release(empty);
}

int main(int argc, char** argv) {
  const struct CMUnitTest log_only[] = {cmocka_unit_test(initial_log_level_from_env)};
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(initial_log_level_from_env), /* first: before anything sets the level */
      cmocka_unit_test(versions),
      cmocka_unit_test(check_abi_accepts_this_and_older_minors),
      cmocka_unit_test(check_abi_newer_header_message),
      cmocka_unit_test(check_abi_major_mismatch),
      cmocka_unit_test(status_code_names),
      cmocka_unit_test(status_accessors),
      cmocka_unit_test(log_level_set_and_get),
      cmocka_unit_test(dtype_traits_of_all_23),
      cmocka_unit_test(dtype_unknown_codes),
      cmocka_unit_test(dtype_from_unknown_name),
      cmocka_unit_test(cpu_device_is_a_singleton),
      cmocka_unit_test(cpu_device_properties),
      cmocka_unit_test(accelerators),
      cmocka_unit_test(unknown_device_kind),
      cmocka_unit_test(context_defaults),
      cmocka_unit_test(context_options),
      cmocka_unit_test(context_refuses_bad_options),
      cmocka_unit_test(tensor_zeros),
      cmocka_unit_test(tensor_scalar_empty_and_subbyte),
      cmocka_unit_test(tensor_empty_with_null_memory),
      cmocka_unit_test(tensor_from_host_copies),
      cmocka_unit_test(tensor_from_host_size_mismatch),
      cmocka_unit_test(tensor_borrowed_release_once),
      cmocka_unit_test(tensor_borrowed_read_only),
      cmocka_unit_test(tensor_strided_borrowed_view),
      cmocka_unit_test(tensor_copy_is_deep),
      cmocka_unit_test(tensor_copy_from),
      cmocka_unit_test(tensor_view),
      cmocka_unit_test(tensor_to_host_size_mismatch),
      cmocka_unit_test(tensor_list),
      cmocka_unit_test(buffer),
  };
  if (argc == 2 && strcmp(argv[1], "log") == 0)
    return cmocka_run_group_tests_name("log level from MAX_C_LOG_LEVEL", log_only, NULL, NULL);
  return cmocka_run_group_tests_name("core behaviour", tests, NULL, NULL);
}
