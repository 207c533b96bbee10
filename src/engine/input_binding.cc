#include "engine/input_binding.h"

#include "driver/device.h"

namespace maxc {

namespace {

std::string input_label(const Program& p, size_t i) { return str_cat("input ", i, " '", p.inputs[i].name, "'"); }

struct Binder {
  const Program& p;
  const Device& device;
  SymbolValues values;

  void check_tensor(size_t i, const Tensor& t) {
    const TensorType& want = p.types[p.inputs[i].value];
    if (t.device().get() != &device)
      fail(Code::kInvalidArgument, input_label(p, i), " is on ", t.device()->name(), " but the model runs on ",
           device.name(), "; copy it there first (or compile with copy_inputs_to_device)");
    if (t.dtype() != want.dtype)
      fail(Code::kInvalidArgument, input_label(p, i), ": dtype is ", dtype_name(t.dtype()),
           " but the model expects ", dtype_name(want.dtype));
    if (t.rank() != want.rank())
      fail(Code::kInvalidArgument, input_label(p, i), ": rank is ", t.rank(), " (shape ",
           dims_to_string(t.dims()), ") but the model expects ", want.rank(), " (", dims_to_string(want.dims), ")");
  }

  void bind_plain_dims(size_t i, const Tensor& t) {
    const TensorType& want = p.types[p.inputs[i].value];
    for (size_t a = 0; a < want.dims.size(); ++a) {
      const Dim& d = want.dims[a];
      const int64_t got = t.dims()[a];
      if (d.is_static()) {
        if (got != d.static_value())
          fail(Code::kInvalidArgument, input_label(p, i), ": dim ", a, " is ", got, " but the model expects ",
               d.static_value(), " (shape ", dims_to_string(t.dims()), ", expected ", dims_to_string(want.dims), ")");
      } else if (d.is_symbolic()) {
        bind(i, a, d.symbol(), got);
      }
    }
  }

  void bind(size_t i, size_t axis, const std::string& symbol, int64_t got) {
    auto [it, fresh] = values.emplace(symbol, got);
    if (!fresh && it->second != got)
      fail(Code::kInvalidArgument, input_label(p, i), ": dim ", axis, " is ", got, " but '", symbol, "' is ",
           it->second, " (from ", first_binding(symbol), ")");
  }

  // Where `symbol` got its value: the first plain dim that names it, in input order, as
  // bind_plain_dims meets them. Spelled only for an error, so a call that binds well builds
  // no text.
  std::string first_binding(const std::string& symbol) const {
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      const std::vector<Dim>& dims = p.types[p.inputs[i].value].dims;
      for (size_t a = 0; a < dims.size(); ++a)
        if (dims[a].is_symbolic() && dims[a].symbol() == symbol) return str_cat(input_label(p, i), " dim ", a);
    }
    return "?";
  }

  // Dims like "seq + 1": every symbol must already be bound by a plain dim somewhere.
  void check_expressions(size_t i, const Tensor& t) {
    const TensorType& want = p.types[p.inputs[i].value];
    for (size_t a = 0; a < want.dims.size(); ++a) {
      const Dim& d = want.dims[a];
      if (d.is_static() || d.is_symbolic()) continue;
      for (const auto& s : d.symbols())
        if (!values.contains(s))
          fail(Code::kInvalidArgument, input_label(p, i), ": dim ", a, " is '", d,
               "' and no input dim is '", s, "' alone, so its value is unknown");
      if (d.evaluate(values) != t.dims()[a])
        fail(Code::kInvalidArgument, input_label(p, i), ": dim ", a, " is ", t.dims()[a], " but '", d, "' is ",
             d.evaluate(values), " for these inputs");
    }
  }
};

}  // namespace

SymbolValues bind_inputs(const Program& p, std::span<const Ref<Tensor>> inputs, const Device& device) {
  if (inputs.size() != p.inputs.size()) {
    std::string names;
    for (const auto& in : p.inputs) names += (names.empty() ? "" : ", ") + in.name;
    fail(Code::kInvalidArgument, "the model takes ", p.inputs.size(), " input(s) (", names, ") but got ",
         inputs.size());
  }
  Binder b{p, device, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) fail(Code::kInvalidArgument, input_label(p, i), " is NULL");
    b.check_tensor(i, *inputs[i]);
    b.bind_plain_dims(i, *inputs[i]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) b.check_expressions(i, *inputs[i]);
  return std::move(b.values);
}

}  // namespace maxc
