// Layout propagation for CNNs (DESIGN §4): float32 NCHW convolutions (ONNX's layout) run on
// channels-last activations, [N, H, W, C], kept from one convolution to the next instead of
// converted at every convolution.
//
// Why NHWC: oneDNN 2.6 picks its brgconv kernels only for NHWC activations. On ResNet-50's
// 3x3 shapes (one Zen 5 AVX-512 machine, batch 1, weights cold in cache) they beat its jit
// kernel on nChw16c channel blocks, the layout this pass used to keep, by 3-28% (512@14
// stride 2: 0.92 -> 0.66 ms), and by 8-10% at batch 8; 1x1 convolutions tie, and the stem
// over 3 channels gains 20%. Grouped and depthwise convolutions, which on NCHW get only
// im2col + gemm, run 2.5x (ResNeXt's 32 groups) to 20x and more (depthwise: brdgmm_dw)
// faster. Without AVX-512, oneDNN's jit:avx2 kernels read NHWC near the AVX2 peak too (one
// exception measured there: 4 channels per group at 56x56 gets gemm, 2x slower than on NCHW).
//
// The rewrite:
//
//   permute {0,2,3,1}   made where a convolution reads an NCHW value that has no NHWC form
//                       yet, once per value
//   fused_conv2d        input_layout "NHWC", the filter still FCRS (a conv2d becomes a
//                       fused_conv2d with an empty epilogue); it writes the NHWC form of its
//                       output, and its scale and shift stay [C]-like
//   permute {0,3,1,2}   after every node rewritten to NHWC, back into the NCHW value, for the
//                       readers that stay NCHW; dead-code elimination drops those nobody reads
//
// Elementwise nodes whose operands all have NHWC forms (or are one element) follow, and so do
// one-axis reductions (GlobalAveragePool's means over H and W) and the concats and splits of
// such values along any axis (SqueezeNet's fire modules, Inception's and DenseNet's blocks
// join branches along the channels: without them every block left NHWC and came back). The graph's own permutes join
// in: permute {0,3,1,2} of y is a value whose NHWC form is y, and permute {0,2,3,1} of a value
// is its NHWC form, or, where it has one already, a copy of it that goes. So a pool, which
// ONNX imports as NHWC between those two permutes, reads the convolution's output as it is.
//
// Then an NHWC convolution's residual add, and the ReLU after it, join the convolution as
// oneDNN's sum post-op (has_residual, the residual its last input), which reads the residual
// from the destination: the planner may give the output the residual's buffer, so the add
// costs no pass of its own.
//
// Runs after fuse_elementwise, so a residual add + ReLU is one fused_elementwise node.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "compiler/passes.h"
#include "compiler/rewrite.h"

namespace maxc {
namespace {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1};
// Also, at NCHW axis a, the axis of the NHWC form that holds it.
const std::vector<int64_t> kToNchw{0, 3, 1, 2};

bool is_float32_rank4(const TensorType& t) { return t.dtype == DType::kFloat32 && t.rank() == 4; }

TensorType permuted(const TensorType& t, const std::vector<int64_t>& perm) {
  TensorType out = t;
  for (size_t i = 0; i < perm.size(); ++i) out.dims[i] = t.dims[static_cast<size_t>(perm[i])];
  return out;
}

bool is_nchw_conv(const Program& p, const Node& n) {
  if ((n.op != "conv2d" && n.op != "fused_conv2d") || n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  const std::string* layout = string_attr(n, "input_layout");
  return layout && *layout == "NCHW" && is_float32_rank4(p.types[n.inputs[0]]);
}

bool is_scalar(const TensorType& t) {
  const Dim count = t.num_elements();
  return count.is_static() && count.static_value() == 1;
}

// The "axis" of a rank-4 node, normalized (absent: `absent`); nothing when out of range.
std::optional<int64_t> axis_of(const Node& n, std::optional<int64_t> absent = std::nullopt) {
  const AttrValue* v = n.attrs.find("axis");
  const int64_t* axis = v ? std::get_if<int64_t>(v) : nullptr;
  if (!axis) return absent;
  if (*axis < -4 || *axis >= 4) return std::nullopt;
  return *axis < 0 ? *axis + 4 : *axis;
}

// The axis of a one-input sum, mean, max or min; nothing for other nodes.
std::optional<int64_t> reduction_axis(const Node& n) {
  const bool reduction = n.op == "sum" || n.op == "mean" || n.op == "max" || n.op == "min";
  if (!reduction || n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  return axis_of(n);
}

// The axis of a concat or split (both default to 0); nothing for other nodes.
std::optional<int64_t> joining_axis(const Node& n) {
  if ((n.op != "concat" && n.op != "split") || n.inputs.empty() || n.outputs.empty()) return std::nullopt;
  return axis_of(n, 0);
}

class ChannelsLast {
 public:
  explicit ChannelsLast(Program& p) : p_(p) {}

  void run() {
    std::vector<Node> nodes = std::move(p_.nodes);
    p_.nodes.clear();
    for (Node& n : nodes) {
      if (is_nchw_conv(p_, n)) conv_to_nhwc(std::move(n));
      else if (follows_nhwc(n)) elementwise_to_nhwc(std::move(n));
      else if (reduces_nhwc(n)) reduction_to_nhwc(std::move(n));
      else if (joins_nhwc(n)) join_to_nhwc(std::move(n));
      else {
        note_permute(n);
        p_.nodes.push_back(std::move(n));
      }
    }
    std::vector<ValueId> replace = identity_map(p_);
    for (const auto& [from, to] : same_as_) replace[from] = to;
    apply_replacements(p_, replace);
  }

 private:
  // The graph's own permutes between the layouts (see the top). A permute to NHWC of a value
  // with an NHWC form has its readers redirected to that form once every node is placed;
  // else it is the value's NHWC form.
  void note_permute(const Node& n) {
    const ValueId x = n.inputs.empty() ? 0 : n.inputs[0];
    if (is_permute(p_, n, kToNchw) && is_float32_rank4(p_.types[x])) {
      nhwc_.emplace(n.outputs[0], x);
    } else if (is_permute(p_, n, kToNhwc) && is_float32_rank4(p_.types[x])) {
      if (auto it = nhwc_.find(x); it != nhwc_.end()) same_as_.emplace(n.outputs[0], it->second);
      else nhwc_.emplace(x, n.outputs[0]);
    }
  }

  // The NHWC form of v, made now when v has none.
  ValueId nhwc_of(ValueId v) {
    if (auto it = nhwc_.find(v); it != nhwc_.end()) return it->second;
    const ValueId t = p_.new_value(permuted(p_.types[v], kToNhwc));
    p_.nodes.push_back(permute(v, t, kToNhwc));
    nhwc_.emplace(v, t);
    return t;
  }

  static Node permute(ValueId from, ValueId to, const std::vector<int64_t>& dims) {
    Node n{"permute", {from}, {to}, {}, {}, {}};
    n.attrs.set("dims", dims);
    return n;
  }

  ValueId new_nhwc_value(ValueId plain) { return p_.new_value(permuted(p_.types[plain], kToNhwc)); }

  // Emits `n`, which writes the NHWC forms of `plain_outputs`, then the copies back into them.
  void emit_nhwc(Node n, const std::vector<ValueId>& plain_outputs) {
    const std::vector<ValueId> outputs = n.outputs;
    p_.nodes.push_back(std::move(n));
    for (size_t i = 0; i < plain_outputs.size(); ++i) {
      nhwc_.emplace(plain_outputs[i], outputs[i]);
      p_.nodes.push_back(permute(outputs[i], plain_outputs[i], kToNchw));
    }
  }

  void conv_to_nhwc(Node n) {
    if (n.op == "conv2d") {
      n.op = "fused_conv2d";
      n.attrs.set("has_bias", n.inputs.size() == 3);
      n.attrs.set("has_scale", false);
      n.attrs.set("has_shift", false);
      n.attrs.set("activation", std::string("none"));
    }
    n.attrs.set("input_layout", std::string("NHWC"));
    n.inputs[0] = nhwc_of(n.inputs[0]);
    const std::vector<ValueId> plain = n.outputs;
    n.outputs = {new_nhwc_value(plain[0])};
    emit_nhwc(std::move(n), plain);
  }

  // An elementwise node (one op or a fused chain) with float32 rank-4 outputs of one shape,
  // whose every input either has an NHWC form or is one element. An NHWC form may broadcast
  // (a squeeze-and-excitation block's [N, C, 1, 1] scale of a [N, C, H, W] map): the same
  // permutation of both sides broadcasts the same way.
  bool follows_nhwc(const Node& n) const {
    if (n.op != "fused_elementwise" && !(n.steps.empty() && is_elementwise_op(n.op, n.inputs.size()))) return false;
    if (n.outputs.empty() || !is_float32_rank4(p_.types[n.outputs[0]])) return false;
    const std::vector<Dim>& dims = p_.types[n.outputs[0]].dims;
    for (ValueId o : n.outputs)
      if (p_.types[o].dtype != DType::kFloat32 || p_.types[o].dims != dims) return false;
    bool any = false;
    for (ValueId v : n.inputs) {
      if (nhwc_.contains(v)) any = true;
      else if (!is_scalar(p_.types[v])) return false;
    }
    return any;
  }

  void elementwise_to_nhwc(Node n) {
    std::unordered_map<ValueId, ValueId> renamed;
    for (ValueId v : n.inputs)
      if (nhwc_.contains(v)) renamed.emplace(v, nhwc_.at(v));
    // A fused node's steps make values of the outputs' shape: all of them move to NHWC.
    for (const Node& step : n.steps) renamed.emplace(step.outputs.at(0), new_nhwc_value(step.outputs.at(0)));
    for (ValueId o : n.outputs)
      if (!renamed.contains(o)) renamed.emplace(o, new_nhwc_value(o));
    auto rename = [&](std::vector<ValueId>& values) {
      for (ValueId& v : values)
        if (auto it = renamed.find(v); it != renamed.end()) v = it->second;
    };
    const std::vector<ValueId> plain = n.outputs;
    rename(n.inputs);
    rename(n.outputs);
    for (Node& step : n.steps) rename(step.inputs), rename(step.outputs);
    emit_nhwc(std::move(n), plain);
  }

  bool reduces_nhwc(const Node& n) const { return reduction_axis(n) && nhwc_.contains(n.inputs[0]); }

  // The same reduction over the NHWC form, along the axis that holds the NCHW one.
  void reduction_to_nhwc(Node n) {
    n.attrs.set("axis", kToNchw[static_cast<size_t>(*reduction_axis(n))]);
    n.inputs[0] = nhwc_.at(n.inputs[0]);
    const std::vector<ValueId> plain = n.outputs;
    n.outputs = {new_nhwc_value(plain[0])};
    emit_nhwc(std::move(n), plain);
  }

  // A concat of values that all have NHWC forms, or a split of one; float32 rank 4 throughout.
  bool joins_nhwc(const Node& n) const {
    if (!joining_axis(n)) return false;
    for (ValueId v : n.outputs)
      if (!is_float32_rank4(p_.types[v])) return false;
    return std::all_of(n.inputs.begin(), n.inputs.end(), [this](ValueId v) { return nhwc_.contains(v); });
  }

  // The same concat or split over the NHWC forms, along the axis that holds the NCHW one.
  void join_to_nhwc(Node n) {
    n.attrs.set("axis", kToNchw[static_cast<size_t>(*joining_axis(n))]);
    for (ValueId& v : n.inputs) v = nhwc_.at(v);
    const std::vector<ValueId> plain = n.outputs;
    for (ValueId& v : n.outputs) v = new_nhwc_value(v);
    emit_nhwc(std::move(n), plain);
  }

  Program& p_;
  std::unordered_map<ValueId, ValueId> nhwc_;     // NCHW value -> its NHWC form
  std::unordered_map<ValueId, ValueId> same_as_;  // a graph's permute to NHWC -> the form it copies
};

// A residual add of an NHWC convolution's output y that only it reads, by a lone add or a
// fused_elementwise of [add(y, r)] or [add(y, r), relu(.)]; r is not the convolution's input.
struct Residual {
  size_t conv = 0;
  ValueId residual = 0;
  bool relu = false;
};

// oneDNN's direct kernels, which NHWC float32 with an FCRS filter always gets (not the
// matmul of a pointwise RSCF one), take the residual as a post-op.
bool takes_residual(const Program& p, const Node& n) {
  const std::string* layout = string_attr(n, "input_layout");
  const std::string* filter = string_attr(n, "filter_layout");
  const std::string* activation = string_attr(n, "activation");
  const AttrValue* residual = n.attrs.find("has_residual");
  return n.op == "fused_conv2d" && layout && *layout == "NHWC" && filter && *filter == "FCRS" && activation &&
         *activation == "none" && !residual && p.types[n.outputs[0]].dtype == DType::kFloat32;
}

std::optional<Residual> match_residual(const Program& p, const Node& n, const std::vector<int64_t>& producer,
                                       const std::vector<int32_t>& uses) {
  const bool fused = n.op == "fused_elementwise";
  if (n.outputs.size() != 1 || (!fused && n.op != "add")) return std::nullopt;
  const Node& add = fused ? n.steps.front() : n;
  if (add.op != "add" || add.inputs.size() != 2) return std::nullopt;
  if (fused && n.outputs[0] != n.steps.back().outputs.at(0)) return std::nullopt;
  bool relu = false;
  if (fused) {
    if (n.steps.size() > 2) return std::nullopt;
    if (n.steps.size() == 2) {
      const Node& act = n.steps[1];
      if (act.op != "relu" || act.inputs != std::vector<ValueId>{add.outputs[0]}) return std::nullopt;
      relu = true;
    }
  }
  for (int side = 0; side < 2; ++side) {
    const ValueId y = add.inputs[side], r = add.inputs[1 - side];
    const int64_t k = producer[y];
    if (k < 0 || uses[y] != 1 || p.types[y] != p.types[r]) continue;
    const Node& conv = p.nodes[static_cast<size_t>(k)];
    if (!takes_residual(p, conv) || conv.inputs[0] == r) continue;
    return Residual{static_cast<size_t>(k), r, relu};
  }
  return std::nullopt;
}

void fuse_residuals(Program& p) {
  const std::vector<int64_t> producer = producers(p);
  const std::vector<int32_t> uses = use_counts(p);
  std::vector<bool> removed(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    std::optional<Residual> m = match_residual(p, p.nodes[i], producer, uses);
    if (!m || removed[m->conv]) continue;
    Node conv = std::move(p.nodes[m->conv]);
    conv.inputs.push_back(m->residual);
    conv.attrs.set("has_residual", true);
    conv.attrs.set("activation", std::string(m->relu ? "relu" : "none"));
    conv.outputs = p.nodes[i].outputs;
    // The convolution moves to the add's place, where the residual is defined.
    removed[m->conv] = true;
    p.nodes[i] = std::move(conv);
  }
  erase_nodes(p, removed);
}

}  // namespace

void convs_to_channels_last(Program& p) {
  // The rest only follows convolutions: a program without them keeps its layout.
  if (std::none_of(p.nodes.begin(), p.nodes.end(), [&p](const Node& n) { return is_nchw_conv(p, n); })) return;
  ChannelsLast(p).run();
  eliminate_dead_code(p);
  fuse_residuals(p);
}

}  // namespace maxc
