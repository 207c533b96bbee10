// Round trips through the MAXG format: every registered op, symbolic dims, interleaved inputs,
// constants inline and in the data segment, weights, subgraphs, metadata, files.
#include <sys/mman.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "graph/op_registry.h"
#include "test_helpers.h"

namespace maxc::testing {
namespace {

// How to build one op generically: the types of fresh graph inputs, and the attributes.
// `custom` replaces both when the op needs something else (constants as inputs, ...); it
// returns the op's outputs.
struct Recipe {
  std::vector<TensorType> inputs;
  Attrs attrs = {};
  std::function<std::vector<ValueId>(Graph&, const std::string& prefix)> custom = {};
};

TensorType i64(std::vector<Dim> dims) { return tensor(DType::kInt64, std::move(dims)); }
TensorType boolean(std::vector<Dim> dims) { return tensor(DType::kBool, std::move(dims)); }

ValueId scalar_constant(Graph& g, int64_t v) {
  std::vector<uint8_t> bytes(8);
  std::memcpy(bytes.data(), &v, 8);
  return g.add_constant(Constant::copy_of(i64({}), bytes));
}

// A subgraph x -> op(x) on `type`: a branch, a body or a callee.
int64_t unary_subgraph(Graph& g, const std::string& name, const TensorType& type, std::string_view op) {
  Graph sub(name);
  ValueId x = sub.add_input("x", type);
  sub.set_outputs({{"y", sub.add_op(op, {x})[0]}});
  return g.add_subgraph(std::move(sub));
}

// One entry per registered op. A new op without an entry fails EveryRegisteredOp, so it
// cannot be forgotten: add one here.
const std::map<std::string, Recipe, std::less<>>& recipes() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Recipe, std::less<>>;
    auto& r = *t;
    const TensorType x = f32({"batch", 4});
    for (const char* name : {"abs", "acos", "atanh", "cos", "erf", "exp", "floor", "log", "log1p", "negate", "relu",
                             "round", "rsqrt", "sigmoid", "silu", "sin", "sqrt", "tanh", "trunc", "is_inf", "is_nan"})
      r[name] = {{x}};
    r["gelu"] = {{x}, {{"approximate", std::string("tanh")}}};
    for (const char* name : {"add", "sub", "mul", "div", "mod", "pow", "equal", "not_equal", "greater",
                             "greater_equal", "less", "less_equal"})
      r[name] = {{x, f32({1, 4})}};
    r["max"] = {{x, x}};
    r["min"] = {{f32({2, 3})}, {{"axis", int64_t{0}}}};
    for (const char* name : {"logical_and", "logical_or", "logical_xor"}) r[name] = {{boolean({3}), boolean({3})}};
    r["logical_not"] = {{boolean({3})}};
    for (const char* name : {"bitwise_and", "bitwise_or", "bitwise_xor"})
      r[name] = {{tensor(DType::kInt32, {"batch", 4}), tensor(DType::kInt32, {4})}};
    r["bitwise_not"] = {{tensor(DType::kUInt8, {3})}};
    r["bitcast"] = {{x}, {{"dtype", DType::kInt32}}};
    r["where"] = {{boolean({"batch", 4}), x, x}};
    r["cast"] = {{x}, {{"dtype", DType::kFloat16}}};
    r["clamp"] = {{x}, {{"min", -1.5}, {"max", 2.25}}};
    r["constant"] = {{}, {}, [](Graph& g, const std::string&) {
                       return std::vector<ValueId>{g.add_constant(Constant::copy_of(f32({2}), pattern(8, 1)))};
                     }};
    r["constant_external"] = {{}, {}, [](Graph& g, const std::string& prefix) {
                                return std::vector<ValueId>{g.add_weight(prefix + "w", f32({"batch", 4}))};
                              }};
    r["range"] = {{}, {}, [](Graph& g, const std::string&) {
                    ValueId start = scalar_constant(g, 2), stop = scalar_constant(g, 11), step = scalar_constant(g, 3);
                    return g.add_op("range", {start, stop, step});
                  }};
    for (const char* name : {"argmax", "argmin", "sum", "mean", "softmax", "logsoftmax"})
      r[name] = {{f32({2, 3})}, {{"axis", int64_t{-1}}}};
    r["argsort"] = {{f32({5})}, {{"ascending", false}}};
    r["cumsum"] = {{f32({2, 3})}, {{"exclusive", true}}};
    r["top_k"] = {{f32({2, 5})}, {{"k", int64_t{2}}}};
    r["as_interleaved_complex"] = {{f32({2, 4})}};
    r["avg_pool2d"] = {{f32({1, 4, 4, 2})}, {{"kernel_size", std::vector<int64_t>{2, 2}}}};
    r["max_pool2d"] = {{f32({1, 4, 4, 2})}, {{"kernel_size", std::vector<int64_t>{2, 2}}, {"ceil_mode", true}}};
    r["band_part"] = {{f32({3, 3})}, {{"num_lower", int64_t{1}}, {"num_upper", int64_t{0}}}};
    r["broadcast_to"] = {{f32({1, 4})}, {{"shape", std::vector<Dim>{"batch", 4}}}};
    r["chunk"] = {{f32({4, 2})}, {{"chunks", int64_t{2}}}};
    r["concat"] = {{f32({2, 3}), f32({5, 3})}, {{"axis", int64_t{0}}}};
    r["conv2d"] = {{f32({1, 5, 5, 2}), f32({3, 3, 2, 4}), f32({4})}};
    r["flatten"] = {{f32({2, 3, 4})}};
    r["gather"] = {{f32({5, 3}), i64({2})}, {{"axis", int64_t{0}}}};
    r["gather_nd"] = {{f32({5, 3}), i64({2, 1})}};
    r["layer_norm"] = {{f32({2, 4}), f32({4}), f32({4})}, {{"epsilon", 1e-5}}};
    r["dequantize"] = {{tensor(DType::kUInt8, {"batch", 36})}, {{"encoding", std::string("q4_0")}}};
    r["qmatmul"] = {{f32({"batch", 256}), tensor(DType::kUInt8, {5, 144})}, {{"encoding", std::string("q4_k")}}};
    r["matmul"] = {{f32({"batch", 3}), f32({3, 4})}};
    r["outer"] = {{f32({3}), f32({4})}};
    r["pad"] = {{f32({2, 3})}, {{"paddings", std::vector<int64_t>{1, 1, 0, 2}}}};
    r["permute"] = {{f32({2, 3, 4})}, {{"dims", std::vector<int64_t>{2, 0, 1}}}};
    r["cond"] = {{}, {}, [](Graph& g, const std::string& prefix) {
                   const TensorType x = f32({"batch", 4});
                   Attrs attrs{{"then_graph", GraphRef{unary_subgraph(g, prefix + "then", x, "exp")}},
                               {"else_graph", GraphRef{unary_subgraph(g, prefix + "else", x, "negate")}}};
                   return g.add_op("cond", {g.add_input(prefix + "p", boolean({})), g.add_input(prefix + "x", x)}, attrs);
                 }};
    r["while_loop"] = {{}, {}, [](Graph& g, const std::string& prefix) {
                         const TensorType flag = boolean({});
                         Attrs attrs{{"predicate", GraphRef{unary_subgraph(g, prefix + "predicate", flag, "logical_not")}},
                                     {"body", GraphRef{unary_subgraph(g, prefix + "body", flag, "logical_not")}}};
                         return g.add_op("while_loop", {g.add_input(prefix + "flag", flag)}, attrs);
                       }};
    r["call"] = {{}, {}, [](Graph& g, const std::string& prefix) {
                   Attrs attrs{{"graph", GraphRef{unary_subgraph(g, prefix + "callee", f32({2}), "exp")}},
                               {"prefix", std::string("layer.")}};
                   return g.add_op("call", {g.add_input(prefix + "x", f32({2}))}, attrs);
                 }};
    r["nonzero"] = {{f32({"batch", 4})}, {{"out_dim", std::vector<Dim>{"nz"}}}};
    r["bind_dims"] = {{TensorType{DType::kInt64, {3}, DeviceRef::cpu()}}, {{"out_dim", std::vector<Dim>{"d0", "d1", "d2"}}}};
    r["masked_scatter"] = {{f32({"batch", 4}), boolean({4}), f32({6})}, {{"out_dim", std::vector<Dim>{"n"}}}};
    r["rebind"] = {{f32({"batch", 4})}, {{"shape", std::vector<Dim>{"n", 4}}, {"message", std::string("n rows")}}};
    r["repeat_interleave"] = {{f32({2, 3})}, {{"repeats", int64_t{2}}, {"axis", int64_t{0}}}};
    r["reshape"] = {{f32({2, 6})}, {{"shape", std::vector<Dim>{3, 4}}}};
    r["rms_norm"] = {{f32({2, 4}), f32({4})}};
    r["scatter"] = {{f32({4, 3}), f32({2, 3}), i64({2, 3})}, {{"axis", int64_t{0}}}};
    r["scatter_nd"] = {{f32({5, 3}), f32({2, 3}), i64({2, 1})}};
    r["shape_to_tensor"] = {{}, {{"shape", std::vector<Dim>{2, "batch"}}}};
    r["slice_tensor"] = {{f32({4, 6})}, {{"starts", std::vector<Dim>{0, 1}}, {"stops", std::vector<Dim>{2, 5}}}};
    r["split"] = {{f32({6, 2})}, {{"split_sizes", std::vector<Dim>{2, 4}}}};
    r["squeeze"] = {{f32({2, 1, 3})}, {{"axis", int64_t{1}}}};
    r["stack"] = {{f32({2, 3}), f32({2, 3})}, {{"axis", int64_t{1}}}};
    r["tile"] = {{f32({2, 3})}, {{"repeats", std::vector<Dim>{2, 1}}}};
    r["transpose"] = {{f32({2, 3})}, {{"axis_1", int64_t{0}}, {"axis_2", int64_t{1}}}};
    r["unsqueeze"] = {{f32({2, 3})}, {{"axis", int64_t{0}}}};
    return t;
  }();
  return *table;
}

// A graph with one instance of every registered op (every version), each on fresh inputs.
Graph every_op_graph(std::vector<std::string>* missing) {
  Graph g("every_op");
  std::vector<NamedValue> outputs;
  for (const OpSchema* schema : OpRegistry::global().list()) {
    auto it = recipes().find(schema->name);
    if (it == recipes().end()) {
      if (missing) missing->push_back(schema->name);
      continue;
    }
    const Recipe& recipe = it->second;
    std::string prefix = schema->name + "_v" + std::to_string(schema->version) + "_";
    std::vector<ValueId> out;
    try {
      if (recipe.custom) {
        out = recipe.custom(g, prefix);
      } else {
        std::vector<ValueId> ids;
        for (size_t i = 0; i < recipe.inputs.size(); ++i)
          ids.push_back(g.add_input(prefix + "x" + std::to_string(i), recipe.inputs[i]));
        out = g.add_op(schema->name, schema->version, ids, recipe.attrs);
      }
    } catch (const Error& e) {
      ADD_FAILURE() << "cannot build " << schema->label() << " from its recipe: " << e.what();
      continue;
    }
    for (size_t j = 0; j < out.size(); ++j) outputs.push_back({prefix + "out" + std::to_string(j), out[j]});
  }
  g.set_outputs(outputs);
  return g;
}

TEST(SerializeRoundTrip, EveryRegisteredOp) {
  std::vector<std::string> missing;
  Graph g = every_op_graph(&missing);
  for (const std::string& name : missing)
    ADD_FAILURE() << "op '" << name << "' is registered but tests/serialize/round_trip_test.cc has no recipe for it";

  std::set<std::string> used;
  for (const Op& op : g.ops()) used.insert(op.schema->name);
  for (const OpSchema* schema : OpRegistry::global().list())
    if (!std::count(missing.begin(), missing.end(), schema->name)) EXPECT_TRUE(used.count(schema->name)) << schema->name;

  std::vector<uint8_t> bytes = serialize(g);
  EXPECT_EQ(bytes, serialize(g)) << "serialize is not deterministic";
  Graph back = deserialize(bytes);
  EXPECT_EQ(back.to_string(), g.to_string());
  EXPECT_EQ(serialize(back), bytes) << "a loaded graph serializes differently";
}

TEST(SerializeRoundTrip, EveryOpThroughAFile) {
  Graph g = every_op_graph(nullptr);
  TempPath path("every_op.maxg");
  save(g, path.str());
  Graph back = load(path.str());
  EXPECT_EQ(back.to_string(), g.to_string());
  EXPECT_EQ(serialize(back), serialize(g));
}

// Inputs declared between ops keep their value ids; symbolic and algebraic dims survive.
TEST(SerializeRoundTrip, InterleavedInputsAndSymbolicDims) {
  Graph g("interleaved");
  ValueId x = g.add_input("x", f32({"batch", Dim::parse("(seq + 1) // 2"), Dim::parse("n * 3 - 1")}));
  ValueId e = g.add_op("exp", {x})[0];
  ValueId y = g.add_input("y", f32({"batch", Dim::parse("(seq + 1) // 2"), Dim::parse("n * 3 - 1")}));
  ValueId s = g.add_op("add", {e, y})[0];
  ValueId b = g.add_input("b", TensorType{DType::kInt8, {}, DeviceRef::gpu(1), true});
  g.set_outputs({{"sum", s}, {"", e}, {"b", b}});

  std::vector<uint8_t> bytes = serialize(g);
  Graph back = deserialize(bytes);
  EXPECT_EQ(back.to_string(), g.to_string());
  ASSERT_EQ(back.inputs().size(), 3u);
  EXPECT_EQ(back.inputs()[1].value, y);
  EXPECT_EQ(back.type(x), g.type(x));
  EXPECT_TRUE(back.type(b).is_buffer);
  EXPECT_EQ(back.type(b).device, DeviceRef::gpu(1));
  EXPECT_EQ(serialize(back), bytes);
}

Graph constants_graph(size_t big_size) {
  Graph g("constants");
  ValueId small = g.add_constant(Constant::copy_of(f32({4}), pattern(16, 3)));
  ValueId big = g.add_constant(Constant::copy_of(tensor(DType::kUInt8, {static_cast<int64_t>(big_size)}), pattern(big_size, 9)));
  ValueId big2 = g.add_constant(Constant::copy_of(f32({1024}), pattern(4096, 77)));  // exactly the limit
  ValueId again = g.add_op("constant", {}, Attrs{{"index", int64_t{1}}})[0];         // a second use
  ValueId empty = g.add_constant(Constant::copy_of(f32({0, 3}), {}));
  ValueId w = g.add_weight("encoder.w", f32({"batch", 4}));
  ValueId w2 = g.add_weight("a.bias", tensor(DType::kBFloat16, {4}, DeviceRef::gpu(0)));
  g.set_outputs({{"small", small}, {"big", big}, {"big2", big2}, {"again", again}, {"empty", empty}, {"w", w}, {"w2", w2}});
  return g;
}

void expect_same_constants(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.constants().size(), b.constants().size());
  for (size_t i = 0; i < a.constants().size(); ++i) {
    EXPECT_EQ(a.constants()[i].type, b.constants()[i].type);
    ASSERT_EQ(a.constants()[i].size, b.constants()[i].size);
    if (a.constants()[i].size == 0) continue;
    EXPECT_EQ(0, std::memcmp(a.constants()[i].data.get(), b.constants()[i].data.get(), a.constants()[i].size)) << i;
  }
}

TEST(SerializeRoundTrip, ConstantsInlineAndInTheDataSegment) {
  Graph g = constants_graph(100000);
  std::vector<uint8_t> bytes = serialize(g);
  maxg::Header h = header_of(bytes);
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_GE(h.data_offset, 32 + h.flatbuffer_size);
  EXPECT_EQ(h.data_offset + h.data_size, bytes.size());
  // The two large blobs, 64-byte aligned: 100000 bytes, then 4096 at 100032.
  EXPECT_EQ(h.data_size, 100032u + 4096u);
  EXPECT_EQ(0, std::memcmp(bytes.data() + h.data_offset, g.constants()[1].data.get(), 100000));
  EXPECT_EQ(0, std::memcmp(bytes.data() + h.data_offset + 100032, g.constants()[2].data.get(), 4096));
  EXPECT_LT(h.flatbuffer_size, 4000u) << "large constants must not be inline";

  Graph copied = deserialize(bytes);  // no keep_alive: copies
  expect_same_constants(g, copied);
  EXPECT_EQ(copied.weights(), g.weights());
  EXPECT_EQ(serialize(copied), bytes);

  // With keep_alive, the blobs alias the bytes.
  auto owner = std::make_shared<std::vector<uint8_t>>(bytes);
  Graph aliased = deserialize(*owner, owner);
  const uint8_t* base = owner->data();
  const uint8_t* p = aliased.constants()[1].data.get();
  if (reinterpret_cast<uintptr_t>(base + h.data_offset) % 16 == 0) EXPECT_EQ(p, base + h.data_offset);
  expect_same_constants(g, aliased);
  EXPECT_EQ(owner.use_count(), 3);  // owner + the two blobs
}

TEST(SerializeRoundTrip, LoadMapsTheFileAndConstantsAliasIt) {
  Graph g = constants_graph(1 << 20);
  TempPath path("constants.maxg");
  save(g, path.str());
  std::vector<uint8_t> bytes = serialize(g);
  {
    FILE* f = std::fopen(path.str().c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::vector<uint8_t> on_disk(bytes.size() + 1);
    size_t n = std::fread(on_disk.data(), 1, on_disk.size(), f);
    std::fclose(f);
    on_disk.resize(n);
    EXPECT_EQ(on_disk, bytes) << "save() and serialize() must write the same bytes";
  }
  Graph loaded = load(path.str());
  expect_same_constants(g, loaded);
  for (size_t i : {1, 2}) EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded.constants()[i].data.get()) % 64, 0u);
  // The mapping outlives the graph that made it as long as a constant refers to it.
  Constant keep = loaded.constants()[1];
  loaded = Graph();
  EXPECT_EQ(0, std::memcmp(keep.data.get(), g.constants()[1].data.get(), keep.size));
}

TEST(SerializeRoundTrip, SubgraphsAndMetadata) {
  Graph inner("inner");
  ValueId a = inner.add_input("a", f32({2}));
  inner.set_outputs({{"r", inner.add_op("relu", {a})[0]}});
  Graph body("body");
  ValueId x = body.add_input("x", f32({"n"}));
  body.set_outputs({{"y", body.add_op("exp", {x})[0]}});
  body.add_subgraph(inner);
  Graph cond("cond");
  cond.add_constant(Constant::copy_of(tensor(DType::kUInt8, {5000}), pattern(5000, 1)));
  Graph main("main");
  ValueId m = main.add_input("m", f32({3}));
  main.set_outputs({{"m", m}});
  main.add_subgraph(body);
  main.add_subgraph(cond);
  main.add_constant(Constant::copy_of(tensor(DType::kUInt8, {6000}), pattern(6000, 2)));

  SerializeOptions options;
  options.metadata = {{"producer", "max_c tests"}, {"model", "sub\"graphs"}};
  std::vector<uint8_t> bytes = serialize(main, options);
  LoadedGraph back = deserialize_with_metadata(bytes);
  EXPECT_EQ(back.metadata, options.metadata);
  EXPECT_EQ(back.schema_version, maxg::kSchemaVersion);
  ASSERT_EQ(back.graph.subgraphs().size(), 2u);
  EXPECT_EQ(back.graph.subgraphs()[0].name(), "body");
  ASSERT_EQ(back.graph.subgraphs()[0].subgraphs().size(), 1u);
  EXPECT_EQ(back.graph.subgraphs()[0].subgraphs()[0].name(), "inner");
  EXPECT_EQ(back.graph.to_string(), main.to_string());
  expect_same_constants(main.subgraphs()[1], back.graph.subgraphs()[1]);
  EXPECT_EQ(serialize(back.graph, options), bytes);
}

TEST(SerializeRoundTrip, InlineLimitIsAnOption) {
  Graph g = constants_graph(5000);
  SerializeOptions all_inline;
  all_inline.inline_limit = SIZE_MAX;
  std::vector<uint8_t> bytes = serialize(g, all_inline);
  EXPECT_EQ(header_of(bytes).data_size, 0u);
  expect_same_constants(g, deserialize(bytes));
  SerializeOptions none_inline;
  none_inline.inline_limit = 0;
  bytes = serialize(g, none_inline);
  expect_same_constants(g, deserialize(bytes));
}

TEST(SerializeFile, MissingFileIsNotFound) {
  EXPECT_EQ(error_code([] { load("/nonexistent/dir/x.maxg"); }), Code::kNotFound);
  EXPECT_EQ(error_code([] { save(Graph(), "/nonexistent/dir/x.maxg"); }), Code::kNotFound);
  EXPECT_EQ(error_code([] { load("/"); }), Code::kInvalidArgument);
  TempPath empty("empty.maxg");
  FILE* f = std::fopen(empty.str().c_str(), "wb");
  std::fclose(f);
  expect_error([&] { load(empty.str()); }, Code::kDataLoss, {"truncated", empty.str()});
}

}  // namespace
}  // namespace maxc::testing
