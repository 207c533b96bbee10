// The per-call overhead of max_model_execute (issue 29): small float32 models whose kernels
// take next to no time, run on one thread, so what is timed is the engine's work around
// them (argument checks, plan lookup, binding, output tensors). For each model it prints the
// median and best nanoseconds per call over several rounds, and the C++ heap allocations per
// call (alloc_count.h), and writes them as JSON.
//
//   max_c_overhead [--json PATH] [--calls N] [--rounds R] [--model NAME]
//
// --model runs one model alone: under valgrind --tool=callgrind --toggle-collect=max_model_execute
// the instructions per call are a figure the machine's load does not move.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "abi_model.h"
#include "alloc_count.h"

namespace bench {
namespace {

struct Case {
  std::string name;
  std::string what;
  double median_ns = 0, best_ns = 0, allocations = 0;
};

struct Options {
  std::string json;
  std::string model;  // empty: every model
  long calls = 20000;
  int rounds = 9;
};

// Median and best ns per call over `rounds` rounds of `calls` calls, then the allocations
// of one more round.
void measure(Case& c, const std::function<void()>& fn, const Options& o) {
  for (long i = 0; i < o.calls / 10 + 1; ++i) fn();  // warm-up: plan, workspace, packed weights
  std::vector<double> ns;
  for (int r = 0; r < o.rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < o.calls; ++i) fn();
    const std::chrono::duration<double, std::nano> d = std::chrono::steady_clock::now() - t0;
    ns.push_back(d.count() / static_cast<double>(o.calls));
  }
  std::sort(ns.begin(), ns.end());
  c.median_ns = ns[ns.size() / 2];
  c.best_ns = ns.front();
  const uint64_t before = allocation_count();
  for (long i = 0; i < o.calls; ++i) fn();
  c.allocations = static_cast<double>(allocation_count() - before) / static_cast<double>(o.calls);
}

// `ops` elementwise ops on x: relu, then add x, then mul x, and so on.
max_value_t* chain(GraphBuilder& g, max_value_t* x, int ops) {
  max_value_t* v = x;
  for (int i = 0; i < ops; ++i) {
    if (i % 3 == 0) v = g.op("relu", {v});
    else v = g.op(i % 3 == 1 ? "add" : "mul", {v, x});
  }
  return v;
}

Case elementwise(const Context& ctx, const std::string& name, int ops, bool fuse, const Options& o) {
  GraphBuilder g(name);
  g.output(chain(g, g.input("x", {1, 16}), ops));
  const Model model(ctx, g, {}, {}, fuse);
  const HostTensor x = HostTensor::random({1, 16}, 1.f, 1);
  max_tensor_t* input = borrow(x);
  const std::vector<max_tensor_t*> inputs{input};  // made once: the timed loop allocates nothing of its own
  Case c{name, std::to_string(ops) + " elementwise op(s) on float32[1,16]" + (fuse ? "" : ", fusion off"), 0, 0, 0};
  measure(c, [&] { model.execute(inputs); }, o);
  max_tensor_release(input);
  return c;
}

// relu(x @ w + b) on `rows` rows: one row runs oneDNN's gemv, a few rows our gemm on a packed
// copy of w (engine/lower/linalg.cc), which the model binds once.
Case dense(const Context& ctx, const std::string& name, int64_t rows, const Options& o) {
  GraphBuilder g(name);
  g.output(g.op("relu", {g.op("add", {g.op("matmul", {g.input("x", {rows, 16}), g.weight("w", {16, 16})}),
                                      g.weight("b", {16})})}));
  const HostTensor w = HostTensor::random({16, 16}, 0.1f, 2), b = HostTensor::random({16}, 0.1f, 3);
  const Model model(ctx, g, {"w", "b"}, {&w, &b});
  const HostTensor x = HostTensor::random({rows, 16}, 1.f, 4);
  max_tensor_t* input = borrow(x);
  const std::vector<max_tensor_t*> inputs{input};
  Case c{name, "relu(x @ w + b), float32 [" + std::to_string(rows) + ",16] x [16,16], weights bound", 0, 0, 0};
  measure(c, [&] { model.execute(inputs); }, o);
  max_tensor_release(input);
  return c;
}

void write_json(const std::string& path, const std::vector<Case>& cases, const Options& o) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::fprintf(f, "{\n  \"library\": \"%s\",\n  \"threads\": 1,\n  \"calls_per_round\": %ld,\n  \"rounds\": %d,\n",
               max_version_string(), o.calls, o.rounds);
  std::fprintf(f, "  \"models\": [\n");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"what\": \"%s\", \"median_ns_per_call\": %.1f, \"best_ns_per_call\": %.1f, "
                 "\"allocations_per_call\": %.2f}%s\n",
                 c.name.c_str(), c.what.c_str(), c.median_ns, c.best_ns, c.allocations, i + 1 < cases.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--json") o.json = argv[i + 1];
    else if (flag == "--calls") o.calls = std::max(1L, std::atol(argv[i + 1]));
    else if (flag == "--rounds") o.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--model") o.model = argv[i + 1];
    else throw std::runtime_error("unknown flag " + flag + " (see the comment at the top of bench/overhead.cc)");
  }
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const Context ctx(1);
  const std::vector<std::pair<std::string, std::function<Case()>>> models{
      {"one_op", [&] { return elementwise(ctx, "one_op", 1, true, o); }},
      {"three_ops", [&] { return elementwise(ctx, "three_ops", 3, true, o); }},
      {"chain20", [&] { return elementwise(ctx, "chain20", 20, false, o); }},
      {"dense", [&] { return dense(ctx, "dense", 1, o); }},
      {"dense4", [&] { return dense(ctx, "dense4", 4, o); }},
  };
  std::vector<Case> cases;
  for (const auto& [name, run_model] : models)
    if (o.model.empty() || o.model == name) cases.push_back(run_model());
  if (cases.empty()) throw std::runtime_error("no model named " + o.model);
  std::printf("max_c %s: max_model_execute overhead, 1 thread, median (best) of %d rounds of %ld calls\n",
              max_version_string(), o.rounds, o.calls);
  for (const Case& c : cases)
    std::printf("  %-10s %9.0f ns (%7.0f)  %6.2f allocations/call   %s\n", c.name.c_str(), c.median_ns, c.best_ns,
                c.allocations, c.what.c_str());
  if (!o.json.empty()) write_json(o.json, cases, o);
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  try {
    return bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "max_c_overhead: %s\n", e.what());
    return 1;
  }
}
