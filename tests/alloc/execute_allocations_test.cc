// What a steady-state execute allocates (issue 29): once a model has run a shape, its plan,
// its weights' bindings and its workspace are held, and a call allocates only what it hands
// back. These tests count every C++ allocation of the process (operator new, replaced in
// this executable by bench/alloc_count.cc; tensor bytes come from aligned_alloc and are not
// counted) across calls of max_model_execute on one thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "alloc_count.h"
#include "max_c.h"

namespace {

// What a call of max_model_execute still allocates, all of it handed back or the ABI's own:
//   the vector of the inputs' references (capi's tensor_args);
//   the output list: its handle and its vector;
//   per output tensor: the tensor, its storage, its dims and its strides.
constexpr double kPerCall = 3;
constexpr double kPerOutput = 4;
constexpr int kCalls = 200;

void ok(max_status_t* status) {
  if (!status) return;
  const std::string message = max_status_message(status);
  max_status_release(status);
  FAIL() << message;
}

class Model {
 public:
  // `build` adds the graph's values to `g` and returns its output; `weights` bound by name.
  template <typename Build>
  Model(Build build, const std::vector<std::pair<const char*, max_tensor_t*>>& weights = {}) {
    max_graph_t* g = nullptr;
    ok(max_graph_create("g", &g));
    max_value_t* y = build(g);
    const char* name = "y";
    ok(max_graph_set_outputs(g, &y, &name, 1));
    max_context_options_t options;
    ok(max_context_options_init(&options, sizeof options));
    options.num_threads = 1;
    ok(max_context_create(&options, &context_));
    max_compiled_model_t* compiled = nullptr;
    ok(max_context_compile(context_, g, nullptr, &compiled));
    std::vector<const char*> names;
    std::vector<max_tensor_t*> tensors;
    for (const auto& [n, t] : weights) names.push_back(n), tensors.push_back(t);
    ok(max_model_create(compiled, names.data(), tensors.data(), tensors.size(), &model_));
    max_compiled_model_release(compiled);
    max_graph_release(g);
  }
  ~Model() {
    max_model_release(model_);
    max_context_release(context_);
  }

  // The first element of the output, run on `input`.
  float run(max_tensor_t* input) const {
    max_tensor_list_t* outputs = nullptr;
    ok(max_model_execute(model_, &input, 1, &outputs));
    max_tensor_t* y = nullptr;
    ok(max_tensor_list_get(outputs, 0, &y));
    const void* data = nullptr;
    ok(max_tensor_data(y, &data));
    const float first = *static_cast<const float*>(data);
    max_tensor_release(y);
    max_tensor_list_release(outputs);
    return first;
  }

 private:
  max_context_t* context_ = nullptr;
  max_model_t* model_ = nullptr;
};

// A float32 host tensor borrowing `data`.
max_tensor_t* borrow(std::vector<float>& data, std::vector<int64_t> dims) {
  max_tensor_t* t = nullptr;
  ok(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims.data(), static_cast<int32_t>(dims.size()), nullptr,
                                data.data(), 1, nullptr, nullptr, &t));
  return t;
}

max_value_t* input(max_graph_t* g, std::vector<max_dim_t> dims, const char* name = "x") {
  max_value_t* v = nullptr;
  ok(max_graph_add_input(g, name, MAX_DTYPE_FLOAT32, dims.data(), static_cast<int32_t>(dims.size()),
                         MAX_DEVICE_REF_CPU, 0, &v));
  return v;
}

max_value_t* weight(max_graph_t* g, std::vector<max_dim_t> dims, const char* name) {
  max_value_t* v = nullptr;
  ok(max_graph_add_weight(g, name, MAX_DTYPE_FLOAT32, dims.data(), static_cast<int32_t>(dims.size()),
                          MAX_DEVICE_REF_CPU, 0, &v));
  return v;
}

max_value_t* op(max_graph_t* g, const char* name, std::vector<max_value_t*> inputs) {
  max_value_t* out = nullptr;
  size_t count = 0;
  ok(max_graph_add_op(g, name, 0, inputs.data(), inputs.size(), nullptr, &out, 1, &count));
  return out;
}

// relu, add x, mul x, relu, ...: `ops` of them.
max_value_t* chain(max_graph_t* g, max_value_t* x, int ops) {
  max_value_t* v = x;
  for (int i = 0; i < ops; ++i) v = i % 3 == 0 ? op(g, "relu", {v}) : op(g, i % 3 == 1 ? "add" : "mul", {v, x});
  return v;
}

// Allocations per call of `fn`, after a warm-up that plans, binds and grows the workspace.
template <typename Fn>
double allocations_per_call(Fn fn) {
  for (int i = 0; i < 3; ++i) fn();
  const uint64_t before = bench::allocation_count();
  for (int i = 0; i < kCalls; ++i) fn();
  return static_cast<double>(bench::allocation_count() - before) / kCalls;
}

TEST(ExecuteAllocations, ElementwiseChainAllocatesOnlyItsOutput) {
  const Model model([](max_graph_t* g) { return chain(g, input(g, {{1, nullptr}, {16, nullptr}}), 20); });
  std::vector<float> x(16, 2.f);
  max_tensor_t* in = borrow(x, {1, 16});
  float first = 0;
  EXPECT_LE(allocations_per_call([&] { first = model.run(in); }), kPerCall + kPerOutput);
  EXPECT_GT(first, 0.f);  // the chain ran: relu(2) and so on are positive
  max_tensor_release(in);
}

TEST(ExecuteAllocations, PackedWeightsAreBoundOnce) {
  // Four rows: our gemm on a packed copy of w (engine/lower/linalg.cc).
  std::vector<float> w(16 * 16, 0.5f), b(16, 1.f), x(4 * 16, 1.f);
  max_tensor_t* wt = borrow(w, {16, 16});
  max_tensor_t* bt = borrow(b, {16});
  const Model model(
      [](max_graph_t* g) {
        max_value_t* y = op(g, "matmul", {input(g, {{4, nullptr}, {16, nullptr}}), weight(g, {{16, nullptr}, {16, nullptr}}, "w")});
        return op(g, "relu", {op(g, "add", {y, weight(g, {{16, nullptr}}, "b")})});
      },
      {{"w", wt}, {"b", bt}});
  max_tensor_t* in = borrow(x, {4, 16});
  float first = 0;
  EXPECT_LE(allocations_per_call([&] { first = model.run(in); }), kPerCall + kPerOutput);
  EXPECT_FLOAT_EQ(first, 16 * 0.5f + 1.f);
  max_tensor_release(in);
  max_tensor_release(wt);
  max_tensor_release(bt);
}

// One row runs oneDNN's gemv, whose memory objects and argument list the kernel keeps from
// one call to the next (kernels/cpu/dnnl_call.h): 23 allocations per call when it made them
// per call, 13 now; what is left is oneDNN's own execute context (an argument map per call).
constexpr double kDnnlExecute = 6;

TEST(ExecuteAllocations, OneDnnCallsKeepTheirMemoryObjects) {
  std::vector<float> w(64 * 64, 0.25f), x(64, 1.f);
  max_tensor_t* wt = borrow(w, {64, 64});
  const Model model(
      [](max_graph_t* g) {
        return op(g, "matmul", {input(g, {{1, nullptr}, {64, nullptr}}), weight(g, {{64, nullptr}, {64, nullptr}}, "w")});
      },
      {{"w", wt}});
  max_tensor_t* in = borrow(x, {1, 64});
  float first = 0;
  EXPECT_LE(allocations_per_call([&] { first = model.run(in); }), kPerCall + kPerOutput + kDnnlExecute);
  EXPECT_FLOAT_EQ(first, 64 * 0.25f);
  max_tensor_release(in);
  max_tensor_release(wt);
}

// A symbolic dim adds the symbol's value, one map entry, to a call: it is what the call's
// plan is found by.
TEST(ExecuteAllocations, EachShapeSeenKeepsItsBinding) {
  const Model model([](max_graph_t* g) { return chain(g, input(g, {{0, "batch"}, {16, nullptr}}), 3); });
  std::vector<float> one(16, 1.f), three(3 * 16, 3.f);
  max_tensor_t* small = borrow(one, {1, 16});
  max_tensor_t* large = borrow(three, {3, 16});
  float a = 0, b = 0;
  EXPECT_LE(allocations_per_call([&] { a = model.run(small), b = model.run(large); }),
            2 * (kPerCall + kPerOutput + 1));
  EXPECT_FLOAT_EQ(a, (1.f + 1.f) * 1.f);  // relu(x) + x, times x
  EXPECT_FLOAT_EQ(b, (3.f + 3.f) * 3.f);
  max_tensor_release(small);
  max_tensor_release(large);
}

}  // namespace
