// Import-time evaluation of integer elementwise ops on known values, so that shape
// arithmetic (Shape -> Gather -> Mul -> Concat -> Reshape) ends in a shape attribute. The
// elements are Dims, so symbols flow through (+, -, *, floor division).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "onnx/known_value.h"

namespace maxc::onnx {

// nullopt when an element has no Dim result (a symbolic comparison, division by a symbol).
using DimFn = std::function<std::optional<Dim>(const std::vector<Dim>& args)>;

// Broadcasts the operands (numpy rules) and applies `fn` per element; nullopt unless every
// operand has integer elements and every result is defined. `dtype` is the result's.
std::optional<KnownValue> fold_elementwise(const std::vector<const KnownValue*>& operands, DType dtype,
                                           const DimFn& fn);

// numpy's broadcast of static shapes; nullopt when they conflict.
std::optional<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace maxc::onnx
