// What the ai.onnx.ml importers share: the registration of each family, attribute readers
// for the forms these operators store numbers in (floats or a tensor, string enums), integer
// class labels (string labels are refused: max_c has no string tensors), and the score
// transforms (post_transform) as onnxruntime applies them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {

void register_ml_linear_importers(ImportTable& t);    // ops_ml_linear.cc
void register_ml_tree_importers(ImportTable& t);      // ops_ml_tree.cc
void register_ml_svm_importers(ImportTable& t);       // ops_ml_svm.cc
void register_ml_encoder_importers(ImportTable& t);   // ops_ml_encoders.cc

// A tensor attribute's elements as doubles; nullopt when absent.
std::optional<std::vector<double>> tensor_attr(NodeContext& c, std::string_view name);
// The numbers of `name` (floats) or of `name`_as_tensor; nullopt when neither is present.
std::optional<std::vector<double>> floats_or_tensor(NodeContext& c, std::string_view name);
// A floats attribute widened to doubles; empty when absent.
std::vector<double> floats_attr(NodeContext& c, std::string_view name);
// An ints attribute the node must have (INVALID_ARGUMENT naming it otherwise).
std::vector<int64_t> required_ints(NodeContext& c, std::string_view name);

// The class labels of a classifier, from `ints_name` (empty when absent); UNIMPLEMENTED when
// the node has string labels (`strings_name`).
std::vector<int64_t> int_class_labels(NodeContext& c, std::string_view ints_name, std::string_view strings_name);

enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };
PostTransform post_transform(NodeContext& c);

// `scores` [N, C] (float32) under `t` as onnxruntime transforms a row of two or more scores:
// LOGISTIC and PROBIT per element, SOFTMAX and SOFTMAX_ZERO along the row.
ValueId transform_scores(NodeContext& c, ValueId scores, PostTransform t);
// onnxruntime's PROBIT: sqrt(2) * erfinv(2x - 1), erfinv by Winitzki's approximation (a =
// 0.147), which onnxruntime uses instead of the exact inverse.
ValueId probit(NodeContext& c, ValueId x);

// How onnxruntime widens one score s [N, 1] into the two columns of a binary classifier.
enum class SecondClass {
  kComplement,  // [1 - v, v], v = logistic(s) under LOGISTIC, else s (the other transforms
                // leave a single score as it is)
  kNegation,    // [-s, s]
  kLogistic,    // [logistic(-s), logistic(s)]
};
ValueId two_columns(NodeContext& c, ValueId s, SecondClass how, PostTransform t);

// labels[index] for int64 index [N]: the class labels as an int64 [C] constant, gathered.
ValueId pick_labels(NodeContext& c, const std::vector<int64_t>& labels, ValueId index);

// X as float32 [N, F] for the scoring operators: rank 1 is one row, as onnxruntime reads it;
// refuses other ranks and non-numeric types.
ValueId float_rows(NodeContext& c);

}  // namespace maxc::onnx
