// A tensor whose value the importer knows while importing: an initializer, a Constant, or
// shape arithmetic folded from them (Shape -> Gather -> Concat -> Reshape). Our ops take
// shapes, axes and slice bounds as attributes, so ONNX operands that carry them must be
// known here. Integer elements are Dims, so a shape may hold symbols ("batch").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/dtype.h"
#include "base/object.h"
#include "driver/tensor.h"
#include "graph/constant.h"
#include "graph/dim.h"

namespace maxc::onnx {

// Integer tensors up to this many elements get Dim elements (shape arithmetic); larger ones
// (an index table) are kept only as bytes.
constexpr int64_t kMaxKnownInts = 1 << 14;

struct KnownValue {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  // Integer and bool dtypes with at most kMaxKnownInts elements: one Dim per element.
  std::optional<std::vector<Dim>> ints;
  // The bytes, when every element is static.
  Ref<Tensor> data;

  int64_t num_elements() const;
  bool is_static() const { return static_cast<bool>(data); }
  // The elements as static int64s; nullopt when a Dim is symbolic or there are none.
  std::optional<std::vector<int64_t>> static_ints() const;
  // The elements as doubles (any static numeric dtype); nullopt otherwise.
  std::optional<std::vector<double>> doubles() const;

  static KnownValue from_tensor(Ref<Tensor> t);
  // An integer/bool tensor from Dims; bytes are filled when every Dim is static, and then each
  // Dim becomes the value its element holds, wrapped to the dtype's width (a symbol is kept).
  static KnownValue from_dims(DType dtype, std::vector<int64_t> shape, std::vector<Dim> values);
  // A float or integer tensor from doubles, converted to `dtype` (float32/64, float16 and
  // bfloat16 (rounded through float32, as a cast at run time), integers and bool).
  static KnownValue from_doubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);

  Constant to_constant() const;  // requires is_static()
};

}  // namespace maxc::onnx
