// The translation kit of the ABI layer: handles <-> objects, argument checks, and the
// guard that turns every exception into a status. capi/ files use only this and the layer
// below; they hold no logic of their own (DESIGN §1).
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "base/buffer.h"
#include "base/error.h"
#include "base/log.h"
#include "capi/graph_handle.h"
#include "capi/status.h"
#include "driver/device.h"
#include "driver/tensor.h"
#include "driver/tensor_list.h"
#include "engine/compiled_model.h"
#include "engine/context.h"
#include "engine/model.h"
#include "engine/tensor_spec.h"
#include "max_c.h"
#include "weights/registry.h"

namespace maxc::capi {

// ---- which object each opaque handle is ----

// `printable` carries its article: "an attrs handle".
template <typename Handle> struct HandleOf;
#define MAXC_HANDLE(handle, object, object_kind, printable)           \
  template <> struct HandleOf<handle> {                               \
    using type = object;                                              \
    static constexpr ObjectKind kind = ObjectKind::object_kind;       \
    static constexpr const char* name = printable;                    \
  };
MAXC_HANDLE(max_device_t, Device, kDevice, "a device")
MAXC_HANDLE(max_context_t, Context, kContext, "a context")
MAXC_HANDLE(max_tensor_t, Tensor, kTensor, "a tensor")
MAXC_HANDLE(max_tensor_list_t, TensorList, kTensorList, "a tensor list")
MAXC_HANDLE(max_buffer_t, Buffer, kBuffer, "a buffer")
MAXC_HANDLE(max_graph_t, GraphObject, kGraph, "a graph")
MAXC_HANDLE(max_attrs_t, AttrsObject, kAttrs, "an attrs")
MAXC_HANDLE(max_compiled_model_t, CompiledModel, kCompiledModel, "a compiled model")
MAXC_HANDLE(max_model_t, Model, kModel, "a model")
MAXC_HANDLE(max_tensor_spec_t, TensorSpec, kTensorSpec, "a tensor spec")
MAXC_HANDLE(max_weights_t, WeightsRegistry, kWeights, "a weights")
#undef MAXC_HANDLE

// The object behind a handle argument; INVALID_ARGUMENT when NULL or of another kind.
template <typename Handle>
auto& deref(Handle* handle, const char* arg) {
  using H = std::remove_const_t<Handle>;
  using T = typename HandleOf<H>::type;
  if (!handle) fail(Code::kInvalidArgument, arg, " is NULL");
  auto* object = reinterpret_cast<const Object*>(handle);
  if (object->kind() != HandleOf<H>::kind)
    fail(Code::kInvalidArgument, arg, " is not ", HandleOf<H>::name, " handle");
  using Result = std::conditional_t<std::is_const_v<Handle>, const T, T>;
  return *reinterpret_cast<Result*>(const_cast<Object*>(object));
}

// A new reference to an object, as the handle the caller owns.
template <typename Handle, typename T>
Handle* to_handle(Ref<T> ref) {
  return reinterpret_cast<Handle*>(static_cast<typename HandleOf<Handle>::type*>(ref.detach()));
}

template <typename Handle>
Ref<typename HandleOf<Handle>::type> share(Handle* handle, const char* arg) {
  return Ref<typename HandleOf<Handle>::type>::share(&deref(handle, arg));
}

template <typename Handle>
void retain_handle(Handle* handle) {
  if (handle) reinterpret_cast<const Object*>(handle)->retain();
}
template <typename Handle>
void release_handle(Handle* handle) {
  if (handle) reinterpret_cast<const Object*>(handle)->release();
}

// ---- out parameters: checked, cleared on entry so a failure leaves them NULL/zero ----

template <typename T>
T& out_param(T* out, const char* arg) {
  if (!out) fail(Code::kInvalidArgument, arg, " is NULL");
  *out = T{};
  return *out;
}

// ---- arrays ----

std::vector<int64_t> dims_arg(const int64_t* dims, int32_t rank, const char* arg);
DType dtype_arg(max_dtype_t dtype, const char* arg);
std::string string_arg(const char* s, const char* arg);
// Graph-side arguments: dims as size-or-expression, device refs, whole tensor types.
std::vector<Dim> dim_list_arg(const max_dim_t* dims, int64_t count, const char* arg);
DeviceRef device_ref_arg(max_device_ref_kind_t kind, int32_t id);
TensorType tensor_type_arg(max_dtype_t dtype, const max_dim_t* dims, int32_t rank,
                           max_device_ref_kind_t device_kind, int32_t device_id);
// A value handle, checked; its type.
const max_value_t& value_arg(const max_value_t* value, const char* arg);
const TensorType& value_type(const max_value_t* value);
// Text (printed graphs) as a buffer.
Ref<Buffer> text_buffer(const std::string& text);
Ref<Device> device_arg_or_cpu(max_device_t* device, const char* arg);

// ---- options structs: the library reads and writes only the fields both sides know ----
// struct_size is the caller's word for how large its struct is, and nothing checks it: so the
// library touches only the first min(struct_size, sizeof(Options)) bytes. An older (smaller)
// struct gets defaults for the fields it lacks; the tail of a newer (larger) one, fields this
// library does not know, is never read or written (include/max_c.h, "Options structs").

template <typename Options>
Options read_options(const Options* user, const Options& defaults, const char* arg) {
  Options result = defaults;
  if (!user) return result;
  if (user->struct_size < sizeof(size_t))
    fail(Code::kInvalidArgument, arg, "->struct_size is ", user->struct_size,
         "; fill the struct with its _init function");
  std::memcpy(&result, user, std::min(user->struct_size, sizeof(Options)));
  result.struct_size = sizeof(Options);
  return result;
}

// Fills the first min(struct_size, sizeof(Options)) bytes of `out` with the defaults' and
// records the caller's struct_size.
template <typename Options>
void init_options(Options* out, size_t struct_size, const Options& defaults, const char* arg) {
  if (!out) fail(Code::kInvalidArgument, arg, " is NULL");
  if (struct_size < sizeof(size_t))
    fail(Code::kInvalidArgument, "struct_size ", struct_size, " is too small for ", arg);
  std::memcpy(out, &defaults, std::min(struct_size, sizeof(Options)));
  out->struct_size = struct_size;
}

// ---- the guard around every fallible entry point ----

max_status_t* status_from_current_exception(const char* function) noexcept;

template <typename Body>
max_status_t* guard(const char* function, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return status_from_current_exception(function);
  }
}

}  // namespace maxc::capi

// Every fallible ABI function is `{ return MAXC_GUARD({ ... }); }`: the body may throw.
#define MAXC_GUARD(...) ::maxc::capi::guard(__func__, [&] __VA_ARGS__)

// retain/release pair of a handle type.
#define MAXC_DEFINE_REFCOUNT(object)                                                      \
  void max_##object##_retain(max_##object##_t* h) { ::maxc::capi::retain_handle(h); }    \
  void max_##object##_release(max_##object##_t* h) { ::maxc::capi::release_handle(h); }
