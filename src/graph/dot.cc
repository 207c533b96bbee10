#include "graph/dot.h"

#include <string_view>

#include "base/str_cat.h"

namespace maxc {
namespace {

// An attribute value shows at most this many characters.
constexpr size_t kMaxAttrText = 48;

// The body of a DOT double-quoted string: quotes and backslashes escaped, newlines as \n.
std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string quoted(std::string_view text) { return "\"" + escape(text) + "\""; }

std::string short_attr(const AttrValue& v) {
  std::string s = attr_to_string(v);
  if (s.size() > kMaxAttrText) s = s.substr(0, kMaxAttrText - 3) + "...";
  return s;
}

class DotWriter {
 public:
  std::string run(const Graph& g) {
    out_ = "digraph " + quoted(g.name()) + " {\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n";
    emit(g, "", "  ");
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // `p` prefixes every node id of this graph, so subgraphs' ids stay distinct.
  void emit(const Graph& g, const std::string& p, const std::string& indent) {
    // Where each value comes from: a node id.
    std::vector<std::string> producer(g.num_values());
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const NamedValue& in = g.inputs()[i];
      std::string id = p + "in" + std::to_string(i);
      producer[in.value] = id;
      out_ += str_cat(indent, id, " [shape=oval, label=", quoted(str_cat(in.name, "\n", g.type(in.value))), "];\n");
    }
    for (size_t k = 0; k < g.ops().size(); ++k) {
      const Op& op = g.ops()[k];
      std::string id = p + "op" + std::to_string(k);
      for (ValueId v : op.outputs) producer[v] = id;
      std::string label, shape = "box";
      if (op.schema->name == "constant") {
        shape = "box3d";
        label = str_cat("constant #", op.attrs.get<int64_t>("index"));
      } else if (op.schema->name == "constant_external") {
        shape = "cylinder";
        label = str_cat("weight '", op.attrs.get<std::string>("name"), "'");
      } else {
        label = op.schema->name;
        if (op.schema->version > 1) label += str_cat(" v", op.schema->version);
        for (const auto& [name, value] : op.attrs) label += str_cat("\n", name, " = ", short_attr(value));
      }
      if (op.outputs.size() != 1 || shape != "box") {
        for (ValueId v : op.outputs) label += str_cat("\n%", v, ": ", g.type(v));
      }
      out_ += str_cat(indent, id, " [shape=", shape, ", label=", quoted(label), "];\n");
      for (size_t i = 0; i < op.inputs.size(); ++i) edge(indent, producer[op.inputs[i]], id, g, op.inputs[i]);
      for (const auto& [name, value] : op.attrs) {
        if (const GraphRef* ref = std::get_if<GraphRef>(&value))
          pending_refs_.push_back({id, p + "g" + std::to_string(ref->index) + "_title", name});
      }
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const NamedValue& out = g.outputs()[i];
      std::string id = p + "out" + std::to_string(i);
      out_ += str_cat(indent, id, " [shape=doubleoctagon, label=", quoted(out.name), "];\n");
      edge(indent, producer[out.value], id, g, out.value);
    }
    for (size_t s = 0; s < g.subgraphs().size(); ++s) {
      const Graph& sub = g.subgraphs()[s];
      std::string sp = p + "g" + std::to_string(s) + "_";
      out_ += str_cat(indent, "subgraph cluster_", sp, " {\n");
      out_ += str_cat(indent, "  label=", quoted(str_cat("subgraph ", s, ": ", sub.name())), ";\n");
      out_ += str_cat(indent, "  style=dashed;\n");
      out_ += str_cat(indent, "  ", sp, "title [shape=plaintext, label=", quoted(sub.name()), "];\n");
      emit(sub, sp, indent + "  ");
      out_ += str_cat(indent, "}\n");
    }
    if (p.empty()) {
      for (const Ref& r : pending_refs_)
        out_ += str_cat(indent, r.from, " -> ", r.to, " [style=dashed, label=", quoted(r.attr), "];\n");
    }
  }

  void edge(const std::string& indent, const std::string& from, const std::string& to, const Graph& g, ValueId v) {
    out_ += str_cat(indent, from, " -> ", to, " [label=", quoted(str_cat("%", v, " ", g.type(v))), "];\n");
  }

  struct Ref {
    std::string from, to, attr;
  };
  std::string out_;
  std::vector<Ref> pending_refs_;
};

}  // namespace

std::string to_dot(const Graph& graph) { return DotWriter().run(graph); }

}  // namespace maxc
