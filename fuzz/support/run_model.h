// Compile + execute for the fuzz targets that get that far (onnx_execute, graph_builder):
// one CPU context with one thread (reproducible, and one fuzzer process per core), inputs
// made from each input spec with small values drawn from the fuzzer's bytes.
#pragma once
#include "max_c.h"
#include "support/byte_source.h"

namespace maxfuzz {

// The process's context: the CPU, one thread.
max_context_t* fuzz_context();

// Binds the bundled weights, makes an input per spec (symbolic dims: 2) and executes once.
// Every error is a status and ends the run; what it returns does not matter.
void execute_compiled(max_compiled_model_t* compiled, ByteSource& values);

}  // namespace maxfuzz
