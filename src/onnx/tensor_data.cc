// Where each element type lives in a TensorProto without raw_data (onnx.proto): float in
// float_data; int64 in int64_data; double in double_data; uint32/uint64 in uint64_data; every
// narrower type (bool, 8/16-bit integers, int32, and float16/bfloat16/float8 as bit patterns)
// one per entry of int32_data, but the sub-byte types (int4, uint4, int2, uint2, float4),
// whose entries are their packed bytes, as in raw_data: two or four elements each.
#include "onnx/tensor_data.h"

#include <cstring>
#include <optional>

#include "base/error.h"
#include "driver/device.h"
#include "onnx/dtypes.h"
#include "onnx/external_data.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

void check_count(size_t have, int64_t want, const char* field, const std::string& what) {
  if (have != static_cast<uint64_t>(want))
    fail(Code::kDataLoss, "onnx: ", what, " has ", want, " elements by its dims but ", field, " holds ", have,
         " values");
}

// Narrows each value to T (bit patterns for the float formats: the low bits are the value).
template <typename T, typename Src>
void store_as(const std::vector<Src>& src, uint8_t* dst) {
  for (size_t i = 0; i < src.size(); ++i) {
    T v = static_cast<T>(src[i]);
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
  }
}

void fill_from_int32_data(const TensorProto& tp, DType dtype, int64_t n, uint8_t* dst, const std::string& what) {
  check_count(tp.int32_data.size(), n, "int32_data", what);
  switch (dtype_size_in_bytes(dtype)) {
    case 1:
      if (dtype == DType::kBool) {
        for (size_t i = 0; i < tp.int32_data.size(); ++i) dst[i] = tp.int32_data[i] != 0;
      } else {
        store_as<uint8_t>(tp.int32_data, dst);
      }
      return;
    case 2: store_as<uint16_t>(tp.int32_data, dst); return;
    case 4: store_as<int32_t>(tp.int32_data, dst); return;
  }
  fail(Code::kInternal, "onnx: ", what, ": no int32_data layout for ", dtype_name(dtype));
}

void fill_packed_from_int32_data(const TensorProto& tp, DType dtype, int64_t n, uint8_t* dst,
                                 const std::string& what) {
  const uint64_t bytes = dtype_bytes_for(dtype, static_cast<uint64_t>(n));
  if (tp.int32_data.size() != bytes)
    fail(Code::kDataLoss, "onnx: ", what, " has ", n, " ", dtype_name(dtype), " elements by its dims, packed in ",
         bytes, " bytes, but int32_data holds ", tp.int32_data.size(), " values");
  store_as<uint8_t>(tp.int32_data, dst);
}

void fill_typed(const TensorProto& tp, DType dtype, int64_t n, uint8_t* dst, const std::string& what) {
  switch (dtype) {
    case DType::kFloat32:
      check_count(tp.float_data.size(), n, "float_data", what);
      store_as<float>(tp.float_data, dst);
      return;
    case DType::kFloat64:
      check_count(tp.double_data.size(), n, "double_data", what);
      store_as<double>(tp.double_data, dst);
      return;
    case DType::kInt64:
      check_count(tp.int64_data.size(), n, "int64_data", what);
      store_as<int64_t>(tp.int64_data, dst);
      return;
    case DType::kUInt32:
      check_count(tp.uint64_data.size(), n, "uint64_data", what);
      store_as<uint32_t>(tp.uint64_data, dst);
      return;
    case DType::kUInt64:
      check_count(tp.uint64_data.size(), n, "uint64_data", what);
      store_as<uint64_t>(tp.uint64_data, dst);
      return;
    default:
      if (dtype_is_sub_byte(dtype)) return fill_packed_from_int32_data(tp, dtype, n, dst, what);
      fill_from_int32_data(tp, dtype, n, dst, what);
  }
}

// The entries the typed field holds for n elements: one each, or one per packed byte.
uint64_t typed_entries(DType dtype, int64_t n) {
  return dtype_is_sub_byte(dtype) ? dtype_bytes_for(dtype, static_cast<uint64_t>(n)) : static_cast<uint64_t>(n);
}

// The number of values in the field that holds `dtype` when there is no raw_data.
size_t typed_count(const TensorProto& tp, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return tp.float_data.size();
    case DType::kFloat64: return tp.double_data.size();
    case DType::kInt64: return tp.int64_data.size();
    case DType::kUInt32:
    case DType::kUInt64: return tp.uint64_data.size();
    default: return tp.int32_data.size();
  }
}

// raw_data where it lies in the mapped file (a view, or a deferred copy where protobuf put
// it at an offset misaligned for dtype), or null where it must be copied now.
Ref<Tensor> view_of_mapping(const TensorProto& tp, DType dtype, uint64_t bytes,
                            const std::shared_ptr<const MappedFile>& file) {
  const uint8_t* p = tp.raw_data.data();
  if (!file || bytes == 0 || !file->contains(p, bytes)) return {};
  return mapped_tensor(file, p, dtype, tp.dims);
}

}  // namespace

Ref<Tensor> tensor_from_proto(const TensorProto& tp, const std::string& what, const std::string& base_dir,
                              const std::shared_ptr<const MappedFile>& file) {
  if (tp.string_data_count > 0 || tp.data_type == static_cast<int32_t>(DataType::kString))
    fail(Code::kUnimplemented, "onnx: ", what, " holds strings, which max_c does not support");
  if (tp.has_segment) fail(Code::kUnimplemented, "onnx: ", what, " is segmented, which max_c does not support");
  DType dtype = to_dtype(tp.data_type, what);
  for (int64_t d : tp.dims)
    if (d < 0) fail(Code::kInvalidArgument, "onnx: ", what, " has the negative dim ", d);
  int64_t n;
  try {
    n = checked_num_elements(dtype, tp.dims);
  } catch (const Error& e) {
    fail(Code::kInvalidArgument, "onnx: ", what, ": ", e.what());
  }
  // Counted without wrapping: dims whose bytes pass int64 would otherwise ask for a few bytes
  // of data, pass the size checks below and then be read as the huge tensor they declare.
  std::optional<uint64_t> checked_bytes = checked_byte_size(dtype, n);
  if (!checked_bytes)
    fail(Code::kInvalidArgument, "onnx: ", what, ": dims ", dims_to_string(tp.dims), " of ", dtype_name(dtype),
         " take more than 2^63 bytes");
  const uint64_t bytes = *checked_bytes;
  // Every source is checked against `bytes` before the tensor is allocated, so dims that
  // promise more data than the file has cannot make us allocate it.
  std::optional<ExternalRange> external;
  if (tp.data_location == 1) {
    external = locate_external_data(tp, bytes, what, base_dir);
  } else if (tp.data_location != 0) {
    fail(Code::kInvalidArgument, "onnx: ", what, " has the unknown data_location ", tp.data_location);
  } else if (tp.has_raw_data) {
    if (tp.raw_data.size() != bytes)
      fail(Code::kDataLoss, "onnx: ", what, " needs ", bytes, " bytes of ", dtype_name(dtype), " for dims ",
           dims_to_string(tp.dims), " but raw_data holds ", tp.raw_data.size());
  } else if (n > 0 && typed_count(tp, dtype) != typed_entries(dtype, n)) {
    fail(Code::kDataLoss, "onnx: ", what, " has ", n, " elements by its dims but its typed data field holds ",
         typed_count(tp, dtype), " values (", typed_entries(dtype, n), " expected)");
  }
  if (tp.has_raw_data && !external)
    if (Ref<Tensor> view = view_of_mapping(tp, dtype, bytes, file)) return view;
  Ref<Tensor> t = Tensor::create(Device::cpu(), dtype, tp.dims, /*zero=*/false);
  if (external) read_external_data(*external, t->data(), what);
  else if (tp.has_raw_data && bytes) std::memcpy(t->data(), tp.raw_data.data(), bytes);
  else if (!tp.has_raw_data) fill_typed(tp, dtype, n, t->data(), what);
  return t;
}

}  // namespace maxc::onnx
