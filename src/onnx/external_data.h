// ONNX external data: an initializer's bytes stored in a file beside the model
// (data_location = EXTERNAL, with the keys location, offset and length).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/file_inside.h"
#include "onnx/model_proto.h"

namespace maxc::onnx {

struct ExternalRange {
  std::shared_ptr<const FileInside> file;  // opened and checked; read through its descriptor
  uint64_t offset = 0, bytes = 0;
};

// Where `tp`'s `expected_bytes` bytes are. The location must be a relative path that stays
// inside `base_dir`, symlinks included (base/file_inside.h: checked on the opened file);
// offset + length must lie within the file, and length, when given, must equal
// expected_bytes. Checked before the caller allocates.
ExternalRange locate_external_data(const TensorProto& tp, uint64_t expected_bytes, const std::string& what,
                                   const std::string& base_dir);

// Reads the range into `dst` (range.bytes bytes) from the file opened by locate_external_data.
void read_external_data(const ExternalRange& range, uint8_t* dst, const std::string& what);

}  // namespace maxc::onnx
