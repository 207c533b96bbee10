#include "quant_matvec.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mem_bandwidth.h"
#include "timing.h"

namespace bench {
namespace {

constexpr int64_t kDim = 4096;               // 4096 x 4096, m = 1
constexpr size_t kColdBytes = 160u << 20;    // weights per call for the cold figure: 5x the L3

struct Encoding {
  const char* name;
  int64_t elements, bytes;  // per block
  int32_t scale_fields;     // fp16 scales at the start of each block (Q6_K: none there)
};

constexpr Encoding kEncodings[] = {
    {"q4_0", 32, 18, 1}, {"q4_k", 256, 144, 2}, {"q5_k", 256, 176, 2}, {"q6_k", 256, 210, 0}, {"q8_0", 32, 34, 1}};

// Random levels and scales with small half-precision super-scales (1/256): any byte pattern is
// a valid block, and the products stay finite through a chain of layers.
std::vector<uint8_t> random_blocks(const Encoding& e, int64_t rows, uint64_t seed) {
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * kDim / e.elements * e.bytes));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint8_t& b : bytes) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    b = static_cast<uint8_t>(s >> 24);
  }
  const int64_t d_offset = e.scale_fields ? 0 : e.bytes - 2;
  const int32_t fields = e.scale_fields ? e.scale_fields : 1;
  for (size_t block = 0; block < bytes.size(); block += e.bytes)
    for (int32_t f = 0; f < fields; ++f) {
      bytes[block + d_offset + 2 * f] = 0x00;
      bytes[block + d_offset + 2 * f + 1] = 0x1C;
    }
  return bytes;
}

struct Owned {
  max_model_t* model = nullptr;
  ~Owned() { max_model_release(model); }
};

max_tensor_t* borrow_bytes(std::vector<uint8_t>& bytes, int64_t rows) {
  const int64_t dims[2] = {rows, static_cast<int64_t>(bytes.size()) / rows};
  max_tensor_t* t = nullptr;
  check(max_tensor_create_borrowed(MAX_DTYPE_UINT8, dims, 2, nullptr, bytes.data(), 1, nullptr, nullptr, &t),
        "max_tensor_create_borrowed");
  return t;
}

// x [1, 4096] through `layers` chained qmatmuls, each with its own weight w<i>.
void build_chain(GraphBuilder& g, const Encoding& e, int layers) {
  max_value_t* y = g.input("x", {1, kDim});
  max_attrs_t* attrs = nullptr;
  check(max_attrs_create(&attrs), "max_attrs_create");
  check(max_attrs_set_string(attrs, "encoding", e.name), "max_attrs_set_string");
  for (int i = 0; i < layers; ++i) {
    const std::string name = "w" + std::to_string(i);
    const max_dim_t dims[2] = {{kDim, nullptr}, {kDim / e.elements * e.bytes, nullptr}};
    max_value_t* w = nullptr;
    check(max_graph_add_weight(g.get(), name.c_str(), MAX_DTYPE_UINT8, dims, 2, MAX_DEVICE_REF_CPU, 0, &w), name);
    max_value_t* inputs[2] = {y, w};
    size_t count = 0;
    check(max_graph_add_op(g.get(), "qmatmul", 0, inputs, 2, attrs, &y, 1, &count), "qmatmul");
  }
  max_attrs_release(attrs);
  g.output(y);
}

// Seconds per matvec over `layers` distinct 4096 x 4096 weights in `e`.
double time_quant_chain(const Context& ctx, const Encoding& e, int layers) {
  GraphBuilder g(std::string("qmatvec_") + e.name);
  build_chain(g, e, layers);
  std::vector<std::vector<uint8_t>> weights;
  std::vector<std::string> names;
  std::vector<max_tensor_t*> tensors;
  for (int i = 0; i < layers; ++i) {
    weights.push_back(random_blocks(e, kDim, static_cast<uint64_t>(i) + 1));
    names.push_back("w" + std::to_string(i));
  }
  std::vector<const char*> name_ptrs;
  for (int i = 0; i < layers; ++i) {
    name_ptrs.push_back(names[i].c_str());
    tensors.push_back(borrow_bytes(weights[i], kDim));
  }
  max_compile_options_t options;
  check(max_compile_options_init(&options, sizeof(options)), "max_compile_options_init");
  max_compiled_model_t* compiled = nullptr;
  check(max_context_compile(ctx.get(), g.get(), &options, &compiled), "max_context_compile");
  Owned owned;
  max_status_t* status = max_model_create(compiled, name_ptrs.data(), tensors.data(), tensors.size(), &owned.model);
  for (max_tensor_t* t : tensors) max_tensor_release(t);
  max_compiled_model_release(compiled);
  check(status, "max_model_create");
  const HostTensor x = HostTensor::random({1, kDim}, 1.f, 7);
  max_tensor_t* input = borrow(x);
  const double s = best_seconds_per_call(
      [&] {
        max_tensor_list_t* outputs = nullptr;
        check(max_model_execute(owned.model, &input, 1, &outputs), "max_model_execute");
        max_tensor_list_release(outputs);
      },
      5, 0.3);
  max_tensor_release(input);
  return s / layers;
}

// The float32 matvec: x [1, 4096] @ w [4096, 4096] through `layers` chained matmuls.
double time_float_chain(const Context& ctx, int layers) {
  GraphBuilder g("matvec_f32");
  max_value_t* y = g.input("x", {1, kDim});
  std::vector<HostTensor> weights;
  std::vector<std::string> names;
  for (int i = 0; i < layers; ++i) {
    names.push_back("w" + std::to_string(i));
    y = g.op("matmul", {y, g.weight(names.back(), {kDim, kDim})});
    weights.push_back(HostTensor::random({kDim, kDim}, 1.f / 64, static_cast<uint32_t>(i) + 11));
  }
  g.output(y);
  std::vector<const HostTensor*> ptrs;
  for (const HostTensor& w : weights) ptrs.push_back(&w);
  const Model model(ctx, g, names, ptrs);
  const HostTensor x = HostTensor::random({1, kDim}, 1.f, 7);
  max_tensor_t* input = borrow(x);
  const double s = best_seconds_per_call([&] { model.execute({input}); }, 5, 0.3);
  max_tensor_release(input);
  return s / layers;
}

void print_row(const char* label, double weight_bytes, double cold, double hot, double bandwidth) {
  const double cold_gbps = weight_bytes / cold / 1e9, hot_gbps = weight_bytes / hot / 1e9;
  std::printf("  %-10s %9.2f %9.3f %9.1f %8.0f%% %9.3f %9.1f\n", label, weight_bytes / 1e6, cold * 1e3, cold_gbps,
              bandwidth > 0 ? 100 * cold_gbps / bandwidth : 0.0, hot * 1e3, hot_gbps);
}

}  // namespace

void quant_matvec_table(const Context& ctx) {
  const double bandwidth = measured_read_gbps(ctx.num_threads(), 256u << 20, 5);
  std::printf("\nmatrix-vector product 1 x 4096 @ (4096 x 4096)^T, GB/s of weight bytes read\n");
  std::printf("  memory read bandwidth: measured %.1f GB/s on %d thread(s) (256 MB read pass)\n", bandwidth,
              ctx.num_threads());
  std::printf("  cold: distinct weights per layer (>= %zu MB per call, beyond the L3); hot: one matrix again\n",
              kColdBytes >> 20);
  std::printf("  %-10s %9s %9s %9s %9s %9s %9s\n", "weights", "MB", "cold ms", "GB/s", "of mem", "hot ms", "GB/s");
  const double f32_bytes = 4.0 * kDim * kDim;
  print_row("float32", f32_bytes, time_float_chain(ctx, 3), time_float_chain(ctx, 1), bandwidth);
  for (const Encoding& e : kEncodings) {
    const double bytes = static_cast<double>(kDim) * (kDim / e.elements * e.bytes);
    const int layers = static_cast<int>((kColdBytes + bytes - 1) / bytes);
    print_row(e.name, bytes, time_quant_chain(ctx, e, layers), time_quant_chain(ctx, e, 1), bandwidth);
  }
}

}  // namespace bench
