// The data of a TensorProto (an initializer, a Constant's value, a backend test's .pb) as a
// host Tensor: raw_data, the typed repeated fields, or an external file.
#pragma once

#include <memory>
#include <string>

#include "base/object.h"
#include "driver/tensor.h"
#include "onnx/model_proto.h"
#include "weights/mapped_file.h"

namespace maxc::onnx {

// `what` names the tensor in messages ("initializer 'w'"). `base_dir` is the directory of the
// model file, against which external data locations resolve; empty refuses external data.
// Errors: UNIMPLEMENTED (string or complex data, segments), DATA_LOSS (a size that does not
// match the dims, an external range past its file's end), INVALID_ARGUMENT (a location that
// leaves base_dir), NOT_FOUND (a missing external file).
//
// `file`, when given, is the mapped model file the proto was decoded from: raw_data inside it
// at an address aligned for the dtype becomes a read-only view of the mapping (no copy; the
// view keeps the mapping alive), anything else is copied.
Ref<Tensor> tensor_from_proto(const TensorProto& tp, const std::string& what, const std::string& base_dir,
                              const std::shared_ptr<const MappedFile>& file = nullptr);

}  // namespace maxc::onnx
