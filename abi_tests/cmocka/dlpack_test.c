/* DLPack exchange through the ABI: exports and imports, versioned and unversioned, with
 * the ownership rules of the header (deleter exactly once, nothing taken on a failed import),
 * read-only, strides and byte_offset. */
#include "abi_test.h"

/* ---- a hand-made producer -----------------------------------------------------------------
 * The memory, shape and strides live in the producer struct itself; the deleter counts its
 * calls and checks it gets its own struct back. */

typedef struct {
  DLManagedTensorVersioned managed;
  DLManagedTensor unversioned;
  float data[32];
  int64_t shape[4];
  int64_t strides[4];
  int deleted;
} producer_t;

/* Deleters run inside the library: they record, the test asserts afterwards (a cmocka
 * assertion would longjmp through the library's frames). A deleter handed the wrong struct
 * counts as 100 calls, which no expectation accepts. */
static void producer_deleter(DLManagedTensorVersioned* self) {
  producer_t* p = (producer_t*)self->manager_ctx;
  p->deleted += self == &p->managed ? 1 : 100;
}

static void producer_deleter_unversioned(DLManagedTensor* self) {
  producer_t* p = (producer_t*)self->manager_ctx;
  p->deleted += self == &p->unversioned ? 1 : 100;
}

/* A contiguous float32 producer of the given shape holding 0, 1, 2, ... */
static void producer_init(producer_t* p, const int64_t* shape, int32_t ndim) {
  int32_t i;
  DLTensor t;
  memset(p, 0, sizeof *p);
  for (i = 0; i < 32; ++i) p->data[i] = (float)i;
  for (i = 0; i < ndim; ++i) p->shape[i] = shape[i];
  memset(&t, 0, sizeof t);
  t.data = p->data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = p->shape;
  t.strides = NULL;
  t.byte_offset = 0;
  p->managed.version.major = DLPACK_MAJOR_VERSION;
  p->managed.version.minor = DLPACK_MINOR_VERSION;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
  p->managed.flags = 0;
  p->managed.dl_tensor = t;
  p->unversioned.dl_tensor = t;
  p->unversioned.manager_ctx = p;
  p->unversioned.deleter = producer_deleter_unversioned;
}

static max_tensor_t* import_versioned(producer_t* p) {
  max_tensor_t* t = NULL;
  EXPECT_OK(max_tensor_from_dlpack(&p->managed, &t));
  assert_non_null(t);
  return t;
}

static const int64_t k2x3[2] = {2, 3};

/* ---- export: our tensor -> DLPack -> back ---------------------------------------------- */

static void export_fills_every_field(void** state) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t* t = make_tensor_f32(k2x3, 2, values, 6);
  DLManagedTensorVersioned* m = NULL;
  const void* data = NULL;
  (void)state;
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  assert_non_null(m);
  assert_int_equal(m->version.major, 1);
  assert_int_equal(m->version.minor, DLPACK_MINOR_VERSION);
  assert_non_null(m->deleter);
  assert_int_equal(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
  assert_int_equal(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0); /* shared, not copied */
  assert_int_equal(m->dl_tensor.device.device_type, kDLCPU);
  assert_int_equal(m->dl_tensor.device.device_id, 0);
  assert_int_equal(m->dl_tensor.ndim, 2);
  assert_int_equal(m->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(m->dl_tensor.dtype.bits, 32);
  assert_int_equal(m->dl_tensor.dtype.lanes, 1);
  assert_int_equal(m->dl_tensor.shape[0], 2);
  assert_int_equal(m->dl_tensor.shape[1], 3);
  assert_non_null(m->dl_tensor.strides); /* always filled on export */
  assert_int_equal(m->dl_tensor.strides[0], 3);
  assert_int_equal(m->dl_tensor.strides[1], 1);
  EXPECT_OK(max_tensor_data(t, &data));
  assert_ptr_equal((const char*)m->dl_tensor.data + m->dl_tensor.byte_offset, data); /* no copy */
  assert_true(((const float*)data)[4] == 5.0f);
  m->deleter(m);
  max_tensor_release(t);
}

static void export_dtype_codes(void** state) {
  static const struct {
    max_dtype_t dtype;
    uint8_t code, bits;
  } cases[] = {
      {MAX_DTYPE_BOOL, kDLBool, 8},          {MAX_DTYPE_INT8, kDLInt, 8},
      {MAX_DTYPE_INT16, kDLInt, 16},         {MAX_DTYPE_INT32, kDLInt, 32},
      {MAX_DTYPE_INT64, kDLInt, 64},         {MAX_DTYPE_UINT8, kDLUInt, 8},
      {MAX_DTYPE_UINT16, kDLUInt, 16},       {MAX_DTYPE_UINT32, kDLUInt, 32},
      {MAX_DTYPE_UINT64, kDLUInt, 64},       {MAX_DTYPE_FLOAT16, kDLFloat, 16},
      {MAX_DTYPE_FLOAT32, kDLFloat, 32},     {MAX_DTYPE_FLOAT64, kDLFloat, 64},
      {MAX_DTYPE_BFLOAT16, kDLBfloat, 16},   {MAX_DTYPE_FLOAT8_E4M3FN, kDLFloat8_e4m3fn, 8},
      {MAX_DTYPE_FLOAT8_E4M3FNUZ, kDLFloat8_e4m3fnuz, 8},
      {MAX_DTYPE_FLOAT8_E5M2, kDLFloat8_e5m2, 8},
      {MAX_DTYPE_FLOAT8_E5M2FNUZ, kDLFloat8_e5m2fnuz, 8},
      {MAX_DTYPE_FLOAT4_E2M1FN, kDLFloat4_e2m1fn, 4},
      {MAX_DTYPE_FLOAT8_E8M0FNU, kDLFloat8_e8m0fnu, 8},
      {MAX_DTYPE_UINT2, kDLUInt, 2},         {MAX_DTYPE_INT2, kDLInt, 2},
      {MAX_DTYPE_UINT4, kDLUInt, 4},         {MAX_DTYPE_INT4, kDLInt, 4},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const int64_t dims[1] = {4};
    max_tensor_t* t = make_zeros(cases[i].dtype, dims, 1);
    max_tensor_t* back = NULL;
    max_dtype_t d = 0;
    DLManagedTensorVersioned* m = NULL;
    EXPECT_OK(max_tensor_to_dlpack(t, &m));
    if (m->dl_tensor.dtype.code != cases[i].code || m->dl_tensor.dtype.bits != cases[i].bits ||
        m->dl_tensor.dtype.lanes != 1)
      fail_msg("%s exports as DLPack (%d, %d, %d), expected (%d, %d, 1)",
               max_dtype_name(cases[i].dtype), m->dl_tensor.dtype.code, m->dl_tensor.dtype.bits,
               m->dl_tensor.dtype.lanes, cases[i].code, cases[i].bits);
    EXPECT_OK(max_tensor_from_dlpack(m, &back)); /* and back to the same dtype */
    EXPECT_OK(max_tensor_dtype(back, &d));
    assert_int_equal(d, cases[i].dtype);
    max_tensor_release(back);
    max_tensor_release(t);
  }
}

/* Export, then import the export: the round trip gives back the same elements and memory. */
static void round_trip_ours_versioned(void** state) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t* t = make_tensor_f32(k2x3, 2, values, 6);
  max_tensor_t* back = NULL;
  DLManagedTensorVersioned* m = NULL;
  const void *a = NULL, *b = NULL;
  int32_t rank = 0;
  (void)state;
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  EXPECT_OK(max_tensor_from_dlpack(m, &back)); /* back now owns m */
  EXPECT_OK(max_tensor_rank(back, &rank));
  assert_int_equal(rank, 2);
  expect_f32_contents(back, values, 6);
  EXPECT_OK(max_tensor_data(t, &a));
  EXPECT_OK(max_tensor_data(back, &b));
  assert_ptr_equal(a, b);
  max_tensor_release(t); /* back keeps the memory alive through m */
  expect_f32_contents(back, values, 6);
  max_tensor_release(back); /* runs m's deleter, which frees the rest */
}

static void round_trip_ours_unversioned(void** state) {
  const float values[6] = {6, 5, 4, 3, 2, 1};
  max_tensor_t* t = make_tensor_f32(k2x3, 2, values, 6);
  max_tensor_t* back = NULL;
  DLManagedTensor* m = NULL;
  (void)state;
  EXPECT_OK(max_tensor_to_dlpack_unversioned(t, &m));
  assert_non_null(m);
  assert_non_null(m->deleter);
  assert_non_null(m->dl_tensor.strides);
  assert_int_equal(m->dl_tensor.ndim, 2);
  max_tensor_release(t);
  EXPECT_OK(max_tensor_from_dlpack_unversioned(m, &back));
  expect_f32_contents(back, values, 6);
  max_tensor_release(back);
}

/* ---- import: a producer -> our tensor -> export again ----------------------------------- */

static void round_trip_producer_versioned(void** state) {
  producer_t p;
  max_tensor_t* t;
  DLManagedTensorVersioned* again = NULL;
  const float want[6] = {0, 1, 2, 3, 4, 5};
  (void)state;
  producer_init(&p, k2x3, 2);
  t = import_versioned(&p);
  expect_f32_contents(t, want, 6);
  p.data[5] = 50.0f; /* zero-copy: the tensor sees the producer's memory */
  {
    const float want2[6] = {0, 1, 2, 3, 4, 50};
    expect_f32_contents(t, want2, 6);
  }
  EXPECT_OK(max_tensor_to_dlpack(t, &again));
  assert_ptr_equal((char*)again->dl_tensor.data + again->dl_tensor.byte_offset, p.data);
  assert_int_equal(again->dl_tensor.shape[1], 3);
  max_tensor_release(t);
  assert_int_equal(p.deleted, 0); /* the re-export still uses the memory */
  again->deleter(again);
  assert_int_equal(p.deleted, 1);
}

static void round_trip_producer_unversioned(void** state) {
  producer_t p;
  max_tensor_t* t = NULL;
  DLManagedTensor* again = NULL;
  const float want[6] = {0, 1, 2, 3, 4, 5};
  int32_t read_only = -1;
  (void)state;
  producer_init(&p, k2x3, 2);
  EXPECT_OK(max_tensor_from_dlpack_unversioned(&p.unversioned, &t));
  expect_f32_contents(t, want, 6);
  EXPECT_OK(max_tensor_is_read_only(t, &read_only));
  assert_int_equal(read_only, 0);
  EXPECT_OK(max_tensor_to_dlpack_unversioned(t, &again));
  assert_ptr_equal((char*)again->dl_tensor.data + again->dl_tensor.byte_offset, p.data);
  again->deleter(again);
  assert_int_equal(p.deleted, 0);
  max_tensor_release(t);
  assert_int_equal(p.deleted, 1);
}

/* ---- the deleter runs exactly once, in every order ------------------------------------- */

static void deleter_once_when_tensor_released(void** state) {
  producer_t p;
  max_tensor_t* t;
  (void)state;
  producer_init(&p, k2x3, 2);
  t = import_versioned(&p);
  assert_int_equal(p.deleted, 0);
  max_tensor_release(t);
  assert_int_equal(p.deleted, 1);
}

static void deleter_waits_for_every_view(void** state) {
  producer_t p;
  max_tensor_t *t, *view = NULL, *copy = NULL, *got = NULL;
  max_tensor_list_t* list = NULL;
  const int64_t flat[1] = {6};
  (void)state;
  producer_init(&p, k2x3, 2);
  t = import_versioned(&p);
  EXPECT_OK(max_tensor_view(t, MAX_DTYPE_FLOAT32, flat, 1, &view));
  EXPECT_OK(max_tensor_copy(t, NULL, &copy)); /* a deep copy does not hold the memory */
  EXPECT_OK(max_tensor_list_create(&list));
  EXPECT_OK(max_tensor_list_append(list, t));
  max_tensor_release(t);
  max_tensor_release(copy);
  assert_int_equal(p.deleted, 0);
  max_tensor_release(view);
  assert_int_equal(p.deleted, 0); /* the list still holds t */
  EXPECT_OK(max_tensor_list_get(list, 0, &got));
  max_tensor_list_release(list);
  assert_int_equal(p.deleted, 0);
  max_tensor_release(got);
  assert_int_equal(p.deleted, 1);
}

/* Export of our tensor: the memory outlives whichever of tensor and managed goes first. */
static void export_tensor_released_first(void** state) {
  call_counter released = {0};
  float data[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t* t = NULL;
  DLManagedTensorVersioned* m = NULL;
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 0, count_call,
                                       &released, &t));
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  max_tensor_release(t);
  assert_int_equal(released.calls, 0);
  assert_true(((float*)m->dl_tensor.data)[5] == 6.0f); /* still readable */
  m->deleter(m);
  assert_int_equal(released.calls, 1);
}

static void export_managed_released_first(void** state) {
  call_counter released = {0};
  float data[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t* t = NULL;
  DLManagedTensorVersioned* m = NULL;
  DLManagedTensor* u = NULL;
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 0, count_call,
                                       &released, &t));
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  EXPECT_OK(max_tensor_to_dlpack_unversioned(t, &u));
  m->deleter(m);
  u->deleter(u);
  assert_int_equal(released.calls, 0);
  expect_f32_contents(t, data, 6);
  max_tensor_release(t);
  assert_int_equal(released.calls, 1);
}

/* A producer struct that is never imported stays the caller's: we never call its deleter. */
static void unconsumed_producer_is_never_touched(void** state) {
  producer_t p;
  max_tensor_t* other = make_zeros(MAX_DTYPE_FLOAT32, k2x3, 2);
  (void)state;
  producer_init(&p, k2x3, 2);
  max_tensor_release(other);
  assert_int_equal(p.deleted, 0);
  p.managed.deleter(&p.managed);
  assert_int_equal(p.deleted, 1);
}

/* ---- failed imports leave ownership with the caller ------------------------------------ */

static void expect_refused(producer_t* p, max_status_code_t code, const char* fragment) {
  max_tensor_t* t = SENTINEL_PTR;
  EXPECT_STATUS(max_tensor_from_dlpack(&p->managed, &t), code, "max_tensor_from_dlpack", fragment);
  assert_null(t);
  assert_int_equal(p->deleted, 0); /* not taken */
  p->managed.deleter(&p->managed); /* still the caller's to delete */
  assert_int_equal(p->deleted, 1);
}

static void failed_import_bad_major_version(void** state) {
  producer_t p;
  (void)state;
  producer_init(&p, k2x3, 2);
  p.managed.version.major = 2;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "major version 2");
  producer_init(&p, k2x3, 2);
  p.managed.version.major = 0;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "major version 0");
}

static void failed_import_bad_dtype(void** state) {
  producer_t p;
  (void)state;
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.dtype.code = kDLComplex;
  p.managed.dl_tensor.dtype.bits = 64;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "code 5");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.dtype.code = 200;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "code 200");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.dtype.bits = 24; /* float24 */
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "24 bits");
}

static void failed_import_lanes(void** state) {
  producer_t p;
  max_tensor_t* t = SENTINEL_PTR;
  (void)state;
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.dtype.lanes = 2;
  expect_refused(&p, MAX_STATUS_UNIMPLEMENTED, "2 lanes");
  producer_init(&p, k2x3, 2);
  p.unversioned.dl_tensor.dtype.lanes = 2;
  EXPECT_STATUS(max_tensor_from_dlpack_unversioned(&p.unversioned, &t), MAX_STATUS_UNIMPLEMENTED,
                "lanes");
  assert_null(t);
  assert_int_equal(p.deleted, 0);
}

static void failed_import_bad_ndim_shape_data_device(void** state) {
  producer_t p;
  max_tensor_t* t = SENTINEL_PTR;
  (void)state;
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.ndim = -1;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "ndim -1");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.ndim = MAX_TENSOR_MAX_RANK + 1;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "ndim 65");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.shape = NULL;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "shape");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.data = NULL;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "data");
  producer_init(&p, k2x3, 2);
  p.shape[1] = -3;
  expect_refused(&p, MAX_STATUS_INVALID_ARGUMENT, "negative");
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.device.device_type = kDLVulkan;
  expect_refused(&p, MAX_STATUS_UNIMPLEMENTED, "device type 7");
  producer_init(&p, k2x3, 2);
  p.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  expect_refused(&p, MAX_STATUS_UNIMPLEMENTED, "sub-byte");
  /* unversioned: same rule */
  producer_init(&p, k2x3, 2);
  p.unversioned.dl_tensor.ndim = -1;
  EXPECT_STATUS(max_tensor_from_dlpack_unversioned(&p.unversioned, &t),
                MAX_STATUS_INVALID_ARGUMENT, "ndim -1");
  assert_null(t);
  assert_int_equal(p.deleted, 0);
  p.unversioned.deleter(&p.unversioned);
  assert_int_equal(p.deleted, 1);
}

static void failed_import_accelerator_device(void** state) {
  producer_t p;
  int32_t accelerators = -1;
  (void)state;
  EXPECT_OK(max_accelerator_count(&accelerators));
  if (accelerators > 0) skip(); /* on a GPU machine a CUDA import may well succeed */
  producer_init(&p, k2x3, 2);
  p.managed.dl_tensor.device.device_type = kDLCUDA;
  expect_refused(&p, MAX_STATUS_NOT_FOUND, "CUDA");
}

/* ---- read-only ------------------------------------------------------------------------ */

static void read_only_import_refuses_writes(void** state) {
  producer_t p;
  max_tensor_t *t, *src;
  void* data = SENTINEL_PTR;
  int32_t read_only = -1;
  const float want[6] = {0, 1, 2, 3, 4, 5};
  DLManagedTensorVersioned* again = NULL;
  (void)state;
  producer_init(&p, k2x3, 2);
  p.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  t = import_versioned(&p);
  EXPECT_OK(max_tensor_is_read_only(t, &read_only));
  assert_int_equal(read_only, 1);
  EXPECT_STATUS(max_tensor_mutable_data(t, &data), MAX_STATUS_FAILED_PRECONDITION, "read-only");
  assert_null(data);
  src = make_zeros(MAX_DTYPE_FLOAT32, k2x3, 2);
  EXPECT_STATUS(max_tensor_copy_from(t, src), MAX_STATUS_FAILED_PRECONDITION, "read-only");
  expect_f32_contents(t, want, 6); /* untouched */
  /* exporting it again keeps the flag */
  EXPECT_OK(max_tensor_to_dlpack(t, &again));
  assert_int_equal(again->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  again->deleter(again);
  max_tensor_release(src);
  max_tensor_release(t);
  assert_int_equal(p.deleted, 1);
}

static void read_only_borrowed_exports_the_flag(void** state) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  max_tensor_t *t = NULL, *rw = NULL;
  DLManagedTensorVersioned* m = NULL;
  (void)state;
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 1, NULL, NULL, &t));
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  assert_int_equal(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  EXPECT_OK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, k2x3, 2, NULL, data, 0, NULL, NULL, &rw));
  EXPECT_OK(max_tensor_to_dlpack(rw, &m));
  assert_int_equal(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
  m->deleter(m);
  max_tensor_release(rw);
  max_tensor_release(t);
}

/* ---- strides and byte_offset -------------------------------------------------------- */

static void null_strides_mean_row_major(void** state) {
  producer_t p;
  max_tensor_t* t;
  const int64_t* strides = NULL;
  int32_t contiguous = 0;
  (void)state;
  producer_init(&p, k2x3, 2); /* strides NULL */
  t = import_versioned(&p);
  EXPECT_OK(max_tensor_strides(t, &strides));
  assert_non_null(strides);
  assert_int_equal(strides[0], 3);
  assert_int_equal(strides[1], 1);
  EXPECT_OK(max_tensor_is_contiguous(t, &contiguous));
  assert_int_equal(contiguous, 1);
  max_tensor_release(t);
}

/* A transposed view (shape [3, 2], strides [1, 3] over 2x3 row-major memory) reads back
 * transposed, and exports its own strides. */
static void non_contiguous_strides_read_back(void** state) {
  producer_t p;
  max_tensor_t *t, *copy = NULL;
  const int64_t shape[2] = {3, 2};
  const float want[6] = {0, 3, 1, 4, 2, 5};
  int32_t contiguous = 1;
  DLManagedTensorVersioned* again = NULL;
  (void)state;
  producer_init(&p, shape, 2);
  p.strides[0] = 1;
  p.strides[1] = 3;
  p.managed.dl_tensor.strides = p.strides;
  t = import_versioned(&p);
  EXPECT_OK(max_tensor_is_contiguous(t, &contiguous));
  assert_int_equal(contiguous, 0);
  expect_f32_contents(t, want, 6);
  EXPECT_OK(max_tensor_copy(t, NULL, &copy)); /* a contiguous copy of the strided view */
  expect_f32_contents(copy, want, 6);
  EXPECT_OK(max_tensor_to_dlpack(t, &again));
  assert_int_equal(again->dl_tensor.strides[0], 1);
  assert_int_equal(again->dl_tensor.strides[1], 3);
  again->deleter(again);
  max_tensor_release(copy);
  max_tensor_release(t);
  assert_int_equal(p.deleted, 1);
}

/* Every other element of row 1 of a 4x4 matrix: shape [2], stride 2, 6 floats in. */
static void strided_with_byte_offset(void** state) {
  producer_t p;
  max_tensor_t* t;
  const int64_t shape[1] = {2};
  const float want[2] = {6, 8};
  DLManagedTensorVersioned* again = NULL;
  max_tensor_t* back = NULL;
  (void)state;
  producer_init(&p, shape, 1);
  p.strides[0] = 2;
  p.managed.dl_tensor.strides = p.strides;
  p.managed.dl_tensor.byte_offset = 6 * sizeof(float);
  t = import_versioned(&p);
  expect_f32_contents(t, want, 2);
  {
    const void* data = NULL;
    EXPECT_OK(max_tensor_data(t, &data));
    assert_ptr_equal(data, &p.data[6]); /* data() is the first element, offset included */
  }
  EXPECT_OK(max_tensor_to_dlpack(t, &again));
  assert_ptr_equal((char*)again->dl_tensor.data + again->dl_tensor.byte_offset, &p.data[6]);
  EXPECT_OK(max_tensor_from_dlpack(again, &back)); /* honoured on the way back in too */
  expect_f32_contents(back, want, 2);
  max_tensor_release(t);
  max_tensor_release(back);
  assert_int_equal(p.deleted, 1);
}

static void scalar_round_trip(void** state) {
  const float value = 42.0f;
  max_tensor_t *t = NULL, *back = NULL;
  DLManagedTensorVersioned* m = NULL;
  int32_t rank = -1;
  (void)state;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, NULL, 0, &value, sizeof value, &t));
  EXPECT_OK(max_tensor_to_dlpack(t, &m));
  assert_int_equal(m->dl_tensor.ndim, 0);
  EXPECT_OK(max_tensor_from_dlpack(m, &back));
  EXPECT_OK(max_tensor_rank(back, &rank));
  assert_int_equal(rank, 0);
  expect_f32_contents(back, &value, 1);
  max_tensor_release(back);
  max_tensor_release(t);
}

static void dlpack_device_of_cpu_tensor(void** state) {
  max_tensor_t* t = make_zeros(MAX_DTYPE_INT32, k2x3, 2);
  DLDevice d = {kDLVulkan, 7};
  (void)state;
  EXPECT_OK(max_tensor_dlpack_device(t, &d));
  assert_int_equal(d.device_type, kDLCPU);
  assert_int_equal(d.device_id, 0);
  max_tensor_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(export_fills_every_field),
      cmocka_unit_test(export_dtype_codes),
      cmocka_unit_test(round_trip_ours_versioned),
      cmocka_unit_test(round_trip_ours_unversioned),
      cmocka_unit_test(round_trip_producer_versioned),
      cmocka_unit_test(round_trip_producer_unversioned),
      cmocka_unit_test(deleter_once_when_tensor_released),
      cmocka_unit_test(deleter_waits_for_every_view),
      cmocka_unit_test(export_tensor_released_first),
      cmocka_unit_test(export_managed_released_first),
      cmocka_unit_test(unconsumed_producer_is_never_touched),
      cmocka_unit_test(failed_import_bad_major_version),
      cmocka_unit_test(failed_import_bad_dtype),
      cmocka_unit_test(failed_import_lanes),
      cmocka_unit_test(failed_import_bad_ndim_shape_data_device),
      cmocka_unit_test(failed_import_accelerator_device),
      cmocka_unit_test(read_only_import_refuses_writes),
      cmocka_unit_test(read_only_borrowed_exports_the_flag),
      cmocka_unit_test(null_strides_mean_row_major),
      cmocka_unit_test(non_contiguous_strides_read_back),
      cmocka_unit_test(strided_with_byte_offset),
      cmocka_unit_test(scalar_round_trip),
      cmocka_unit_test(dlpack_device_of_cpu_tensor),
  };
  return cmocka_run_group_tests_name("DLPack", tests, NULL, NULL);
}
