#include "capi/capi.h"

namespace maxc::capi {

max_status_t* status_from_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return make_status(e.code(), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return make_status(Code::kResourceExhausted, std::string(function) + ": out of memory");
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

}  // namespace maxc::capi
