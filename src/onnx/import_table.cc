// The operator table: op_type -> import function, filled once by each family.
#include "onnx/node_context.h"

namespace maxc::onnx {

const ImportTable& import_table() {
  static const ImportTable table = [] {
    ImportTable t;
    register_elementwise_importers(t);
    register_math_importers(t);
    register_nn_importers(t);
    register_reduce_importers(t);
    register_shape_importers(t);
    register_indexing_importers(t);
    register_constant_importers(t);
    register_attention_importers(t);
    register_recurrent_importers(t);
    register_conv_transpose_importers(t);
    register_signal_importers(t);
    register_loss_importers(t);
    register_einsum_importers(t);
    register_resize_importers(t);
    register_quantize_importers(t);
    register_bitwise_importers(t);
    register_normalization_importers(t);
    register_sequence_mixer_importers(t);
    register_scan_scatter_importers(t);
    register_sampling_importers(t);
    register_training_importers(t);
    register_ml_importers(t);
    register_determinant_importers(t);
    register_deform_conv_importers(t);
    register_if_importers(t);
    register_loop_importers(t);
    register_scan_importers(t);
    register_data_dependent_importers(t);
    register_unique_importers(t);
    register_nms_importers(t);
    register_tfidf_importers(t);
    register_optional_importers(t);
    return t;
  }();
  return table;
}

}  // namespace maxc::onnx
