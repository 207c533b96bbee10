#include "capi/capi.h"

#include <new>
#include <stdexcept>

namespace maxc::capi {

max_status_t* status_from_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return make_status(e.code(), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {  // std::bad_array_new_length too
    return make_status(Code::kResourceExhausted, std::string(function) + ": out of memory");
  } catch (const std::length_error& e) {
    // A container asked for more than it can ever hold (a size from a file or an argument):
    // the request is too large, not a bug of the library.
    return make_status(Code::kResourceExhausted, std::string(function) + ": too large: " + e.what());
  } catch (const std::exception& e) {
    MAXC_LOG(kError, function, ": internal error: ", e.what());
    return make_status(Code::kInternal, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return make_status(Code::kInternal, std::string(function) + ": unknown internal error");
  }
}

std::vector<int64_t> dims_arg(const int64_t* dims, int32_t rank, const char* arg) {
  if (rank < 0 || rank > MAX_TENSOR_MAX_RANK)
    fail(Code::kInvalidArgument, "rank ", rank, " is outside [0, ", MAX_TENSOR_MAX_RANK, "]");
  if (rank > 0 && !dims) fail(Code::kInvalidArgument, arg, " is NULL for rank ", rank);
  return std::vector<int64_t>(dims, dims + rank);
}

DType dtype_arg(max_dtype_t dtype, const char* arg) {
  if (!dtype_is_valid(static_cast<DType>(dtype)))
    fail(Code::kInvalidArgument, arg, " ", dtype, " is not a dtype");
  return static_cast<DType>(dtype);
}

Ref<Device> device_arg_or_cpu(max_device_t* device, const char* arg) {
  return device ? share(device, arg) : Device::cpu();
}

std::string string_arg(const char* s, const char* arg) {
  if (!s) fail(Code::kInvalidArgument, arg, " is NULL");
  return s;
}

std::vector<Dim> dim_list_arg(const max_dim_t* dims, int64_t count, const char* arg) {
  if (count < 0 || count > MAX_TENSOR_MAX_RANK)
    fail(Code::kInvalidArgument, arg, " count ", count, " is outside [0, ", MAX_TENSOR_MAX_RANK, "]");
  if (count > 0 && !dims) fail(Code::kInvalidArgument, arg, " is NULL for count ", count);
  std::vector<Dim> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(dims[i].expr ? Dim::parse(dims[i].expr) : Dim(dims[i].size));
  return out;
}

DeviceRef device_ref_arg(max_device_ref_kind_t kind, int32_t id) {
  if (kind != MAX_DEVICE_REF_CPU && kind != MAX_DEVICE_REF_GPU)
    fail(Code::kInvalidArgument, "device kind ", kind, " is not MAX_DEVICE_REF_CPU or MAX_DEVICE_REF_GPU");
  if (id < 0) fail(Code::kInvalidArgument, "device id ", id, " is negative");
  return kind == MAX_DEVICE_REF_CPU ? DeviceRef::cpu(id) : DeviceRef::gpu(id);
}

TensorType tensor_type_arg(max_dtype_t dtype, const max_dim_t* dims, int32_t rank,
                           max_device_ref_kind_t device_kind, int32_t device_id) {
  return TensorType{dtype_arg(dtype, "dtype"), dim_list_arg(dims, rank, "dims"),
                    device_ref_arg(device_kind, device_id)};
}

const max_value_t& value_arg(const max_value_t* value, const char* arg) {
  if (!value) fail(Code::kInvalidArgument, arg, " is NULL");
  if (value->magic != max_value_t::kMagic) fail(Code::kInvalidArgument, arg, " is not a value handle");
  return *value;
}

const TensorType& value_type(const max_value_t* value) {
  const max_value_t& v = value_arg(value, "value");
  return v.owner->graph.type(v.id);
}

Ref<Buffer> text_buffer(const std::string& text) {
  return make_ref<Buffer>(std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace maxc::capi
