#include "abi_model.h"

#include <random>
#include <stdexcept>

namespace bench {

void check(max_status_t* status, std::string_view what) {
  if (!status) return;
  std::string message = std::string(what) + ": " + max_status_code_name(max_status_code(status)) + ": " +
                        max_status_message(status);
  max_status_release(status);
  throw std::runtime_error(message);
}

Context::Context(int32_t num_threads) {
  max_context_options_t options;
  check(max_context_options_init(&options, sizeof(options)), "max_context_options_init");
  options.num_threads = num_threads;
  check(max_context_create(&options, &context_), "max_context_create");
}

Context::~Context() { max_context_release(context_); }

int32_t Context::num_threads() const {
  int32_t n = 0;
  check(max_context_num_threads(context_, &n), "max_context_num_threads");
  return n;
}

HostTensor HostTensor::random(std::vector<int64_t> dims, float scale, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  HostTensor t{std::move(dims), std::vector<float>(static_cast<size_t>(n))};
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (float& f : t.data) f = dist(gen);
  return t;
}

namespace {

std::vector<max_dim_t> dims_of(const std::vector<int64_t>& dims) {
  std::vector<max_dim_t> out;
  for (int64_t d : dims) out.push_back({d, nullptr});
  return out;
}

}  // namespace

GraphBuilder::GraphBuilder(const std::string& name) { check(max_graph_create(name.c_str(), &graph_), "max_graph_create"); }

GraphBuilder::~GraphBuilder() { max_graph_release(graph_); }

max_value_t* GraphBuilder::input(const std::string& name, const std::vector<int64_t>& dims) {
  const std::vector<max_dim_t> d = dims_of(dims);
  max_value_t* v = nullptr;
  check(max_graph_add_input(graph_, name.c_str(), MAX_DTYPE_FLOAT32, d.data(), static_cast<int32_t>(d.size()),
                            MAX_DEVICE_REF_CPU, 0, &v),
        "input " + name);
  return v;
}

max_value_t* GraphBuilder::weight(const std::string& name, const std::vector<int64_t>& dims) {
  const std::vector<max_dim_t> d = dims_of(dims);
  max_value_t* v = nullptr;
  check(max_graph_add_weight(graph_, name.c_str(), MAX_DTYPE_FLOAT32, d.data(), static_cast<int32_t>(d.size()),
                             MAX_DEVICE_REF_CPU, 0, &v),
        "weight " + name);
  return v;
}

max_value_t* GraphBuilder::op(const std::string& name, std::vector<max_value_t*> inputs) {
  max_value_t* out = nullptr;
  size_t count = 0;
  check(max_graph_add_op(graph_, name.c_str(), 0, inputs.data(), inputs.size(), nullptr, &out, 1, &count),
        "op " + name);
  return out;
}

void GraphBuilder::output(max_value_t* value) {
  const char* name = "y";
  check(max_graph_set_outputs(graph_, &value, &name, 1), "max_graph_set_outputs");
}

max_tensor_t* borrow(const HostTensor& t) {
  max_tensor_t* tensor = nullptr;
  check(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, t.dims.data(), static_cast<int32_t>(t.dims.size()), nullptr,
                                   const_cast<float*>(t.data.data()), 1, nullptr, nullptr, &tensor),
        "max_tensor_create_borrowed");
  return tensor;
}

Model::Model(const Context& context, const GraphBuilder& graph, const std::vector<std::string>& weight_names,
             const std::vector<const HostTensor*>& weights, bool fuse) {
  max_compile_options_t options;
  check(max_compile_options_init(&options, sizeof(options)), "max_compile_options_init");
  options.enable_fusion = fuse ? 1 : 0;
  max_compiled_model_t* compiled = nullptr;
  check(max_context_compile(context.get(), graph.get(), &options, &compiled), "max_context_compile");
  std::vector<const char*> names;
  std::vector<max_tensor_t*> tensors;
  for (size_t i = 0; i < weights.size(); ++i) {
    names.push_back(weight_names[i].c_str());
    tensors.push_back(borrow(*weights[i]));
  }
  max_status_t* status = max_model_create(compiled, names.data(), tensors.data(), tensors.size(), &model_);
  for (max_tensor_t* t : tensors) max_tensor_release(t);
  max_compiled_model_release(compiled);
  check(status, "max_model_create");
}

Model::~Model() { max_model_release(model_); }

void Model::execute(const std::vector<max_tensor_t*>& inputs) const {
  max_tensor_list_t* outputs = nullptr;
  check(max_model_execute(model_, inputs.data(), inputs.size(), &outputs), "max_model_execute");
  max_tensor_list_release(outputs);
}

}  // namespace bench
