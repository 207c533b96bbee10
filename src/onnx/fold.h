// Import-time evaluation of elementwise ops on known values, so that shape arithmetic
// (Shape -> Gather -> Mul -> Concat -> Reshape) ends in a shape attribute. Integer elements
// are Dims, so symbols flow through (+, -, *, floor division). Small static float values
// fold too: a Loop's trip count computed in float from known bounds (Range's function
// body: ceil((limit - start) / delta)) must be known to size its scan outputs.
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

// Static float or integer values fold through doubles: at most this many elements.
constexpr int64_t kMaxFoldedNumbers = 1024;

// The result element from the operands' elements.
using NumberFn = std::function<double(const std::vector<double>& args)>;

// Broadcasts static operands and applies `fn` per element in double precision, the result
// converted to `dtype` (a float, an integer or bool: what from_doubles makes).
// For float32 +, -, *, / that is the correctly rounded float32 result, as at run time (a
// double carries more than twice float32's precision, so rounding twice is harmless). A
// float16/bfloat16 result is rounded through float32, as the kernels compute it; float32
// in turn carries at least 2p + 2 bits of either (p = 11, 8), so +, -, *, / still end
// correctly rounded.
// nullopt when an operand is not static or the result is too large.
std::optional<KnownValue> fold_numbers(const std::vector<const KnownValue*>& operands, DType dtype,
                                       const NumberFn& fn);

// numpy's broadcast of static shapes; nullopt when they conflict.
std::optional<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace maxc::onnx
