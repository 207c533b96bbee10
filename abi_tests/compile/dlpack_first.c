/* dlpack.h first, then max_c.h: must compile warning-free (-std=c99 -pedantic -Werror) and
 * exchange tensors through the third-party declarations. Compiled as C here and as C++ by
 * dlpack_first.cc, which includes this file. */
#include "third_party_dlpack.h"
#include "max_c.h"

#include <stdio.h>

#if !defined(THIRD_PARTY_DLPACK_INCLUDED)
#error "the third-party DLPack header was not the one in force"
#endif

static int g_deleted = 0;

static void producer_deleter(DLManagedTensorVersioned* self) {
  (void)self;
  ++g_deleted;
}

int main(void) {
  int failed = 0;
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned producer;
  max_tensor_t* tensor = NULL;
  DLManagedTensorVersioned* exported = NULL;
  max_status_t* status;
  float back[6] = {0};

  producer.version.major = DLPACK_MAJOR_VERSION;
  producer.version.minor = DLPACK_MINOR_VERSION;
  producer.manager_ctx = NULL;
  producer.deleter = producer_deleter;
  producer.flags = 0;
  producer.dl_tensor.data = data;
  producer.dl_tensor.device.device_type = kDLCPU;
  producer.dl_tensor.device.device_id = 0;
  producer.dl_tensor.ndim = 2;
  producer.dl_tensor.dtype.code = kDLFloat;
  producer.dl_tensor.dtype.bits = 32;
  producer.dl_tensor.dtype.lanes = 1;
  producer.dl_tensor.shape = shape;
  producer.dl_tensor.strides = NULL;
  producer.dl_tensor.byte_offset = 0;

  status = max_tensor_from_dlpack(&producer, &tensor);
  if (status) {
    fprintf(stderr, "from_dlpack: %s\n", max_status_message(status));
    failed = 1;
  }
  max_status_release(status);
  status = max_tensor_to_host(tensor, back, sizeof back);
  failed |= status != NULL || back[5] != 6.0f;
  max_status_release(status);
  status = max_tensor_to_dlpack(tensor, &exported);
  failed |= status != NULL || exported == NULL || exported->dl_tensor.ndim != 2 ||
            exported->dl_tensor.dtype.code != kDLFloat || exported->dl_tensor.strides == NULL;
  max_status_release(status);
  max_tensor_release(tensor);
  failed |= g_deleted != 0; /* the export still holds the memory */
  if (exported) exported->deleter(exported);
  failed |= g_deleted != 1;
  printf("dlpack_first: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
