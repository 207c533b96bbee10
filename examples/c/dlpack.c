/*
 * dlpack.c -- exchanging tensors with another framework through DLPack 1.x, both ways,
 * and what a failed import leaves to the caller. Every call is checked; any failure prints
 * its message and exits non-zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example_check.h"
#include "max_c.h"

/* ---- a stand-in "other framework" that produces a DLPack tensor ---- */

typedef struct producer {
  double data[6];
  int64_t shape[2];
  int deleted;
  DLManagedTensorVersioned managed;
} producer;

static void producer_deleter(DLManagedTensorVersioned* self) {
  ((producer*)self->manager_ctx)->deleted++;
}

static void producer_init(producer* p) {
  memset(p, 0, sizeof(*p));
  for (int i = 0; i < 6; ++i) p->data[i] = i + 0.5;
  p->shape[0] = 2;
  p->shape[1] = 3;
  p->managed.version.major = DLPACK_MAJOR_VERSION;
  p->managed.version.minor = DLPACK_MINOR_VERSION;
  p->managed.manager_ctx = p;
  p->managed.deleter = producer_deleter;
  p->managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  p->managed.dl_tensor.data = p->data;
  p->managed.dl_tensor.device.device_type = kDLCPU;
  p->managed.dl_tensor.device.device_id = 0;
  p->managed.dl_tensor.ndim = 2;
  p->managed.dl_tensor.dtype.code = kDLFloat;
  p->managed.dl_tensor.dtype.bits = 64;
  p->managed.dl_tensor.dtype.lanes = 1;
  p->managed.dl_tensor.shape = p->shape;
  p->managed.dl_tensor.strides = NULL; /* row-major */
  p->managed.dl_tensor.byte_offset = 0;
}

int main(void) {
  CHECK(max_check_abi(MAX_ABI_VERSION));

  /* 1. Export: max_c tensor -> DLManagedTensorVersioned. Shape and strides are filled. */
  const int64_t dims[2] = {2, 2};
  const float values[4] = {1, 2, 3, 4};
  max_tensor_t* tensor;
  CHECK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, values, sizeof(values),
                                    &tensor));
  DLManagedTensorVersioned* exported;
  CHECK(max_tensor_to_dlpack(tensor, &exported));
  const DLTensor* dl = &exported->dl_tensor;
  EXPECT(exported->version.major == 1, "DLPack major version 1");
  EXPECT(dl->device.device_type == kDLCPU && dl->ndim == 2, "a CPU tensor of rank 2");
  EXPECT(dl->dtype.code == kDLFloat && dl->dtype.bits == 32 && dl->dtype.lanes == 1, "float32");
  EXPECT(dl->strides != NULL && dl->strides[0] == 2 && dl->strides[1] == 1, "filled strides");
  DLDevice device;
  CHECK(max_tensor_dlpack_device(tensor, &device));
  EXPECT(device.device_type == kDLCPU, "__dlpack_device__ to be the CPU");
  /* The consumer may outlive the handle: release it first, read, then call the deleter. */
  max_tensor_release(tensor);
  const float* shared = (const float*)((const char*)dl->data + dl->byte_offset);
  EXPECT(shared[3] == 4.0f, "the exported memory to stay valid after the handle is released");
  exported->deleter(exported);
  printf("export: float32[2, 2], deleter called by the consumer\n");

  /* 2. Import: a producer's struct -> max_c tensor, zero-copy, read-only flag honoured. */
  producer p;
  producer_init(&p);
  max_tensor_t* imported;
  CHECK(max_tensor_from_dlpack(&p.managed, &imported));
  int32_t read_only;
  max_dtype_t dtype;
  const void* data;
  CHECK(max_tensor_is_read_only(imported, &read_only));
  CHECK(max_tensor_dtype(imported, &dtype));
  CHECK(max_tensor_data(imported, &data));
  EXPECT(read_only && dtype == MAX_DTYPE_FLOAT64 && data == (const void*)p.data,
         "a read-only float64 view of the producer's memory");
  max_tensor_t* copy;
  CHECK(max_tensor_copy(imported, NULL, &copy));
  max_tensor_release(imported);
  EXPECT(p.deleted == 1, "the producer's deleter to run exactly once, at the last release");
  max_tensor_release(copy);
  EXPECT(p.deleted == 1, "no second deleter call");
  printf("import: float64[2, 3] read-only, deleter called once\n");

  /* 3. A failed import takes nothing: the struct and its deleter stay the caller's. */
  producer_init(&p);
  p.managed.version.major = 2; /* a future DLPack this library does not speak */
  max_tensor_t* rejected = NULL;
  max_status_t* status = max_tensor_from_dlpack(&p.managed, &rejected);
  EXPECT(status != NULL && rejected == NULL && p.deleted == 0,
         "an unsupported major version to be refused without calling the deleter");
  printf("import of DLPack 2.x: %s: %s\n", max_status_code_name(max_status_code(status)),
         max_status_message(status));
  max_status_release(status);
  p.managed.deleter(&p.managed); /* still ours to call */

  /* 4. The unversioned (pre-1.0) struct, for older consumers: a round trip. */
  max_tensor_t* t;
  CHECK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, values, sizeof(values), &t));
  DLManagedTensor* legacy;
  CHECK(max_tensor_to_dlpack_unversioned(t, &legacy));
  max_tensor_t* again;
  CHECK(max_tensor_from_dlpack_unversioned(legacy, &again)); /* takes legacy */
  float out[4];
  CHECK(max_tensor_to_host(again, out, sizeof(out)));
  EXPECT(memcmp(out, values, sizeof(out)) == 0, "the values after an unversioned round trip");
  max_tensor_release(t);
  max_tensor_release(again);
  printf("unversioned round trip: ok\n");

  printf("dlpack OK\n");
  return 0;
}
