// The graph behind a max_graph_t, with the stable value handles the ABI hands out. A Graph
// numbers its values; the ABI gives out pointers that must stay valid as long as the graph,
// so each value's handle is made on first use and kept here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/object.h"
#include "graph/attrs.h"
#include "graph/graph.h"

namespace maxc::capi {
class GraphObject;
}

struct max_value_t {
  static constexpr uint32_t kMagic = 0x4d56414c;  // "MVAL"
  uint32_t magic = kMagic;
  const maxc::capi::GraphObject* owner;
  maxc::ValueId id;
  std::vector<std::string> dim_texts;  // the dims' canonical text, for max_value_dim
  std::string type_text;
};

namespace maxc::capi {

class GraphObject : public Object {
 public:
  explicit GraphObject(Graph graph) : Object(ObjectKind::kGraph), graph(std::move(graph)) {}

  // The handle of value `id`, made on first use.
  max_value_t* value_handle(ValueId id) const;
  // The value id behind a handle of this graph; INVALID_ARGUMENT for another graph's value.
  ValueId value_id(const max_value_t* value, const std::string& arg) const;

  Graph graph;

 private:
  mutable std::vector<std::unique_ptr<max_value_t>> handles_;
};

class AttrsObject : public Object {
 public:
  AttrsObject() : Object(ObjectKind::kAttrs) {}
  Attrs attrs;
};

}  // namespace maxc::capi
