// A registry written out as one GGUF file: how a user converts weights (safetensors, tensors
// from memory, tensors they quantized) into the format llama.cpp-style tools read.
#pragma once

#include <string>

#include "weights/registry.h"

namespace maxc {

// Every tensor of `registry`, in its order, as GGUF v3 (quantized ones with their encoding)
// with `general.name` set to `name` when not empty. Errors: write_gguf's (INVALID_ARGUMENT
// for a dtype GGUF cannot hold, such as bool or uint32, or more than 4 dims; I/O errors
// naming the path); FAILED_PRECONDITION for a tensor that is not in host memory. A failed
// write leaves `path` untouched. Thread-safe against concurrent reads of the registry.
void save_gguf(const WeightsRegistry& registry, const std::string& path, const std::string& name);

}  // namespace maxc
