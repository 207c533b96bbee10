#include "driver/dlpack.h"

#include <memory>
#include <mutex>
#include <unordered_set>

#include "base/error.h"

namespace maxc {
namespace {

struct DLCode {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};

constexpr DLCode kCodes[] = {
    {DType::kBool, kDLBool, 8},
    {DType::kInt2, kDLInt, 2},
    {DType::kInt4, kDLInt, 4},
    {DType::kInt8, kDLInt, 8},
    {DType::kInt16, kDLInt, 16},
    {DType::kInt32, kDLInt, 32},
    {DType::kInt64, kDLInt, 64},
    {DType::kUInt2, kDLUInt, 2},
    {DType::kUInt4, kDLUInt, 4},
    {DType::kUInt8, kDLUInt, 8},
    {DType::kUInt16, kDLUInt, 16},
    {DType::kUInt32, kDLUInt, 32},
    {DType::kUInt64, kDLUInt, 64},
    {DType::kFloat16, kDLFloat, 16},
    {DType::kFloat32, kDLFloat, 32},
    {DType::kFloat64, kDLFloat, 64},
    {DType::kBFloat16, kDLBfloat, 16},
    {DType::kFloat8E8M0Fnu, kDLFloat8_e8m0fnu, 8},
    {DType::kFloat8E4M3Fn, kDLFloat8_e4m3fn, 8},
    {DType::kFloat8E4M3Fnuz, kDLFloat8_e4m3fnuz, 8},
    {DType::kFloat8E5M2, kDLFloat8_e5m2, 8},
    {DType::kFloat8E5M2Fnuz, kDLFloat8_e5m2fnuz, 8},
    {DType::kFloat4E2M1Fn, kDLFloat4_e2m1fn, 4},
};

DLDataType to_dl_dtype(DType dtype) {
  for (const auto& c : kCodes)
    if (c.dtype == dtype) return DLDataType{c.code, c.bits, 1};
  fail(Code::kInvalidArgument, "dtype ", static_cast<int32_t>(dtype), " has no DLPack code");
}

DType from_dl_dtype(DLDataType dt) {
  if (dt.lanes != 1)
    fail(Code::kUnimplemented, "DLPack dtype with ", dt.lanes, " lanes (only 1 is supported)");
  for (const auto& c : kCodes)
    if (c.code == dt.code && c.bits == dt.bits) return c.dtype;
  fail(Code::kInvalidArgument, "DLPack dtype code ", static_cast<int>(dt.code), " with ",
       static_cast<int>(dt.bits), " bits has no max_c dtype");
}

// What an exported struct owns: the tensor reference and the arrays the DLTensor points at.
template <typename Managed>
struct ExportHolder {
  Managed managed{};
  Ref<Tensor> tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

// The structs exported and not yet deleted, by address. A consumer that calls a deleter
// twice gets a no-op the second time instead of a double free: the deleter looks its
// argument up here before it reads anything through it.
class LiveExports {
 public:
  void add(const void* managed) {
    std::lock_guard lock(mu_);
    live_.insert(managed);
  }
  bool remove(const void* managed) {
    std::lock_guard lock(mu_);
    return live_.erase(managed) > 0;
  }

 private:
  std::mutex mu_;
  std::unordered_set<const void*> live_;
};

LiveExports& live_exports() {
  static LiveExports* live = new LiveExports;  // never destroyed: deleters may run during exit
  return *live;
}

template <typename Managed>
void delete_export(Managed* self) {
  if (!self || !live_exports().remove(self)) return;
  delete static_cast<ExportHolder<Managed>*>(self->manager_ctx);
}

template <typename Managed>
Managed* export_tensor(const Ref<Tensor>& tensor) {
  DLDataType dtype = to_dl_dtype(tensor->dtype());  // may throw: before anything is allocated
  auto holder = std::make_unique<ExportHolder<Managed>>();
  holder->tensor = tensor;
  holder->shape = tensor->dims();
  holder->strides = tensor->strides();
  DLTensor& dl = holder->managed.dl_tensor;
  // DLPack wants the base pointer plus a byte offset; our data() already includes the offset.
  dl.data = tensor->storage()->data();
  dl.byte_offset = tensor->byte_offset();
  dl.device = dlpack_device(*tensor->device());
  dl.ndim = tensor->rank();
  dl.dtype = dtype;
  dl.shape = holder->shape.empty() ? nullptr : holder->shape.data();
  dl.strides = holder->strides.empty() ? nullptr : holder->strides.data();
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = &delete_export<Managed>;
  live_exports().add(&holder->managed);  // may throw: the holder is still ours to free
  return &holder.release()->managed;
}

Ref<Device> device_from_dl(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost:
      return Device::cpu();
    case kDLCUDA:
      return Device::get(Device::Kind::kCuda, device.device_id);
    case kDLROCM:
      return Device::get(Device::Kind::kHip, device.device_id);
    default:
      fail(Code::kUnimplemented, "DLPack device type ", static_cast<int>(device.device_type),
           " is not supported");
  }
}

template <typename Managed>
Ref<Tensor> import_tensor(Managed* managed, bool read_only) {
  const DLTensor& dl = managed->dl_tensor;
  if (dl.ndim < 0 || dl.ndim > kMaxRank)
    fail(Code::kInvalidArgument, "DLPack tensor has ndim ", dl.ndim);
  if (dl.ndim > 0 && !dl.shape) fail(Code::kInvalidArgument, "DLPack tensor has a NULL shape");
  DType dtype = from_dl_dtype(dl.dtype);
  std::vector<int64_t> dims(dl.shape, dl.shape + dl.ndim);
  std::vector<int64_t> strides;
  if (dl.strides) strides.assign(dl.strides, dl.strides + dl.ndim);
  int64_t n = checked_num_elements(dtype, dims);
  if (!dl.data && n > 0) fail(Code::kInvalidArgument, "DLPack tensor has NULL data");
  Ref<Device> device = device_from_dl(dl.device);
  return Tensor::borrow(std::move(device), dl.data, dl.byte_offset, dtype, std::move(dims),
                        std::move(strides), read_only, [managed] {
                          if (managed->deleter) managed->deleter(managed);
                        });
}

}  // namespace

DLDevice dlpack_device(const Device& device) {
  switch (device.device_kind()) {
    case Device::Kind::kCuda: return DLDevice{kDLCUDA, device.id()};
    case Device::Kind::kHip: return DLDevice{kDLROCM, device.id()};
    case Device::Kind::kCpu: break;
  }
  return DLDevice{kDLCPU, 0};
}

DLManagedTensorVersioned* to_dlpack(const Ref<Tensor>& tensor) {
  auto* managed = export_tensor<DLManagedTensorVersioned>(tensor);
  managed->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  managed->flags = tensor->read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  return managed;
}

DLManagedTensor* to_dlpack_unversioned(const Ref<Tensor>& tensor) {
  return export_tensor<DLManagedTensor>(tensor);
}

Ref<Tensor> from_dlpack(DLManagedTensorVersioned* managed) {
  if (managed->version.major != DLPACK_MAJOR_VERSION)
    fail(Code::kInvalidArgument, "DLPack major version ", managed->version.major,
         " is not supported (expected ", DLPACK_MAJOR_VERSION, ")");
  if (managed->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED)
    fail(Code::kUnimplemented, "DLPack tensors with padded sub-byte elements are not supported");
  return import_tensor(managed, (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}

Ref<Tensor> from_dlpack_unversioned(DLManagedTensor* managed) {
  return import_tensor(managed, /*read_only=*/false);
}

}  // namespace maxc
