#include "graph/constant.h"

#include <cstring>
#include <vector>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/packed_int.h"

namespace maxc {

Constant Constant::copy_of(TensorType type, std::span<const uint8_t> bytes) {
  auto owner = std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
  return Constant{std::move(type), std::shared_ptr<const uint8_t>(owner, owner->data()), owner->size()};
}

void Constant::validate(const std::string& what) const {
  type.validate(what);
  if (!type.is_static())
    fail(Code::kInvalidArgument, what, ": a constant needs a static shape, got ", dims_to_string(type.dims));
  std::vector<int64_t> dims;
  for (const Dim& d : type.dims) dims.push_back(d.static_value());
  // type.validate bounds the product already; a size that still fails to fit is refused the same way.
  std::optional<int64_t> count = checked_product(dims);
  std::optional<uint64_t> bytes = count ? checked_byte_size(type.dtype, static_cast<uint64_t>(*count)) : std::nullopt;
  if (!bytes)
    fail(Code::kInvalidArgument, what, ": shape ", dims_to_string(type.dims), " has more than ", kMaxElements,
         " elements");
  const uint64_t want = *bytes;
  if (size != want)
    fail(Code::kInvalidArgument, what, ": ", type.to_string(), " takes ", want, " bytes, got ", size);
  if (size > 0 && !data) fail(Code::kInvalidArgument, what, ": no data for ", size, " bytes");
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool is_one_element(const Constant& c) {
  return c.type.is_static() && c.type.num_elements() == Dim(1) && c.data &&
         c.size == static_cast<size_t>(dtype_size_in_bytes(c.type.dtype));
}

}  // namespace

std::optional<int64_t> Constant::scalar_int() const {
  if (!is_one_element(*this)) return std::nullopt;
  const uint8_t* p = data.get();
  if (dtype_is_packed_int(type.dtype)) return packed_int_get(type.dtype, p, 0);
  switch (type.dtype) {
    case DType::kBool: return p[0] != 0;
    case DType::kInt8: return load<int8_t>(p);
    case DType::kUInt8: return load<uint8_t>(p);
    case DType::kInt16: return load<int16_t>(p);
    case DType::kUInt16: return load<uint16_t>(p);
    case DType::kInt32: return load<int32_t>(p);
    case DType::kUInt32: return load<uint32_t>(p);
    case DType::kInt64: return load<int64_t>(p);
    case DType::kUInt64: {
      uint64_t v = load<uint64_t>(p);
      if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    default: return std::nullopt;
  }
}

std::optional<double> Constant::scalar_float() const {
  if (!is_one_element(*this)) return std::nullopt;
  if (type.dtype == DType::kFloat32) return load<float>(data.get());
  if (type.dtype == DType::kFloat64) return load<double>(data.get());
  return std::nullopt;
}

}  // namespace maxc
