// DLPack exchange (https://dmlc.github.io/dlpack): tensors out to and in from other
// frameworks without copying. The struct declarations come from the public header, where
// they sit under DLPack's own include guard.
#pragma once

#include "base/object.h"
#include "driver/tensor.h"
#include "max_c.h"

namespace maxc {

// Export: the returned struct shares the tensor's memory and keeps it alive until the
// consumer calls its deleter.
DLManagedTensorVersioned* to_dlpack(const Ref<Tensor>& tensor);
DLManagedTensor* to_dlpack_unversioned(const Ref<Tensor>& tensor);

// Import: on success the tensor owns `managed` and calls its deleter once, when the last view
// of the memory goes away. On a throw nothing was taken.
Ref<Tensor> from_dlpack(DLManagedTensorVersioned* managed);
Ref<Tensor> from_dlpack_unversioned(DLManagedTensor* managed);

DLDevice dlpack_device(const Device& device);

}  // namespace maxc
