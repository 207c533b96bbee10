// Graphviz DOT export (graph/dot.h).
#include "graph/dot.h"

#include <set>
#include <sstream>

#include "test_helpers.h"

namespace maxc::testing {
namespace {

size_t count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Dot, ContainsEveryNodeAndTypedEdges) {
  Graph g("my \"model\"");
  ValueId x = g.add_input("x", f32({"batch", 4}));
  ValueId c = g.add_constant(Constant::copy_of(f32({4}), pattern(16, 1)));
  ValueId w = g.add_weight("layer.w", f32({"batch", 4}));
  ValueId s = g.add_op("add", {x, c})[0];
  ValueId m = g.add_op("mul", {s, w})[0];
  ValueId cl = g.add_op("clamp", {m}, Attrs{{"min", 0.0}})[0];
  ValueId sm = g.add_op("softmax", {cl}, Attrs{{"axis", int64_t{1}}})[0];
  g.set_outputs({{"probs", sm}});
  Graph sub("body");
  sub.add_input("a", f32({2}));
  g.add_subgraph(sub);

  std::string dot = to_dot(g);
  EXPECT_EQ(dot.rfind("digraph \"my \\\"model\\\"\" {\n", 0), 0u) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_EQ(count(dot, "{"), count(dot, "}"));
  for (const Op& op : g.ops()) {
    if (op.schema->name == "constant" || op.schema->name == "constant_external") continue;
    EXPECT_NE(dot.find("label=\"" + op.schema->name), std::string::npos) << op.schema->name;
  }
  EXPECT_NE(dot.find("constant #0"), std::string::npos);
  EXPECT_NE(dot.find("shape=box3d"), std::string::npos);
  EXPECT_NE(dot.find("weight 'layer.w'"), std::string::npos);
  EXPECT_NE(dot.find("shape=cylinder"), std::string::npos);
  EXPECT_NE(dot.find("axis = 1"), std::string::npos);  // key attributes in the label
  EXPECT_NE(dot.find("min = 0"), std::string::npos);
  EXPECT_NE(dot.find("in0 -> op2 [label=\"%0 tensor<[batch, 4], float32, cpu:0>\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("op5 -> out0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("doubleoctagon, label=\"probs\""), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_g0_"), std::string::npos);
  EXPECT_NE(dot.find("g0_in0 [shape=oval"), std::string::npos);
  // Every edge's ends are declared nodes.
  std::istringstream lines(dot);
  std::set<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> edges;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string a, arrow, b;
    words >> a >> arrow;
    if (arrow == "->") {
      words >> b;
      edges.emplace_back(a, b);
    } else if (arrow.rfind("[", 0) == 0) {
      nodes.insert(a);
    }
  }
  EXPECT_EQ(edges.size(), 7u);  // add 2, mul 2, clamp 1, softmax 1, the output 1
  for (const auto& [a, b] : edges) {
    EXPECT_TRUE(nodes.count(a)) << a;
    EXPECT_TRUE(nodes.count(b)) << b;
  }
}

}  // namespace
}  // namespace maxc::testing
