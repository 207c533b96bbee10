#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

MAXC_DEFINE_REFCOUNT(tensor_list)

max_status_t* max_tensor_list_create(max_tensor_list_t** out_list) {
  return MAXC_GUARD({
    auto& out = out_param(out_list, "out_list");
    out = to_handle<max_tensor_list_t>(make_ref<TensorList>());
  });
}

max_status_t* max_tensor_list_append(max_tensor_list_t* list, max_tensor_t* tensor) {
  return MAXC_GUARD({
    auto& items = deref(list, "list").items;
    items.push_back(share(tensor, "tensor"));
  });
}

max_status_t* max_tensor_list_size(const max_tensor_list_t* list, size_t* out_size) {
  return MAXC_GUARD({
    auto& out = out_param(out_size, "out_size");
    out = deref(list, "list").items.size();
  });
}

max_status_t* max_tensor_list_get(const max_tensor_list_t* list, size_t index,
                                  max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    const auto& items = deref(list, "list").items;
    if (index >= items.size())
      fail(Code::kOutOfRange, "index ", index, " is past the list's ", items.size(), " tensor(s)");
    out = to_handle<max_tensor_t>(items[index]);
  });
}

}  // extern "C"
