#include "driver/tensor.h"

#include <cstring>

#include "base/checked_math.h"
#include "base/error.h"
#include "driver/cuda/cuda_device.h"

namespace maxc {

std::string dims_to_string(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

int64_t checked_num_elements(DType dtype, const std::vector<int64_t>& dims) {
  if (!dtype_is_valid(dtype)) fail(Code::kInvalidArgument, "unknown dtype ", static_cast<int32_t>(dtype));
  if (dims.size() > static_cast<size_t>(kMaxRank))
    fail(Code::kInvalidArgument, "rank ", dims.size(), " exceeds the maximum of ", kMaxRank);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) fail(Code::kInvalidArgument, "dim ", i, " is negative in shape ", dims_to_string(dims));
  // kMaxElements leaves room for the widest dtype's bytes and bits (base/checked_math.h).
  std::optional<int64_t> count = checked_product(dims);
  if (!count)
    fail(Code::kResourceExhausted, "shape ", dims_to_string(dims), " has too many elements (its nonzero dims ",
         "multiply past ", kMaxElements, ")");
  return *count;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  return strides;
}

Tensor::Tensor(Ref<Storage> storage, uint64_t byte_offset, DType dtype, std::vector<int64_t> dims,
               std::vector<int64_t> strides, bool read_only)
    : Object(ObjectKind::kTensor), storage_(std::move(storage)), byte_offset_(byte_offset),
      dtype_(dtype), dims_(std::move(dims)), strides_(std::move(strides)),
      num_elements_(checked_num_elements(dtype_, dims_)), read_only_(read_only) {}

Ref<Tensor> Tensor::create(Ref<Device> device, DType dtype, std::vector<int64_t> dims, bool zero) {
  int64_t n = checked_num_elements(dtype, dims);
  auto storage = Storage::allocate(std::move(device), dtype_bytes_for(dtype, n), zero);
  auto strides = contiguous_strides(dims);
  return Ref<Tensor>::adopt(new Tensor(std::move(storage), 0, dtype, std::move(dims),
                                       std::move(strides), false));
}

namespace {

// The elements a strided view may address lie within sum(|stride| * (dim - 1)) of its first:
// that span must fit the element limit, so that no offset computed from the strides (here,
// in kernels, in copies) can overflow, whatever strides a DLPack producer or caller gave.
void check_stride_span(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  for (int64_t d : dims)
    if (d == 0) return;  // no element is ever addressed
  auto too_far = [&] {
    fail(Code::kInvalidArgument, "strides ", dims_to_string(strides), " of shape ", dims_to_string(dims),
         " reach more than ", kMaxElements, " elements");
  };
  int64_t span = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;  // any stride: it is only ever multiplied by index 0
    if (strides[i] == INT64_MIN) too_far();
    const int64_t step = strides[i] < 0 ? -strides[i] : strides[i];
    std::optional<int64_t> reach = checked_mul(step, dims[i] - 1);
    if (!reach || *reach > kMaxElements - span) too_far();
    span += *reach;
  }
}

}  // namespace

Ref<Tensor> Tensor::view_of(Ref<Storage> storage, uint64_t byte_offset, DType dtype,
                            std::vector<int64_t> dims, std::vector<int64_t> strides,
                            bool read_only) {
  checked_num_elements(dtype, dims);
  if (strides.empty()) strides = contiguous_strides(dims);
  if (strides.size() != dims.size())
    fail(Code::kInvalidArgument, "strides have ", strides.size(), " entries for rank ", dims.size());
  check_stride_span(dims, strides);
  if (byte_offset > static_cast<uint64_t>(INT64_MAX))
    fail(Code::kInvalidArgument, "byte offset ", byte_offset, " does not fit an int64");
  return Ref<Tensor>::adopt(new Tensor(std::move(storage), byte_offset, dtype, std::move(dims),
                                       std::move(strides), read_only));
}

Ref<Tensor> Tensor::borrow(Ref<Device> device, void* data, uint64_t byte_offset, DType dtype,
                           std::vector<int64_t> dims, std::vector<int64_t> strides,
                           bool read_only, std::function<void()> release) {
  auto storage = Storage::borrow(std::move(device), data, std::move(release));
  try {
    return view_of(storage, byte_offset, dtype, std::move(dims), std::move(strides), read_only);
  } catch (...) {
    storage->disarm();
    throw;
  }
}

namespace {

// Like numpy: a dim of extent 1 may have any stride, and an empty tensor is contiguous.
bool strides_are_contiguous(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  for (int64_t d : dims)
    if (d == 0) return true;
  int64_t expected = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

}  // namespace

bool Tensor::is_contiguous() const { return strides_are_contiguous(dims_, strides_); }

void Tensor::check_host(const char* what) const {
  if (!device()->is_host())
    fail(Code::kFailedPrecondition, what, ": the tensor lives on ", device()->name(),
         ", not the host; copy it to the CPU first");
}

void Tensor::check_writable(const char* what) const {
  if (read_only_) fail(Code::kFailedPrecondition, what, ": the tensor is read-only");
}

namespace {

void require_host(const Tensor& t, const char* what) {
  if (!t.device()->is_host())
    fail(Code::kUnimplemented, what, ": tensors on ", t.device()->name(), " are not supported yet");
}

// Sub-byte elements can't be addressed one by one, so they only move as whole bytes.
void require_addressable(const Tensor& t, const char* what) {
  if (dtype_size_in_bits(t.dtype()) % 8 != 0 && !t.is_contiguous())
    fail(Code::kUnimplemented, what, ": strided ", dtype_name(t.dtype()), " tensors are not supported");
}

void copy_elements(uint8_t* dst, const std::vector<int64_t>& dst_strides, const Tensor& src) {
  // Nothing to copy; either pointer may be NULL then (an empty borrowed tensor, to_host's
  // dst), and memcpy must not see a NULL pointer even for 0 bytes.
  if (src.num_elements() == 0) return;
  // Both row-major (size-1 dims may carry any stride): one memcpy. This is also the only
  // path for sub-byte dtypes, whose elements strided_copy cannot address.
  if (src.is_contiguous() && strides_are_contiguous(src.dims(), dst_strides)) {
    std::memcpy(dst, src.data(), src.byte_size());
    return;
  }
  strided_copy(dst, dst_strides, src.data(), src.strides(), src.dims(),
               static_cast<size_t>(dtype_size_in_bytes(src.dtype())));
}

}  // namespace

void strided_copy(uint8_t* dst, const std::vector<int64_t>& dst_strides, const uint8_t* src,
                  const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dims,
                  size_t elem_bytes) {
  const size_t rank = dims.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem_bytes);
    return;
  }
  for (int64_t d : dims)
    if (d == 0) return;
  // An odometer over all but the last dim; the last dim is one tight loop.
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = dims[rank - 1];
  const int64_t ds = dst_strides[rank - 1] * static_cast<int64_t>(elem_bytes);
  const int64_t ss = src_strides[rank - 1] * static_cast<int64_t>(elem_bytes);
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (size_t i = 0; i + 1 < rank; ++i) {
      doff += index[i] * dst_strides[i];
      soff += index[i] * src_strides[i];
    }
    uint8_t* d = dst + doff * static_cast<int64_t>(elem_bytes);
    const uint8_t* s = src + soff * static_cast<int64_t>(elem_bytes);
    for (int64_t j = 0; j < inner; ++j) std::memcpy(d + j * ds, s + j * ss, elem_bytes);
    size_t i = rank - 1;
    while (i-- > 0) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
    if (i == static_cast<size_t>(-1)) return;
  }
}

void Tensor::to_host(void* dst, size_t num_bytes) const {
  require_host(*this, "to_host");
  require_addressable(*this, "to_host");
  if (num_bytes != byte_size())
    fail(Code::kInvalidArgument, "to_host: destination has ", num_bytes, " bytes, the ",
         dtype_name(dtype_), dims_to_string(dims_), " tensor needs ", byte_size());
  copy_elements(static_cast<uint8_t*>(dst), contiguous_strides(dims_), *this);
}

Ref<Tensor> Tensor::copy(const Ref<Device>& device) const {
  auto out = create(device, dtype_, dims_, /*zero=*/false);
  out->copy_from(*this);
  return out;
}

void Tensor::copy_from(const Tensor& src) {
  check_writable("copy_from");
  if (src.dtype_ != dtype_ || src.dims_ != dims_)
    fail(Code::kInvalidArgument, "copy_from: source is ", dtype_name(src.dtype_),
         dims_to_string(src.dims_), ", destination is ", dtype_name(dtype_), dims_to_string(dims_));
  require_addressable(*this, "copy_from");
  require_addressable(src, "copy_from");
  if (device()->is_host() && src.device()->is_host()) {
    copy_elements(data(), strides_, src);
    return;
  }
  copy_with_device(src);
}

// A copy that involves a GPU moves whole contiguous buffers; a strided host source is packed
// on the host first. (Strided device views would need a kernel: not yet.)
void Tensor::copy_with_device(const Tensor& src) {
  if (!is_contiguous() || (!src.device()->is_host() && !src.is_contiguous()))
    fail(Code::kUnimplemented, "copy_from: a strided tensor on ", is_contiguous() ? src.device()->name() : device()->name(),
         " (copy a contiguous tensor)");
  if (!src.is_contiguous()) {
    copy_from(*src.copy(Device::cpu()));
    return;
  }
  const size_t bytes = byte_size();
  if (bytes == 0) return;
  cuda::CudaDevice* to = device()->cuda();
  cuda::CudaDevice* from = src.device()->cuda();
  if (!from) {
    to->copy_to_device(data(), src.data(), bytes);
  } else if (!to) {
    from->copy_to_host(data(), src.data(), bytes);
  } else if (to == from) {
    to->copy_within(data(), src.data(), bytes);
  } else {
    to->copy_from_peer(data(), *from, src.data(), bytes);
  }
}

Ref<Tensor> Tensor::view(DType dtype, const std::vector<int64_t>* dims) const {
  if (!is_contiguous())
    fail(Code::kInvalidArgument, "view: the tensor is not contiguous (strides ",
         dims_to_string(strides_), " for shape ", dims_to_string(dims_), ")");
  if (!dtype_is_valid(dtype)) fail(Code::kInvalidArgument, "view: unknown dtype ", static_cast<int32_t>(dtype));
  std::vector<int64_t> new_dims = dims ? *dims : dims_;
  int64_t n = checked_num_elements(dtype, new_dims);
  if (dtype_bytes_for(dtype, n) != byte_size())
    fail(Code::kInvalidArgument, "view: ", dtype_name(dtype), dims_to_string(new_dims), " has ",
         dtype_bytes_for(dtype, n), " bytes, the tensor ", dtype_name(dtype_), dims_to_string(dims_),
         " has ", byte_size());
  return view_of(storage_, byte_offset_, dtype, std::move(new_dims), {}, read_only_);
}

}  // namespace maxc
