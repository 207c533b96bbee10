#include "onnx/known_value.h"

#include <cstring>

#include "base/error.h"
#include "base/packed_int.h"
#include "driver/device.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/half.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

template <typename T>
void read_all(const uint8_t* p, int64_t n, std::vector<double>* out) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    out->push_back(static_cast<double>(v));
  }
}

// Each value converted as a cast at run time converts it (kernels/cpu/cast.h): an integer
// keeps the low bits of the truncated value (300.0 -> int8 44), never C++'s undefined
// out-of-range conversion.
template <typename T>
void write_all(uint8_t* p, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    T v = cpu::convert_number<T>(values[i]);
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
  }
}

// float16 and bfloat16 elements through float32 with the kernels' conversions, so a value
// folded here has the bits the same computation has at run time (which rounds to float32
// first, then to the half type).
void read_halves(const uint8_t* p, int64_t n, float (*to_float)(uint16_t), std::vector<double>* out) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    out->push_back(to_float(h));
  }
}

void write_halves(uint8_t* p, const std::vector<double>& values, uint16_t (*from_float)(float)) {
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h = from_float(static_cast<float>(values[i]));
    std::memcpy(p + i * 2, &h, 2);
  }
}

// Reads element i of an integer or bool tensor.
int64_t int_at(const Tensor& t, int64_t i) {
  if (dtype_is_packed_int(t.dtype())) return packed_int_get(t.dtype(), t.data(), i);
  const uint8_t* p = t.data() + i * dtype_size_in_bytes(t.dtype());
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<int64_t>(v);
  };
  switch (t.dtype()) {
    case DType::kBool: return *p != 0;
    case DType::kUInt8: return load(uint8_t{});
    case DType::kInt8: return load(int8_t{});
    case DType::kUInt16: return load(uint16_t{});
    case DType::kInt16: return load(int16_t{});
    case DType::kUInt32: return load(uint32_t{});
    case DType::kInt32: return load(int32_t{});
    case DType::kUInt64: return load(uint64_t{});
    case DType::kInt64: return load(int64_t{});
    default: fail(Code::kInternal, "onnx: int_at on ", dtype_name(t.dtype()));
  }
}

// A packed-int tensor of static values, each wrapped to the dtype's width.
Ref<Tensor> packed_int_tensor(DType dtype, const std::vector<int64_t>& shape, const std::vector<Dim>& values) {
  auto t = Tensor::create(Device::cpu(), dtype, shape, /*zero=*/true);
  for (size_t i = 0; i < values.size(); ++i)
    packed_int_set(dtype, t->data(), static_cast<int64_t>(i), values[i].static_value());
  return t;
}

// An integer or bool tensor of whole-byte elements from static values: each keeps its low
// bytes (little-endian), which is the wrap of an integer cast; bool is v != 0.
Ref<Tensor> byte_int_tensor(DType dtype, const std::vector<int64_t>& shape, const std::vector<Dim>& values) {
  auto t = Tensor::create(Device::cpu(), dtype, shape, /*zero=*/false);
  const size_t width = static_cast<size_t>(dtype_size_in_bytes(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v = values[i].static_value();
    if (dtype == DType::kBool) v = v != 0;
    std::memcpy(t->data() + i * width, &v, width);
  }
  return t;
}

// The tensors below are filled from `count` values: a shape that holds another number of
// elements would be written past (or left partly unset), so it stops here whatever computed it.
void check_value_count(const std::vector<int64_t>& shape, size_t count) {
  if (checked_product(shape) != static_cast<int64_t>(count))
    fail(Code::kInternal, "onnx: a known value of shape ", dims_to_string(shape), " was given ", count, " values");
}

}  // namespace

int64_t KnownValue::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<std::vector<int64_t>> KnownValue::static_ints() const {
  if (!ints) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *ints) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.static_value());
  }
  return out;
}

std::optional<std::vector<double>> KnownValue::doubles() const {
  if (!data) return std::nullopt;
  std::vector<double> out;
  int64_t n = data->num_elements();
  const uint8_t* p = data->data();
  switch (dtype) {
    case DType::kFloat32: read_all<float>(p, n, &out); break;
    case DType::kFloat64: read_all<double>(p, n, &out); break;
    case DType::kFloat16: read_halves(p, n, cpu::f16_to_float, &out); break;
    case DType::kBFloat16: read_halves(p, n, cpu::bf16_to_float, &out); break;
    default:
      if (!dtype_is_integral(dtype) && dtype != DType::kBool) return std::nullopt;
      for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<double>(int_at(*data, i)));
  }
  return out;
}

KnownValue KnownValue::from_tensor(Ref<Tensor> t) {
  KnownValue k;
  k.dtype = t->dtype();
  k.shape = t->dims();
  if ((dtype_is_integral(k.dtype) || k.dtype == DType::kBool) && t->num_elements() <= kMaxKnownInts) {
    std::vector<Dim> v;
    v.reserve(static_cast<size_t>(t->num_elements()));
    for (int64_t i = 0; i < t->num_elements(); ++i) v.emplace_back(int_at(*t, i));
    k.ints = std::move(v);
  }
  k.data = std::move(t);
  return k;
}

KnownValue KnownValue::from_dims(DType dtype, std::vector<int64_t> shape, std::vector<Dim> values) {
  KnownValue k;
  k.dtype = dtype;
  k.shape = std::move(shape);
  check_value_count(k.shape, values.size());
  bool all_static = true;
  for (const Dim& d : values) all_static = all_static && d.is_static();
  if (all_static) {
    k.data = dtype_is_packed_int(dtype) ? packed_int_tensor(dtype, k.shape, values)
                                        : byte_int_tensor(dtype, k.shape, values);
    // The Dims are what the bytes hold (int64 300 as int8 is 44, as a run-time cast makes
    // it), so a fold that reads them computes what the model would.
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) values[i] = Dim(int_at(*k.data, i));
  }
  k.ints = std::move(values);
  return k;
}

KnownValue KnownValue::from_doubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  check_value_count(shape, values.size());
  // Packed elements are set one by one, so a last byte's unused bits must start at 0.
  auto t = Tensor::create(Device::cpu(), dtype, std::move(shape), /*zero=*/dtype_is_sub_byte(dtype));
  uint8_t* p = t->data();
  switch (dtype) {
    case DType::kFloat32: write_all<float>(p, values); break;
    case DType::kFloat64: write_all<double>(p, values); break;
    case DType::kFloat16: write_halves(p, values, cpu::float_to_f16); break;
    case DType::kBFloat16: write_halves(p, values, cpu::float_to_bf16); break;
    case DType::kBool:
      for (size_t i = 0; i < values.size(); ++i) p[i] = values[i] != 0;
      break;
    case DType::kUInt8: write_all<uint8_t>(p, values); break;
    case DType::kInt8: write_all<int8_t>(p, values); break;
    case DType::kUInt16: write_all<uint16_t>(p, values); break;
    case DType::kInt16: write_all<int16_t>(p, values); break;
    case DType::kUInt32: write_all<uint32_t>(p, values); break;
    case DType::kInt32: write_all<int32_t>(p, values); break;
    case DType::kUInt64: write_all<uint64_t>(p, values); break;
    case DType::kInt64: write_all<int64_t>(p, values); break;
    case DType::kUInt2:
    case DType::kInt2:
    case DType::kUInt4:
    case DType::kInt4:
      for (size_t i = 0; i < values.size(); ++i)
        packed_int_set(dtype, p, static_cast<int64_t>(i), static_cast<int64_t>(values[i]));
      break;
    default: fail(Code::kUnimplemented, "onnx: cannot make a ", dtype_name(dtype), " constant at import time");
  }
  return from_tensor(std::move(t));
}

Constant KnownValue::to_constant() const {
  if (!data) fail(Code::kInternal, "onnx: to_constant on a value with symbolic elements");
  std::vector<Dim> dims(shape.begin(), shape.end());
  return Constant::copy_of(TensorType{dtype, dims, DeviceRef::cpu()}, {data->data(), data->byte_size()});
}

}  // namespace maxc::onnx
