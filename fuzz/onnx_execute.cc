// Compile and execute what imports: almost-valid ONNX models (the structure-aware mutator of
// onnx_structured) go through max_context_compile_file, max_model_create and one
// max_model_execute with small inputs, so the compiler's passes and the CPU kernels meet
// what the importer accepts. The inputs' values come from a hash of the model, so a crash
// replays from the file alone.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "support/byte_source.h"
#include "support/guard.h"
#include "support/onnx_mutator.h"
#include "support/run_model.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return maxfuzz::mutate_onnx(data, size, max_size, seed, LLVMFuzzerMutate);
}

namespace {

// The model file compile_file reads: one per process, rewritten for each input.
const std::string& model_path() {
  static const std::string path = [] {
    const char* dir = getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/max_c_fuzz_onnx_execute." + std::to_string(getpid()) +
           ".onnx";
  }();
  return path;
}

bool write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool written = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && written;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!write_file(model_path(), data, size)) __builtin_trap();  // the harness cannot work
  max_compiled_model_t* compiled = nullptr;
  if (maxfuzz::ok(max_context_compile_file(maxfuzz::fuzz_context(), model_path().c_str(), nullptr, &compiled))) {
    maxfuzz::ByteSource values(data, size);
    maxfuzz::execute_compiled(compiled, values);
    max_compiled_model_release(compiled);
  }
  unlink(model_path().c_str());
  return 0;
}
