#include "support/run_model.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "support/guard.h"

namespace maxfuzz {
namespace {

// The inputs are the harness's own, not the model's: it feeds at most this many elements
// per input (a model declaring a larger static input still compiles; it is not executed).
constexpr int64_t kMaxInputElements = int64_t{1} << 16;

// One element of `dtype` holding a small value (indices, sizes and axes stay near the
// edges that matter: negative, zero, a few).
void write_element(uint8_t* p, max_dtype_t dtype, int32_t bytes, ByteSource& values) {
  const int v = static_cast<int>(values.below(8)) - 3;
  if (dtype == MAX_DTYPE_BOOL) {
    *p = v & 1;
  } else if (dtype == MAX_DTYPE_FLOAT32) {
    const float f = static_cast<float>(v) * 0.75f;
    std::memcpy(p, &f, 4);
  } else if (dtype == MAX_DTYPE_FLOAT64) {
    const double d = static_cast<double>(v) * 0.75;
    std::memcpy(p, &d, 8);
  } else if (dtype == MAX_DTYPE_BFLOAT16 || dtype == MAX_DTYPE_FLOAT16) {
    static const uint16_t kBf16[] = {0xc040, 0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000, 0x4040, 0x4080};
    static const uint16_t kF16[] = {0xc200, 0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200, 0x4400};
    const uint16_t h = (dtype == MAX_DTYPE_BFLOAT16 ? kBf16 : kF16)[v + 3];
    std::memcpy(p, &h, 2);
  } else if (max_dtype_is_integral(dtype)) {
    const int64_t i = max_dtype_is_unsigned_integral(dtype) ? v + 3 : v;
    std::memcpy(p, &i, static_cast<size_t>(bytes) < 8 ? static_cast<size_t>(bytes) : 8);  // little-endian
  }
  // float8 / float4 and the packed sub-byte types keep their zero bytes.
}

max_tensor_t* make_input(max_tensor_spec_t* spec, ByteSource& values) {
  max_dtype_t dtype;
  size_t rank;
  if (!ok(max_tensor_spec_dtype(spec, &dtype)) || !ok(max_tensor_spec_rank(spec, &rank))) return nullptr;
  std::vector<int64_t> dims(rank);
  int64_t elements = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (!ok(max_tensor_spec_dim(spec, i, &dims[i], nullptr))) return nullptr;
    if (dims[i] < 0) dims[i] = 2;  // a symbolic dim
    if (dims[i] > kMaxInputElements) return nullptr;
    elements *= dims[i] == 0 ? 1 : dims[i];
    if (elements > kMaxInputElements) return nullptr;
  }
  max_tensor_t* t = nullptr;
  if (!ok(max_tensor_create(nullptr, dtype, dims.data(), static_cast<int32_t>(rank), &t))) return nullptr;
  const int32_t bits = max_dtype_size_in_bits(dtype);
  void* data = nullptr;
  int64_t n = 0;
  if (bits >= 8 && ok(max_tensor_mutable_data(t, &data)) && ok(max_tensor_num_elements(t, &n))) {
    for (int64_t i = 0; i < n; ++i) write_element(static_cast<uint8_t*>(data) + i * (bits / 8), dtype, bits / 8, values);
  }
  return t;
}

}  // namespace

max_context_t* fuzz_context() {
  static max_context_t* context = [] {
    max_context_options_t o;
    max_context_options_init(&o, sizeof(o));
    o.num_threads = 1;
    max_context_t* c = nullptr;
    max_status_t* s = max_context_create(&o, &c);
    if (s) __builtin_trap();  // the harness itself is broken
    return c;
  }();
  return context;
}

void execute_compiled(max_compiled_model_t* compiled, ByteSource& values) {
  max_model_t* model = nullptr;
  if (!ok(max_model_create(compiled, nullptr, nullptr, 0, &model))) return;
  size_t n = 0;
  std::vector<max_tensor_t*> inputs;
  bool complete = ok(max_compiled_model_num_inputs(compiled, &n));
  for (size_t i = 0; complete && i < n; ++i) {
    max_tensor_spec_t* spec = nullptr;
    if (!ok(max_compiled_model_input(compiled, i, &spec))) break;
    max_tensor_t* t = make_input(spec, values);
    max_tensor_spec_release(spec);
    if (!t) {
      if (verbose()) std::fprintf(stderr, "  input %zu: no input made (over the harness's size)\n", i);
      complete = false;
    }
    else inputs.push_back(t);
  }
  if (complete) {
    max_tensor_list_t* outputs = nullptr;
    // A run deadline, the library's own bound on what a file can make a call do: a Loop may
    // ask for 10^17 trips.
    max_run_options_t run_options;
    max_run_options_init(&run_options, sizeof run_options);
    run_options.timeout_us = 1000000;
    if (ok(max_model_execute_with_options(model, inputs.data(), inputs.size(), &run_options, &outputs))) {
      if (verbose()) std::fprintf(stderr, "  executed with %zu inputs\n", inputs.size());
      max_tensor_list_release(outputs);
    }
  }
  for (max_tensor_t* t : inputs) max_tensor_release(t);
  max_model_release(model);
}

}  // namespace maxfuzz
