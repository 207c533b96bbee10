// The structure-aware mutator of ONNX models (LLVMFuzzerCustomMutator of the onnx_structured
// and onnx_execute targets). It decodes the model (proto_tree.h, onnx_schema.h), applies a
// few edits that keep the file well-formed protobuf but make the model almost valid, and
// encodes it again:
//   - a scalar set to a boundary value: dims (0, -1, 2^31, 2^59 + 1, INT64_MAX...), attribute
//     ints and floats (NaN, inf, huge), opset versions, dtype codes;
//   - a repeated field duplicated or dropped: a dim (the rank changes), a node, an input, an
//     attribute, an initializer, a graph input or output;
//   - a node's input or output rewired to another name of the model;
//   - tensor data resized or its bytes mutated (initializer size vs dims).
// Input that does not decode is mutated as bytes, so the fuzzer never gets stuck.
#pragma once
#include <cstddef>
#include <cstdint>

namespace maxfuzz {

using ByteMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);

size_t mutate_onnx(uint8_t* data, size_t size, size_t max_size, unsigned int seed, ByteMutator bytes);

}  // namespace maxfuzz
