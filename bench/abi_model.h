// Small RAII helpers over the public ABI for the benchmarks: a context, a float32 graph
// built op by op, and a model made from it with weights borrowed from host memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "max_c.h"

namespace bench {

// Throws std::runtime_error("<what>: <CODE>: <message>") for a failed call. A view, so that
// checking a call that succeeds allocates nothing (bench/overhead.cc counts allocations).
void check(max_status_t* status, std::string_view what);

class Context {
 public:
  explicit Context(int32_t num_threads);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  max_context_t* get() const { return context_; }
  int32_t num_threads() const;

 private:
  max_context_t* context_ = nullptr;
};

// A float32 host tensor that owns its data.
struct HostTensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
  static HostTensor random(std::vector<int64_t> dims, float scale, uint32_t seed);
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& name);
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  max_value_t* input(const std::string& name, const std::vector<int64_t>& dims);
  max_value_t* weight(const std::string& name, const std::vector<int64_t>& dims);
  max_value_t* op(const std::string& name, std::vector<max_value_t*> inputs);
  void output(max_value_t* value);
  max_graph_t* get() const { return graph_; }

 private:
  max_graph_t* graph_ = nullptr;
};

class Model {
 public:
  // Compiles the graph and binds `weights` by name (borrowed: they must outlive the model).
  Model(const Context& context, const GraphBuilder& graph, const std::vector<std::string>& weight_names,
        const std::vector<const HostTensor*>& weights, bool fuse = true);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // One execute on borrowed inputs; the outputs are released at once.
  void execute(const std::vector<max_tensor_t*>& inputs) const;

 private:
  max_model_t* model_ = nullptr;
};

// A tensor borrowing `t`'s data (release with max_tensor_release).
max_tensor_t* borrow(const HostTensor& t);

}  // namespace bench
