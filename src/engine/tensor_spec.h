// MAX's TensorSpec: the name, type and device of a model's input, output or weight.
#pragma once

#include <string>
#include <vector>

#include "base/object.h"
#include "graph/type.h"

namespace maxc {

class TensorSpec : public Object {
 public:
  TensorSpec(std::string name, TensorType type);

  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  // Dim `axis` as a number, or -1 for a symbolic or algebraic dim.
  int64_t dim(size_t axis) const;
  // The text of dim `axis` when it is not static ("batch"), else nullptr.
  const char* dim_name(size_t axis) const;

 private:
  std::string name_;
  TensorType type_;
  std::vector<std::string> dim_names_;  // "" for static dims
};

}  // namespace maxc
