// Writes GGUF files (version 3 by default, 2 on request): any metadata, and tensors given
// as raw row-major bytes with their dtype or quantization encoding and element dims in our
// order (the writer lists them as GGUF's reversed ne[]). Each tensor's data starts at a
// multiple of the alignment and is padded to the next one, as GGML lays files out.
//
// The alignment is GgufWriteOptions::alignment when set, else general.alignment from the
// metadata, else 32; a general.alignment pair is added when the result is not 32 and the
// metadata lacks one.
//
// Errors: INVALID_ARGUMENT for a version other than 2 or 3, an alignment that is not a power
// of two or disagrees with the metadata's, duplicate keys or tensor names, more than 4 dims,
// a dtype or encoding GGUF cannot hold here, data whose size does not match the dims; I/O
// errors as FileWriter's. A failed write leaves `path` untouched.
// Thread-safety: reentrant; the tensors' bytes must not change during the call.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/quant_encoding.h"
#include "weights/gguf_value.h"

namespace maxc {

struct GgufTensor {
  std::string name;
  DType dtype = DType::kInvalid;  // ignored (uint8) when `encoding` is set
  QuantEncoding encoding = QuantEncoding::kNone;
  std::vector<int64_t> logical_dims;  // element dims, row-major (our order)
  std::span<const uint8_t> data;      // quantized: rows * quant_row_bytes(encoding, k) bytes
};

struct GgufWriteOptions {
  uint32_t version = 3;
  uint32_t alignment = 0;  // 0: general.alignment from the metadata, else 32
};

void write_gguf(const std::string& path, const std::vector<GgufKv>& metadata,
                const std::vector<GgufTensor>& tensors, const GgufWriteOptions& options = {});

}  // namespace maxc
