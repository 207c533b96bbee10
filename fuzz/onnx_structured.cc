// The ONNX importer on almost-valid models: the structure-aware mutator
// (support/onnx_mutator.h) changes dims, attributes, tensor sizes and data and the graph's
// wiring of valid models (corpus/onnx_structured), so inputs get past the decoder into every
// operator's import.
#include <cstddef>
#include <cstdint>

#include "onnx/importer.h"
#include "support/guard.h"
#include "support/onnx_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return maxfuzz::mutate_onnx(data, size, max_size, seed, LLVMFuzzerMutate);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  maxfuzz::guarded([&] { maxc::onnx::import_onnx_bytes(data, size, ""); });
  return 0;
}
