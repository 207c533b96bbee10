// Operators of ai.onnx.ml that our graph ops express, and the registration of every family
// (ml_common.h):
//   Binarizer: y = x > threshold ? 1 : 0, in x's type (integers compare in float64, as the
//     threshold is a float);
//   ArrayFeatureExtractor: x[..., indices] along the last axis, the indices flattened; a
//     rank-1 x gives [1, k], as ONNX's reference (and onnxruntime) do. Negative indices count
//     from the end where the last axis is static;
//   ZipMap: refused (UNIMPLEMENTED): its output is a sequence of maps.
#include <vector>

#include "onnx/ml_common.h"

namespace maxc::onnx {
namespace {

void import_binarizer(NodeContext& c) {
  const DType dt = c.dtype(0);
  if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kInt32 && dt != DType::kInt64)
    c.unsupported("Binarizer of ", dtype_name(dt), " (float32/64 and int32/64 only)");
  const double threshold = c.attr_float("threshold", 0);
  const DType cmp = dtype_is_float(dt) ? dt : DType::kFloat64;
  const ValueId above = c.op("greater", {c.cast(c.input(0), cmp), c.scalar(cmp, threshold)});
  c.set_output(0, c.cast(above, dt));
}

void import_array_feature_extractor(NodeContext& c) {
  const DType it = c.dtype(1);
  if (it != DType::kInt64 && it != DType::kInt32) c.invalid("indices must be int64, got ", dtype_name(it));
  const std::vector<Dim> in = c.type(0).dims;
  if (in.empty()) c.invalid("X must have rank >= 1");
  ValueId idx = c.cast(c.input(1), DType::kInt64);
  const Dim k = dims_product(c.type(1).dims);
  if (c.rank(1) != 1) idx = c.reshape(idx, {k});
  const Dim& last = in.back();
  if (last.is_static()) {
    const ValueId negative = c.op("less", {idx, c.scalar(DType::kInt64, 0)});
    idx = c.op("where", {negative, c.op("add", {idx, c.scalar(DType::kInt64, static_cast<double>(last.static_value()))}), idx});
  }
  const int64_t axis = static_cast<int64_t>(in.size()) - 1;
  ValueId y = c.op("gather", {c.input(0), idx}, {{"axis", axis}});
  if (in.size() == 1) y = c.reshape(y, {Dim(1), k});
  c.set_output(0, y);
}

// ZipMap's output is a sequence of maps, a type max_c has no values of.
void import_zip_map(NodeContext& c) {
  c.unsupported("ZipMap outputs a sequence of maps, which max_c cannot express; convert the classifier without it "
                "(skl2onnx: options={'zipmap': False}) to get the probabilities as a tensor");
}

}  // namespace

void register_ml_importers(ImportTable& t) {
  t["ai.onnx.ml.Binarizer"] = import_binarizer;
  t["ai.onnx.ml.ArrayFeatureExtractor"] = import_array_feature_extractor;
  t["ai.onnx.ml.ZipMap"] = import_zip_map;
  register_ml_linear_importers(t);
  register_ml_tree_importers(t);
  register_ml_svm_importers(t);
  register_ml_encoder_importers(t);
}

}  // namespace maxc::onnx
