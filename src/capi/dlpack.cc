#include "capi/capi.h"
#include "driver/dlpack.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

max_status_t* max_tensor_to_dlpack(max_tensor_t* tensor, DLManagedTensorVersioned** out_managed) {
  return MAXC_GUARD({
    auto& out = out_param(out_managed, "out_managed");
    out = to_dlpack(share(tensor, "tensor"));
  });
}

max_status_t* max_tensor_from_dlpack(DLManagedTensorVersioned* managed, max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    if (!managed) fail(Code::kInvalidArgument, "managed is NULL");
    out = to_handle<max_tensor_t>(from_dlpack(managed));
  });
}

max_status_t* max_tensor_to_dlpack_unversioned(max_tensor_t* tensor, DLManagedTensor** out_managed) {
  return MAXC_GUARD({
    auto& out = out_param(out_managed, "out_managed");
    out = to_dlpack_unversioned(share(tensor, "tensor"));
  });
}

max_status_t* max_tensor_from_dlpack_unversioned(DLManagedTensor* managed,
                                                 max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    if (!managed) fail(Code::kInvalidArgument, "managed is NULL");
    out = to_handle<max_tensor_t>(from_dlpack_unversioned(managed));
  });
}

max_status_t* max_tensor_dlpack_device(const max_tensor_t* tensor, DLDevice* out_device) {
  return MAXC_GUARD({
    auto& out = out_param(out_device, "out_device");
    out = dlpack_device(*deref(tensor, "tensor").device());
  });
}

}  // extern "C"
