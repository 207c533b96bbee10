// The optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum), composed elementwise
// from our arithmetic. Each takes a scalar learning rate R and step count T, then its tensor
// groups (X..., G..., and one or two state groups), and gives the new X... then the new
// state groups, one update per tensor of a group, as ONNX's reference does:
//   Adagrad:  g = norm_coefficient * x + g; h' = h + g^2;
//             x' = x - R / (1 + T * decay_factor) * g / (sqrt(h') + epsilon)
//   Adam:     g = norm_coefficient * x + g; v' = alpha * v + (1 - alpha) * g;
//             h' = beta * h + (1 - beta) * g^2;
//             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             x' = (1 - norm_coefficient_post) * (x - r * v' / (sqrt(h') + epsilon))
//   Momentum: g = norm_coefficient * x + g; v' = alpha * v + (T > 0 ? beta : 1) * g;
//             x' = x - R * v' (standard) or x - R * (g + alpha * v') (nesterov)
// The scalar coefficients are computed in R's type and cast to each X's.
#include <string>
#include <vector>

#include "onnx/node_context.h"

namespace maxc::onnx {
namespace {

struct Groups {
  size_t n = 0;  // tensors per group
  // The i-th tensor of group g (0: X, 1: G, then the states).
  size_t at(size_t g, size_t i) const { return 2 + g * n + i; }
};

// Checks the variadic layout: R, T, then `groups` groups of n tensors each, and the outputs
// as `groups - 1` groups (X and the states; G has no output).
Groups check_groups(NodeContext& c, size_t groups) {
  const size_t in = c.num_inputs();
  if (in < 2 + groups || (in - 2) % groups != 0)
    c.invalid("expects R, T and ", groups, " groups of equally many tensors, got ", in, " inputs");
  Groups g{(in - 2) / groups};
  if (c.num_outputs() > (groups - 1) * g.n)
    c.invalid("has ", c.num_outputs(), " outputs; at most ", (groups - 1) * g.n, " for ", g.n, " tensor(s) per group");
  for (size_t i = 0; i < in; ++i)
    if (!c.has_input(i)) c.invalid("input ", i, " is missing (every input is required)");
  const DType r = c.dtype(0);
  if (r != DType::kFloat32 && r != DType::kFloat64) c.unsupported("R of ", dtype_name(r), " (float32/64 only)");
  if (!dtype_is_integral(c.dtype(1)) || c.dtype(1) == DType::kBool)
    c.invalid("T must be an integer, got ", dtype_name(c.dtype(1)));
  for (size_t i = 2; i < in; ++i) {
    const DType d = c.dtype(i);
    if (d != DType::kFloat32 && d != DType::kFloat64) c.unsupported("input ", i, " of ", dtype_name(d), " (float32/64 only)");
  }
  return g;
}

// T as R's type, and whether T > 0.
ValueId step(NodeContext& c) { return c.cast(c.input(1), c.dtype(0)); }
ValueId step_positive(NodeContext& c) { return c.op("greater", {c.input(1), c.scalar(c.dtype(1), 0)}); }

float required_float(NodeContext& c, const char* name) {
  if (!c.attr(name)) c.invalid("attribute '", name, "' is required");
  return c.attr_float(name, 0);
}

// norm_coefficient * x + g, in x's type.
ValueId regularized(NodeContext& c, ValueId x, ValueId g, double norm) {
  const DType dt = c.type_of(x).dtype;
  return c.op("add", {c.op("mul", {c.scalar(dt, norm), x}), c.cast(g, dt)});
}

void import_adagrad(NodeContext& c) {
  const Groups g = check_groups(c, 3);
  const double decay = c.attr_float("decay_factor", 0), eps = c.attr_float("epsilon", 0),
               norm = c.attr_float("norm_coefficient", 0);
  const DType rt = c.dtype(0);
  // R / (1 + T * decay_factor)
  const ValueId rate = c.op("div", {c.input(0), c.op("add", {c.scalar(rt, 1), c.op("mul", {step(c), c.scalar(rt, decay)})})});
  for (size_t i = 0; i < g.n; ++i) {
    const ValueId x = c.input(g.at(0, i));
    const DType dt = c.type_of(x).dtype;
    const ValueId grad = regularized(c, x, c.input(g.at(1, i)), norm);
    const ValueId h = c.cast(c.input(g.at(2, i)), dt);
    const ValueId h_new = c.op("add", {h, c.op("mul", {grad, grad})});
    const ValueId denom = c.op("add", {c.op("sqrt", {h_new}), c.scalar(dt, eps)});
    const ValueId x_new = c.op("sub", {x, c.op("div", {c.op("mul", {c.cast(rate, dt), grad}), denom})});
    c.set_output(i, x_new);
    c.set_output(g.n + i, c.cast(h_new, c.dtype(g.at(2, i))));
  }
}

void import_adam(NodeContext& c) {
  const Groups g = check_groups(c, 4);
  const double alpha = c.attr_float("alpha", 0.9f), beta = c.attr_float("beta", 0.999f),
               eps = c.attr_float("epsilon", 0), norm = c.attr_float("norm_coefficient", 0),
               post = c.attr_float("norm_coefficient_post", 0);
  const DType rt = c.dtype(0);
  const ValueId t = step(c), one = c.scalar(rt, 1);
  // R * sqrt(1 - beta^T) / (1 - alpha^T) for T > 0, else R (the division by 0 at T = 0 is
  // in the branch not taken).
  const ValueId corrected =
      c.op("div", {c.op("mul", {c.input(0), c.op("sqrt", {c.op("sub", {one, c.op("pow", {c.scalar(rt, beta), t})})})}),
                   c.op("sub", {one, c.op("pow", {c.scalar(rt, alpha), t})})});
  const ValueId rate = c.op("where", {step_positive(c), corrected, c.input(0)});
  for (size_t i = 0; i < g.n; ++i) {
    const ValueId x = c.input(g.at(0, i));
    const DType dt = c.type_of(x).dtype;
    const ValueId grad = regularized(c, x, c.input(g.at(1, i)), norm);
    const ValueId v = c.cast(c.input(g.at(2, i)), dt), h = c.cast(c.input(g.at(3, i)), dt);
    const ValueId v_new = c.op("add", {c.op("mul", {c.scalar(dt, alpha), v}), c.op("mul", {c.scalar(dt, 1 - alpha), grad})});
    const ValueId h_new =
        c.op("add", {c.op("mul", {c.scalar(dt, beta), h}), c.op("mul", {c.scalar(dt, 1 - beta), c.op("mul", {grad, grad})})});
    const ValueId denom = c.op("add", {c.op("sqrt", {h_new}), c.scalar(dt, eps)});
    ValueId x_new = c.op("sub", {x, c.op("mul", {c.cast(rate, dt), c.op("div", {v_new, denom})})});
    if (post != 0) x_new = c.op("mul", {c.scalar(dt, 1 - post), x_new});
    c.set_output(i, x_new);
    c.set_output(g.n + i, c.cast(v_new, c.dtype(g.at(2, i))));
    c.set_output(2 * g.n + i, c.cast(h_new, c.dtype(g.at(3, i))));
  }
}

void import_momentum(NodeContext& c) {
  const Groups g = check_groups(c, 3);
  const double alpha = required_float(c, "alpha"), beta = required_float(c, "beta"),
               norm = required_float(c, "norm_coefficient");
  if (!c.attr("mode")) c.invalid("attribute 'mode' is required");
  const std::string mode = c.attr_string("mode", "");
  if (mode != "standard" && mode != "nesterov") c.invalid("mode must be 'standard' or 'nesterov', got '", mode, "'");
  const DType rt = c.dtype(0);
  // The gradient's coefficient is 1 at the first step (T = 0).
  const ValueId beta_t = c.op("where", {step_positive(c), c.scalar(rt, beta), c.scalar(rt, 1)});
  for (size_t i = 0; i < g.n; ++i) {
    const ValueId x = c.input(g.at(0, i));
    const DType dt = c.type_of(x).dtype;
    const ValueId grad = regularized(c, x, c.input(g.at(1, i)), norm);
    const ValueId v = c.cast(c.input(g.at(2, i)), dt);
    const ValueId v_new = c.op("add", {c.op("mul", {c.scalar(dt, alpha), v}), c.op("mul", {c.cast(beta_t, dt), grad})});
    const ValueId move = mode == "standard" ? v_new : c.op("add", {grad, c.op("mul", {c.scalar(dt, alpha), v_new})});
    c.set_output(i, c.op("sub", {x, c.op("mul", {c.cast(c.input(0), dt), move})}));
    c.set_output(g.n + i, c.cast(v_new, c.dtype(g.at(2, i))));
  }
}

}  // namespace

void register_training_importers(ImportTable& t) {
  t["ai.onnx.preview.training.Adagrad"] = import_adagrad;
  t["ai.onnx.preview.training.Adam"] = import_adam;
  t["ai.onnx.preview.training.Momentum"] = import_momentum;
}

}  // namespace maxc::onnx
