// A 3-D convolution composed from our conv2d (the op set has no 3-D convolution): the depth
// planes fold into the batch, the filter's kd depth taps stack into kd times the output
// channels, and output plane z sums tap t's result from input plane z*stride + t*dilation.
// It does the work of a direct 3-D convolution over every input plane rather than every
// output plane (D / D_out times that, about 1 at stride 1) and holds kd outputs' worth of
// intermediate planes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "onnx/node_context.h"

namespace maxc::onnx {

struct Conv3dParams {
  int64_t groups = 1;
  // Per axis: depth, height, width.
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad_begin{0, 0, 0}, pad_end{0, 0, 0};
};

// x [N, C, D, H, W] convolved with w [F, C/groups, kd, kh, kw] (+ bias [F]); the depth, the
// filter and its channels must be static.
ValueId conv3d(NodeContext& c, ValueId x, ValueId w, std::optional<ValueId> bias, const Conv3dParams& p);

}  // namespace maxc::onnx
