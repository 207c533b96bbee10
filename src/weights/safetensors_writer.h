// Writes a safetensors file that the reference implementation also reads: the JSON header
// padded with spaces so the data section starts 8-byte aligned, then the tensors' bytes
// back to back with no holes, larger element sizes first so that every tensor is aligned
// to its element size. The header lists tensors in the order given.
//
// Errors: INVALID_ARGUMENT for a dtype safetensors cannot hold, a data size that is not
// numel * element size, an empty, duplicate or reserved ("__metadata__") name;
// FAILED_PRECONDITION for a tensor not on the host; I/O errors as FileWriter's. A failed
// write leaves `path` untouched.
// Thread-safety: reentrant; the tensors' bytes must not change during the call.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/object.h"
#include "driver/tensor.h"

namespace maxc {

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;
  std::span<const uint8_t> data;  // row-major, exactly numel * element size bytes
};

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The same from host tensors of any strides (non-contiguous ones are copied first).
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Ref<Tensor>>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace maxc
