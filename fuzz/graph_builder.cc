// The graph builder through the C ABI: a random sequence of ops from the op registry (read
// through max_op_count / max_op_input / max_op_attr, so new ops join by themselves), each on
// values made so far and with random attributes of the kinds the registry names; then the
// graph is verified, printed, serialized and read back, compiled and executed once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "max_c.h"
#include "support/byte_source.h"
#include "support/guard.h"
#include "support/run_model.h"

namespace {

using maxfuzz::ByteSource;
using maxfuzz::ok;

struct OpInfo {
  const char* name;
  int32_t version;
  std::vector<max_op_input_arity_t> inputs;
  std::vector<std::pair<const char*, max_attr_kind_t>> attrs;
  std::vector<max_op_attr_presence_t> presence;
};

const std::vector<OpInfo>& registry() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> all;
    size_t count = 0;
    max_op_count(&count);
    for (size_t i = 0; i < count; ++i) {
      OpInfo op{};
      size_t n = 0;
      if (!ok(max_op_at(i, &op.name, &op.version))) continue;
      if (ok(max_op_num_inputs(op.name, op.version, &n)))
        for (size_t k = 0; k < n; ++k) {
          const char* input;
          max_op_input_arity_t arity;
          if (ok(max_op_input(op.name, op.version, k, &input, &arity))) op.inputs.push_back(arity);
        }
      if (ok(max_op_num_attrs(op.name, op.version, &n)))
        for (size_t k = 0; k < n; ++k) {
          const char* attr;
          max_attr_kind_t kind;
          max_op_attr_presence_t presence;
          if (ok(max_op_attr(op.name, op.version, k, &attr, &kind, &presence))) {
            op.attrs.push_back({attr, kind});
            op.presence.push_back(presence);
          }
        }
      all.push_back(std::move(op));
    }
    return all;
  }();
  return ops;
}

const int64_t kInts[] = {0, 1, 2, 3, -1, -2, 4, 7, 64, INT32_MAX, int64_t{1} << 32, (int64_t{1} << 59) + 1,
                         INT64_MAX, INT64_MIN};
const double kFloats[] = {0.0, 1.0, -1.0, 0.5, 1e-6, 1e30, -1e30, __builtin_inf(), __builtin_nan("")};
const char* const kStrings[] = {"", "n", "none", "mean", "sum", "tanh", "relu", "linear", "nearest",
                                "constant", "reflect", "edge", "float32", "NCHW", "NHWC", "x"};
const max_dtype_t kDtypes[] = {MAX_DTYPE_FLOAT32, MAX_DTYPE_INT64, MAX_DTYPE_INT32, MAX_DTYPE_BOOL,
                               MAX_DTYPE_FLOAT16, MAX_DTYPE_BFLOAT16, MAX_DTYPE_UINT8, MAX_DTYPE_INT8,
                               MAX_DTYPE_FLOAT64, MAX_DTYPE_INT4, MAX_DTYPE_FLOAT8_E4M3FN};

max_dim_t random_dim(ByteSource& in) {
  switch (in.below(6)) {
    case 0: return {0, "n"};
    case 1: return {0, "n + 1"};
    case 2: return {in.one_of(kInts), nullptr};
    default: return {static_cast<int64_t>(in.below(5)), nullptr};
  }
}

void set_attr(max_attrs_t* attrs, const char* name, max_attr_kind_t kind, ByteSource& in) {
  const size_t count = in.below(5);
  switch (kind) {
    case MAX_ATTR_INT: ok(max_attrs_set_int(attrs, name, in.one_of(kInts))); break;
    case MAX_ATTR_FLOAT: ok(max_attrs_set_float(attrs, name, in.one_of(kFloats))); break;
    case MAX_ATTR_STRING: ok(max_attrs_set_string(attrs, name, in.one_of(kStrings))); break;
    case MAX_ATTR_DTYPE: ok(max_attrs_set_dtype(attrs, name, in.one_of(kDtypes))); break;
    case MAX_ATTR_BOOL: ok(max_attrs_set_bool(attrs, name, in.coin())); break;
    case MAX_ATTR_DEVICE: ok(max_attrs_set_device(attrs, name, MAX_DEVICE_REF_CPU, 0)); break;
    case MAX_ATTR_GRAPH: ok(max_attrs_set_graph(attrs, name, static_cast<int64_t>(in.below(2)))); break;
    case MAX_ATTR_INTS: {
      std::vector<int64_t> v(count);
      for (int64_t& x : v) x = in.coin() ? static_cast<int64_t>(in.below(5)) - 1 : in.one_of(kInts);
      ok(max_attrs_set_ints(attrs, name, v.data(), v.size()));
      break;
    }
    case MAX_ATTR_FLOATS: {
      std::vector<double> v(count);
      for (double& x : v) x = in.one_of(kFloats);
      ok(max_attrs_set_floats(attrs, name, v.data(), v.size()));
      break;
    }
    case MAX_ATTR_DIMS: {
      std::vector<max_dim_t> v(count);
      for (max_dim_t& d : v) d = random_dim(in);
      ok(max_attrs_set_dims(attrs, name, v.data(), v.size()));
      break;
    }
    default: break;
  }
}

// Adds one op on values drawn from `pool`; its outputs join the pool.
void add_random_op(max_graph_t* graph, std::vector<max_value_t*>& pool, ByteSource& in) {
  const OpInfo& op = registry()[in.below(registry().size())];
  std::vector<max_value_t*> inputs;
  for (max_op_input_arity_t arity : op.inputs) {
    size_t n = 1;
    if (arity == MAX_OP_INPUT_OPTIONAL) n = in.below(2);
    if (arity == MAX_OP_INPUT_VARIADIC || arity == MAX_OP_INPUT_ANY) n = in.below(4);
    for (size_t k = 0; k < n; ++k) inputs.push_back(pool[in.below(pool.size())]);
  }
  max_attrs_t* attrs = nullptr;
  max_attrs_create(&attrs);
  for (size_t k = 0; k < op.attrs.size(); ++k)
    if (op.presence[k] == MAX_OP_ATTR_REQUIRED ? in.below(8) != 0 : in.below(3) == 0)
      set_attr(attrs, op.attrs[k].first, op.attrs[k].second, in);
  max_value_t* outputs[8];
  size_t num_outputs = 0;
  if (ok(max_graph_add_op(graph, op.name, in.coin() ? 0 : op.version, inputs.data(), inputs.size(), attrs, outputs,
                          8, &num_outputs)))
    pool.insert(pool.end(), outputs, outputs + num_outputs);
  max_attrs_release(attrs);
}

void add_inputs(max_graph_t* graph, std::vector<max_value_t*>& pool, ByteSource& in) {
  const size_t n = 1 + in.below(3);
  for (size_t i = 0; i < n; ++i) {
    std::vector<max_dim_t> dims(in.below(5));
    for (max_dim_t& d : dims) d = in.below(4) == 0 ? random_dim(in) : max_dim_t{1 + static_cast<int64_t>(in.below(4)), nullptr};
    max_value_t* v = nullptr;
    const std::string name = "in" + std::to_string(i);
    if (ok(max_graph_add_input(graph, name.c_str(), in.one_of(kDtypes), dims.data(), static_cast<int32_t>(dims.size()),
                               MAX_DEVICE_REF_CPU, 0, &v)))
      pool.push_back(v);
  }
}

// The checks every finished graph gets: verify, print, a MAXG round trip, compile, execute.
void finish(max_graph_t* graph, ByteSource& in) {
  ok(max_graph_verify(graph));
  max_buffer_t* buffer = nullptr;
  if (ok(max_graph_to_text(graph, &buffer))) max_buffer_release(buffer);
  if (ok(max_graph_to_dot(graph, &buffer))) max_buffer_release(buffer);
  if (ok(max_graph_serialize(graph, &buffer))) {
    const void* data = nullptr;
    size_t size = 0;
    max_graph_t* loaded = nullptr;
    max_buffer_data(buffer, &data);
    max_buffer_size(buffer, &size);
    // What the writer writes, the reader reads.
    if (!ok(max_graph_deserialize(data, size, &loaded))) __builtin_trap();
    max_graph_release(loaded);
    max_buffer_release(buffer);
  }
  max_compiled_model_t* compiled = nullptr;
  if (ok(max_context_compile(maxfuzz::fuzz_context(), graph, nullptr, &compiled))) {
    maxfuzz::execute_compiled(compiled, in);
    max_compiled_model_release(compiled);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteSource in(data, size);
  max_graph_t* graph = nullptr;
  if (!ok(max_graph_create(nullptr, &graph))) return 0;
  std::vector<max_value_t*> pool;
  add_inputs(graph, pool, in);
  const size_t num_ops = 1 + in.below(8);
  for (size_t i = 0; i < num_ops && !pool.empty(); ++i) add_random_op(graph, pool, in);
  const size_t num_outputs = pool.empty() ? 0 : 1 + in.below(2);
  std::vector<max_value_t*> outputs;
  for (size_t i = 0; i < num_outputs; ++i) outputs.push_back(pool[pool.size() - 1 - in.below(pool.size())]);
  if (ok(max_graph_set_outputs(graph, outputs.data(), nullptr, outputs.size()))) finish(graph, in);
  max_graph_release(graph);
  return 0;
}
