// Every op of DESIGN §3's P0 set is registered.
#include <gtest/gtest.h>

#include "graph/op_registry.h"

namespace maxc {
namespace {

TEST(P0OpSet, EveryOpIsRegistered) {
  const char* const kP0[] = {
      // §5.1-5.5, cast, clamp, constants, range (the elementwise and creation families)
      "abs", "acos", "atanh", "cos", "erf", "exp", "floor", "log", "log1p", "negate", "relu", "round", "rsqrt",
      "sigmoid", "silu", "sin", "sqrt", "tanh", "trunc", "gelu", "add", "sub", "mul", "div", "mod", "pow", "max",
      "min", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
      "logical_xor", "logical_not", "is_inf", "is_nan", "where", "cast", "clamp", "constant", "constant_external",
      "range",
      // reductions, normalization, linear algebra
      "sum", "mean", "argmax", "argmin", "cumsum", "top_k", "argsort", "softmax", "logsoftmax", "layer_norm",
      "rms_norm", "matmul", "outer", "band_part",
      // the 17 shape ops
      "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "broadcast_to", "concat", "stack", "split",
      "chunk", "tile", "repeat_interleave", "pad", "rebind", "as_interleaved_complex", "shape_to_tensor",
      // indexing, convolution and pooling
      "slice_tensor", "gather", "gather_nd", "scatter", "scatter_nd", "conv2d", "max_pool2d", "avg_pool2d"};
  for (const char* op : kP0) EXPECT_NE(OpRegistry::global().find(op), nullptr) << op;
}

}  // namespace
}  // namespace maxc
