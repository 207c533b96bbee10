// cond, while_loop and call, from graph building through execution on the CPU: each branch
// and loop count, weights inside subgraphs, nesting, symbolic shapes, and the refusals.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "driver/test_util.h"
#include "engine/run_limits.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

TensorType i64(std::vector<Dim> dims = {}) { return TensorType{DType::kInt64, std::move(dims), DeviceRef::cpu()}; }
TensorType boolean() { return TensorType{DType::kBool, {}, DeviceRef::cpu()}; }

Ref<Tensor> scalar_i64(int64_t v) {
  auto t = Tensor::create(Device::cpu(), DType::kInt64, {});
  std::memcpy(t->data(), &v, sizeof v);
  return t;
}

Ref<Tensor> scalar_bool(bool v) {
  auto t = Tensor::create(Device::cpu(), DType::kBool, {});
  *t->data() = v ? 1 : 0;
  return t;
}

int64_t as_i64(const Ref<Tensor>& t) { return *reinterpret_cast<const int64_t*>(t->data()); }
float at(const Ref<Tensor>& t, int64_t i) { return reinterpret_cast<const float*>(t->data())[i]; }

ValueId i64_constant(Graph& g, int64_t v) {
  return g.add_constant(Constant::copy_of(i64(), {reinterpret_cast<const uint8_t*>(&v), sizeof v}));
}

std::vector<Ref<Tensor>> run(const Graph& g, std::vector<Ref<Tensor>> inputs, const NamedTensors& weights = {}) {
  auto model = Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), weights);
  return model->execute(inputs);
}

// then: x * 2 + w;  else: x - 1. The branches take x; `w` is a weight of the then branch.
Graph branchy() {
  Graph then_graph("then");
  {
    ValueId x = then_graph.add_input("x", f32({"n"}));
    ValueId w = then_graph.add_weight("w", f32({1}));
    ValueId twice = then_graph.add_op("add", {x, x})[0];
    then_graph.set_outputs({{"y", then_graph.add_op("add", {twice, w})[0]}});
  }
  Graph else_graph("else");
  {
    ValueId x = else_graph.add_input("x", f32({"n"}));
    ValueId one = else_graph.add_op("sub", {x, x})[0];  // zeros, then exp: ones
    else_graph.set_outputs({{"y", else_graph.add_op("sub", {x, else_graph.add_op("exp", {one})[0]})[0]}});
  }
  Graph g("main");
  ValueId p = g.add_input("p", boolean());
  ValueId x = g.add_input("x", f32({"n"}));
  Attrs attrs{{"then_graph", GraphRef{g.add_subgraph(then_graph)}}, {"else_graph", GraphRef{g.add_subgraph(else_graph)}}};
  g.set_outputs({{"y", g.add_op("cond", {p, x}, attrs)[0]}});
  return g;
}

TEST(ControlFlow, CondRunsTheBranchThePredicatePicks) {
  const Graph g = branchy();
  const NamedTensors weights = {{"w", random_tensor({1}, 3)}};
  auto model = Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), weights);
  EXPECT_EQ(model->compiled()->weights().size(), 1u) << "the branch's weight is the model's";
  const float w = at(weights[0].second, 0);
  for (int64_t n : {1, 7}) {
    Ref<Tensor> x = random_tensor({n}, 11);
    const std::vector<Ref<Tensor>> yes = model->execute(std::vector<Ref<Tensor>>{scalar_bool(true), x});
    const std::vector<Ref<Tensor>> no = model->execute(std::vector<Ref<Tensor>>{scalar_bool(false), x});
    ASSERT_EQ(yes[0]->dims(), std::vector<int64_t>{n});
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(at(yes[0], i), 2 * at(x, i) + w);
      EXPECT_FLOAT_EQ(at(no[0], i), at(x, i) - 1);
    }
  }
}

// while i < limit: (i, acc) = (i + 1, acc * 2). The predicate reads `limit`, a loop value it
// passes through unchanged.
Graph doubling() {
  auto loop_inputs = [](Graph& s) {
    return std::vector<ValueId>{s.add_input("i", i64()), s.add_input("limit", i64()), s.add_input("acc", f32({2}))};
  };
  Graph predicate("predicate");
  {
    auto v = loop_inputs(predicate);
    predicate.set_outputs({{"go", predicate.add_op("less", {v[0], v[1]})[0]}});
  }
  Graph body("body");
  {
    auto v = loop_inputs(body);
    ValueId next = body.add_op("add", {v[0], i64_constant(body, 1)})[0];
    body.set_outputs({{"i", next}, {"limit", v[1]}, {"acc", body.add_op("add", {v[2], v[2]})[0]}});
  }
  Graph g("main");
  ValueId limit = g.add_input("limit", i64());
  ValueId acc = g.add_input("acc", f32({2}));
  Attrs attrs{{"predicate", GraphRef{g.add_subgraph(predicate)}}, {"body", GraphRef{g.add_subgraph(body)}}};
  auto out = g.add_op("while_loop", {i64_constant(g, 0), limit, acc}, attrs);
  g.set_outputs({{"i", out[0]}, {"acc", out[2]}});
  return g;
}

TEST(ControlFlow, WhileLoopRunsUntilThePredicateFails) {
  const Graph g = doubling();
  auto model = Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), NamedTensors{});
  Ref<Tensor> acc = random_tensor({2}, 5);
  for (int64_t limit : {0, 1, 5}) {
    auto out = model->execute(std::vector<Ref<Tensor>>{scalar_i64(limit), acc});
    EXPECT_EQ(as_i64(out[0]), limit);
    for (int64_t k = 0; k < 2; ++k) EXPECT_FLOAT_EQ(at(out[1], k), at(acc, k) * static_cast<float>(1 << limit));
  }
}

// A loop whose trip count the caller (or a file) makes endless stops at the run's deadline or
// on its cancel flag, naming the loop and the iteration; the model then runs normally.
TEST(ControlFlow, RunLimitsStopAnEndlessWhileLoop) {
  const Graph g = doubling();
  auto model = Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), NamedTensors{});
  const std::vector<Ref<Tensor>> endless{scalar_i64(int64_t{1} << 52), random_tensor({2}, 5)};
  const auto t0 = std::chrono::steady_clock::now();
  {
    RunLimitsScope limits(RunLimits{20'000, nullptr});
    EXPECT_MAXC_ERROR(model->execute(endless), Code::kDeadlineExceeded, "op 'while_loop' (iteration ",
                      "20000 us");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  int32_t cancel = 0;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    __atomic_store_n(&cancel, 1, __ATOMIC_RELAXED);
  });
  {
    RunLimitsScope limits(RunLimits{0, &cancel});
    EXPECT_MAXC_ERROR(model->execute(endless), Code::kCancelled, "op 'while_loop' (iteration ", "cancelled");
    canceller.join();
    // Still set: the next call stops before its first step.
    EXPECT_MAXC_ERROR(model->execute(endless), Code::kCancelled, "(step 0)");
  }
  // Outside the scope nothing is checked, and the model is as it was.
  auto out = model->execute(std::vector<Ref<Tensor>>{scalar_i64(3), endless[1]});
  EXPECT_EQ(as_i64(out[0]), 3);
}

// call(x) with prefix "layer0." of a graph computing x @ w: inlined, its weight renamed.
TEST(ControlFlow, CallIsInlinedWithItsWeightsPrefixed) {
  Graph callee("linear");
  ValueId cx = callee.add_input("x", f32({2, 3}));
  callee.set_outputs({{"y", callee.add_op("matmul", {cx, callee.add_weight("w", f32({3, 4}))})[0]}});
  Graph g("main");
  ValueId x = g.add_input("x", f32({2, 3}));
  const int64_t ref = g.add_subgraph(callee);
  ValueId a = g.add_op("call", {x}, {{"graph", GraphRef{ref}}, {"prefix", std::string("layer0.")}})[0];
  ValueId b = g.add_op("call", {x}, {{"graph", GraphRef{ref}}, {"prefix", std::string("layer1.")}})[0];
  g.set_outputs({{"y", g.add_op("sub", {a, b})[0]}});
  auto compiled = CompiledModel::compile(Context::create({}), g, CompileSettings{});
  for (const Node& n : compiled->program().nodes) EXPECT_NE(n.op, "call");
  ASSERT_EQ(compiled->weights().size(), 2u);
  EXPECT_EQ(compiled->weights()[0]->name(), "layer0.w");
  EXPECT_EQ(compiled->weights()[1]->name(), "layer1.w");
  Ref<Tensor> w0 = random_tensor({3, 4}, 1), w1 = random_tensor({3, 4}, 2), in = random_tensor({2, 3}, 4);
  auto model = Model::create(compiled, NamedTensors{{"layer0.w", w0}, {"layer1.w", w1}});
  auto out = model->execute(std::vector<Ref<Tensor>>{in});
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      float want = 0;
      for (int64_t k = 0; k < 3; ++k) want += at(in, r * 3 + k) * (at(w0, k * 4 + c) - at(w1, k * 4 + c));
      EXPECT_NEAR(at(out[0], r * 4 + c), want, 1e-5);
    }
}

// A cond inside a while_loop body: the body adds 1 to odd counters and 3 to even ones.
TEST(ControlFlow, CondNestsInsideALoopBody) {
  Graph add_one("odd"), add_three("even");
  for (auto [s, k] : {std::pair{&add_one, 1}, std::pair{&add_three, 3}}) {
    ValueId i = s->add_input("i", i64());
    s->set_outputs({{"i", s->add_op("add", {i, i64_constant(*s, k)})[0]}});
  }
  Graph body("body");
  {
    ValueId i = body.add_input("i", i64());
    ValueId odd = body.add_op("equal", {body.add_op("mod", {i, i64_constant(body, 2)})[0], i64_constant(body, 1)})[0];
    Attrs attrs{{"then_graph", GraphRef{body.add_subgraph(add_one)}}, {"else_graph", GraphRef{body.add_subgraph(add_three)}}};
    body.set_outputs({{"i", body.add_op("cond", {odd, i}, attrs)[0]}});
  }
  Graph predicate("predicate");
  {
    ValueId i = predicate.add_input("i", i64());
    predicate.set_outputs({{"go", predicate.add_op("less", {i, i64_constant(predicate, 10)})[0]}});
  }
  Graph g("main");
  ValueId i = g.add_input("i", i64());
  Attrs attrs{{"predicate", GraphRef{g.add_subgraph(predicate)}}, {"body", GraphRef{g.add_subgraph(body)}}};
  g.set_outputs({{"i", g.add_op("while_loop", {i}, attrs)[0]}});
  // 0 -> 3 -> 4 -> 7 -> 8 -> 11;  1 -> 2 -> 5 -> 6 -> 9 -> 10
  EXPECT_EQ(as_i64(run(g, {scalar_i64(0)})[0]), 11);
  EXPECT_EQ(as_i64(run(g, {scalar_i64(1)})[0]), 10);
  EXPECT_EQ(as_i64(run(g, {scalar_i64(12)})[0]), 12);
}

TEST(ControlFlow, MismatchedSubgraphsAreRefusedAndTheGraphStaysUsable) {
  Graph g = branchy();
  const size_t ops = g.ops().size();
  ValueId p = g.inputs()[0].value, x = g.inputs()[1].value;
  // The branches take one float vector; the op passes two.
  EXPECT_MAXC_ERROR(g.add_op("cond", {p, x, x}, {{"then_graph", GraphRef{0}}, {"else_graph", GraphRef{1}}}),
                    Code::kInvalidArgument, "takes 1 inputs, but the op passes it 2");
  // A predicate that is not a rank-0 bool.
  EXPECT_MAXC_ERROR(g.add_op("cond", {x, x}, {{"then_graph", GraphRef{0}}, {"else_graph", GraphRef{1}}}),
                    Code::kInvalidArgument, "the predicate must be a rank-0 bool");
  // A subgraph index the graph does not have.
  EXPECT_MAXC_ERROR(g.add_op("cond", {p, x}, {{"then_graph", GraphRef{0}}, {"else_graph", GraphRef{7}}}),
                    Code::kInvalidArgument, "refers to subgraph 7");
  // A body whose outputs differ from the loop values: the then branch gives float32[n] for i64.
  EXPECT_MAXC_ERROR(g.add_op("while_loop", {x}, {{"predicate", GraphRef{0}}, {"body", GraphRef{0}}}),
                    Code::kInvalidArgument, "predicate 'then' must give one rank-0 bool");
  EXPECT_EQ(g.ops().size(), ops);
  auto out = run(g, {scalar_bool(false), random_tensor({3}, 1)}, {{"w", random_tensor({1}, 2)}});
  EXPECT_EQ(out[0]->dims(), std::vector<int64_t>{3});
}

TEST(ControlFlow, ALoopBodyErrorFailsTheCallAndTheModelRunsAgain) {
  // body: gather row `i` of a [3] table; the loop walks i past the end unless limit <= 3.
  Graph body("body");
  {
    ValueId i = body.add_input("i", i64());
    ValueId limit = body.add_input("limit", i64());
    ValueId table = body.add_input("table", f32({3}));
    ValueId row = body.add_op("gather", {table, i}, {{"axis", int64_t{0}}})[0];
    ValueId sum = body.add_op("add", {table, row})[0];
    body.set_outputs({{"i", body.add_op("add", {i, i64_constant(body, 1)})[0]}, {"limit", limit}, {"table", sum}});
  }
  Graph predicate("predicate");
  {
    ValueId i = predicate.add_input("i", i64());
    ValueId limit = predicate.add_input("limit", i64());
    predicate.add_input("table", f32({3}));
    predicate.set_outputs({{"go", predicate.add_op("less", {i, limit})[0]}});
  }
  Graph g("main");
  ValueId limit = g.add_input("limit", i64());
  ValueId table = g.add_input("table", f32({3}));
  Attrs attrs{{"predicate", GraphRef{g.add_subgraph(predicate)}}, {"body", GraphRef{g.add_subgraph(body)}}};
  g.set_outputs({{"table", g.add_op("while_loop", {i64_constant(g, 0), limit, table}, attrs)[2]}});
  auto model = Model::create(CompiledModel::compile(Context::create({}), g, CompileSettings{}), NamedTensors{});
  Ref<Tensor> t = random_tensor({3}, 9);
  EXPECT_MAXC_ERROR(model->execute(std::vector<Ref<Tensor>>{scalar_i64(5), t}), Code::kInvalidArgument, "gather");
  auto out = model->execute(std::vector<Ref<Tensor>>{scalar_i64(1), t});
  EXPECT_FLOAT_EQ(at(out[0], 2), at(t, 2) + at(t, 0));
}

}  // namespace
}  // namespace maxc
