#include "capi/capi.h"

using namespace maxc;
using namespace maxc::capi;

extern "C" {

MAXC_DEFINE_REFCOUNT(tensor)

max_status_t* max_tensor_create(max_device_t* device, max_dtype_t dtype, const int64_t* dims,
                                int32_t rank, max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    out = to_handle<max_tensor_t>(Tensor::create(device_arg_or_cpu(device, "device"),
                                                 dtype_arg(dtype, "dtype"),
                                                 dims_arg(dims, rank, "dims")));
  });
}

max_status_t* max_tensor_create_from_host(max_device_t* device, max_dtype_t dtype,
                                          const int64_t* dims, int32_t rank, const void* data,
                                          size_t num_bytes, max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    auto tensor = Tensor::create(device_arg_or_cpu(device, "device"), dtype_arg(dtype, "dtype"),
                                 dims_arg(dims, rank, "dims"), /*zero=*/false);
    if (!data && num_bytes > 0) fail(Code::kInvalidArgument, "data is NULL");
    auto source = Tensor::borrow(Device::cpu(), const_cast<void*>(data), 0, tensor->dtype(),
                                 tensor->dims(), {}, /*read_only=*/true, nullptr);
    if (num_bytes != source->byte_size())
      fail(Code::kInvalidArgument, "data has ", num_bytes, " bytes, a ",
           dtype_name(tensor->dtype()), dims_to_string(tensor->dims()), " tensor needs ",
           source->byte_size());
    tensor->copy_from(*source);
    out = to_handle<max_tensor_t>(std::move(tensor));
  });
}

max_status_t* max_tensor_create_borrowed(max_dtype_t dtype, const int64_t* dims, int32_t rank,
                                         const int64_t* strides, void* data, int32_t read_only,
                                         max_release_fn release, void* user_data,
                                         max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    auto shape = dims_arg(dims, rank, "dims");
    std::vector<int64_t> stride_list;
    if (strides) stride_list.assign(strides, strides + rank);
    int64_t n = checked_num_elements(dtype_arg(dtype, "dtype"), shape);
    if (!data && n > 0) fail(Code::kInvalidArgument, "data is NULL");
    std::function<void()> on_release;
    if (release) on_release = [release, user_data] { release(user_data); };
    out = to_handle<max_tensor_t>(Tensor::borrow(Device::cpu(), data, 0, static_cast<DType>(dtype),
                                                 std::move(shape), std::move(stride_list),
                                                 read_only != 0, std::move(on_release)));
  });
}

max_status_t* max_tensor_dtype(const max_tensor_t* tensor, max_dtype_t* out_dtype) {
  return MAXC_GUARD({
    auto& out = out_param(out_dtype, "out_dtype");
    out = static_cast<max_dtype_t>(deref(tensor, "tensor").dtype());
  });
}

max_status_t* max_tensor_rank(const max_tensor_t* tensor, int32_t* out_rank) {
  return MAXC_GUARD({
    auto& out = out_param(out_rank, "out_rank");
    out = deref(tensor, "tensor").rank();
  });
}

max_status_t* max_tensor_dims(const max_tensor_t* tensor, const int64_t** out_dims) {
  return MAXC_GUARD({
    auto& out = out_param(out_dims, "out_dims");
    const auto& dims = deref(tensor, "tensor").dims();
    out = dims.empty() ? nullptr : dims.data();
  });
}

max_status_t* max_tensor_strides(const max_tensor_t* tensor, const int64_t** out_strides) {
  return MAXC_GUARD({
    auto& out = out_param(out_strides, "out_strides");
    const auto& strides = deref(tensor, "tensor").strides();
    out = strides.empty() ? nullptr : strides.data();
  });
}

max_status_t* max_tensor_num_elements(const max_tensor_t* tensor, int64_t* out_num_elements) {
  return MAXC_GUARD({
    auto& out = out_param(out_num_elements, "out_num_elements");
    out = deref(tensor, "tensor").num_elements();
  });
}

max_status_t* max_tensor_byte_size(const max_tensor_t* tensor, size_t* out_bytes) {
  return MAXC_GUARD({
    auto& out = out_param(out_bytes, "out_bytes");
    out = deref(tensor, "tensor").byte_size();
  });
}

max_status_t* max_tensor_device(const max_tensor_t* tensor, max_device_t** out_device) {
  return MAXC_GUARD({
    auto& out = out_param(out_device, "out_device");
    out = to_handle<max_device_t>(deref(tensor, "tensor").device());
  });
}

max_status_t* max_tensor_is_contiguous(const max_tensor_t* tensor, int32_t* out_is_contiguous) {
  return MAXC_GUARD({
    auto& out = out_param(out_is_contiguous, "out_is_contiguous");
    out = deref(tensor, "tensor").is_contiguous();
  });
}

max_status_t* max_tensor_is_read_only(const max_tensor_t* tensor, int32_t* out_is_read_only) {
  return MAXC_GUARD({
    auto& out = out_param(out_is_read_only, "out_is_read_only");
    out = deref(tensor, "tensor").read_only();
  });
}

max_status_t* max_tensor_data(const max_tensor_t* tensor, const void** out_data) {
  return MAXC_GUARD({
    auto& out = out_param(out_data, "out_data");
    const Tensor& t = deref(tensor, "tensor");
    t.check_host("data");
    out = t.data();
  });
}

max_status_t* max_tensor_mutable_data(max_tensor_t* tensor, void** out_data) {
  return MAXC_GUARD({
    auto& out = out_param(out_data, "out_data");
    Tensor& t = deref(tensor, "tensor");
    t.check_writable("mutable_data");
    t.check_host("mutable_data");
    out = t.data();
  });
}

max_status_t* max_tensor_to_host(const max_tensor_t* tensor, void* dst, size_t num_bytes) {
  return MAXC_GUARD({
    if (!dst && num_bytes > 0) fail(Code::kInvalidArgument, "dst is NULL");
    deref(tensor, "tensor").to_host(dst, num_bytes);
  });
}

max_status_t* max_tensor_copy(const max_tensor_t* tensor, max_device_t* device,
                              max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    const Tensor& t = deref(tensor, "tensor");
    out = to_handle<max_tensor_t>(t.copy(device ? share(device, "device") : t.device()));
  });
}

max_status_t* max_tensor_copy_from(max_tensor_t* dst, const max_tensor_t* src) {
  return MAXC_GUARD({ deref(dst, "dst").copy_from(deref(src, "src")); });
}

max_status_t* max_tensor_view(const max_tensor_t* tensor, max_dtype_t dtype, const int64_t* dims,
                              int32_t rank, max_tensor_t** out_tensor) {
  return MAXC_GUARD({
    auto& out = out_param(out_tensor, "out_tensor");
    const Tensor& t = deref(tensor, "tensor");
    DType d = dtype_arg(dtype, "dtype");
    if (rank == -1 && !dims) {
      out = to_handle<max_tensor_t>(t.view(d, nullptr));
    } else {
      auto shape = dims_arg(dims, rank, "dims");
      out = to_handle<max_tensor_t>(t.view(d, &shape));
    }
  });
}

}  // extern "C"
