// The ONNX importer on raw bytes: the protobuf decoder and everything it hands the importer.
// External data is refused (no base directory), so no input reaches the file system.
#include <cstddef>
#include <cstdint>

#include "onnx/importer.h"
#include "support/guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  maxfuzz::guarded([&] { maxc::onnx::import_onnx_bytes(data, size, ""); });
  return 0;
}
