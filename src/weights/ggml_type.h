// GGML's tensor type ids as GGUF files record them, and what each becomes here: a float or
// integer dtype, or uint8 storage with one of our block-quantized encodings. Ids GGML has
// defined (including ones it since removed) that we cannot represent are known but not
// supported, so a reader can say UNIMPLEMENTED instead of "unknown".
#pragma once

#include <cstdint>
#include <optional>

#include "base/dtype.h"
#include "base/quant_encoding.h"

namespace maxc {

struct GgmlTypeInfo {
  uint32_t id;
  const char* name;        // GGML's name: "Q4_K"
  bool supported;
  DType dtype;             // storage dtype (uint8 when quantized); kInvalid when unsupported
  QuantEncoding encoding;  // kNone unless a supported quantized type
};

// nullptr for an id GGML never defined.
const GgmlTypeInfo* ggml_type_info(uint32_t id);
// The id of a supported type: a dtype with kNone, or uint8 with an encoding.
std::optional<uint32_t> ggml_type_for(DType dtype, QuantEncoding encoding);

}  // namespace maxc
