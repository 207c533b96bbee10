// Layout propagation for CNNs (DESIGN §4): float32 NCHW convolutions run on activations kept
// in channel blocks of b, [N, C/b, H, W, b] (oneDNN's nChw8c, or nChw16c where its AVX-512
// kernels run: the engine passes the block), from one convolution to the next, instead of
// converting at every convolution. The comments below say 8 for b.
//
// On plain NCHW, oneDNN 2.x runs a 1x1 convolution as a gemm at 58-89 GFLOP/s where its
// direct kernel on channel blocks takes 84-99 (ResNet-50's 1x1 shapes, one thread of the
// AVX2 dev machine), and a spatial one only after copying its input into blocks and its
// result back. Here each eligible convolution reads and writes blocks, and the residual adds
// and ReLUs between them (elementwise nodes whose operands all have the block form) follow:
//
//   to_channel_blocks      (x: [N, C, H, W]) -> [N, C/8, H, W, 8], made where a convolution
//                          reads a value that has no block form yet
//   from_channel_blocks    the inverse, after every blocked node, for the readers that stay
//                          in NCHW; dead-code elimination drops those nobody reads
//   fused_conv2d           input_layout "NCHW8c" (a conv2d becomes a fused_conv2d with an
//                          empty epilogue); scale and shift stay [C]-like. With input
//                          channels that do not divide, the input stays NCHW and
//                          output_layout is "NCHW8c"
//   max/avg_pool2d         between the permutes to NHWC and back that ONNX pools import
//                          as, a pool of blocks: see block_pool()
//
// Then a blocked convolution's residual add, and the ReLU after it, join the convolution as
// oneDNN's sum post-op (has_residual, the residual its last input), which reads the residual
// from the destination: the planner may give the output the residual's buffer, so the add
// costs no pass of its own.
//
// Runs after fuse_elementwise, so a residual add + ReLU is one fused_elementwise node.
#include <optional>
#include <unordered_map>

#include "compiler/passes.h"
#include "compiler/rewrite.h"
#include "base/str_cat.h"

namespace maxc {
namespace {

bool channels_divide(const TensorType& t, int64_t block) {
  return t.dtype == DType::kFloat32 && t.rank() == 4 && t.dims[1].is_static() && t.dims[1].static_value() > 0 &&
         t.dims[1].static_value() % block == 0;
}

TensorType blocked_type(const TensorType& t, int64_t block) {
  TensorType b = t;
  b.dims = {t.dims[0], Dim(t.dims[1].static_value() / block), t.dims[2], t.dims[3], Dim(block)};
  return b;
}

bool is_block_layout(const std::string* layout) { return layout && (*layout == "NCHW8c" || *layout == "NCHW16c"); }

// A float32 NCHW convolution whose output channels divide into blocks; its input is read
// in blocks too when its channels divide (else as it is: a network's first convolution,
// over 3 colour channels, still writes blocks).
bool is_blockable_conv(const Program& p, const Node& n, int64_t block) {
  if ((n.op != "conv2d" && n.op != "fused_conv2d") || n.outputs.size() != 1 || n.inputs.size() < 2) return false;
  const std::string* layout = string_attr(n, "input_layout");
  const AttrValue* groups = n.attrs.find("groups");
  const int64_t* g = groups ? std::get_if<int64_t>(groups) : nullptr;
  const TensorType& x = p.types[n.inputs[0]];
  return layout && *layout == "NCHW" && g && *g == 1 && x.dtype == DType::kFloat32 && x.rank() == 4 &&
         channels_divide(p.types[n.outputs[0]], block);
}

bool is_permute(const Node& n, const std::vector<int64_t>& dims) {
  const AttrValue* v = n.attrs.find("dims");
  const auto* d = v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
  return n.op == "permute" && n.steps.empty() && n.inputs.size() == 1 && d && *d == dims;
}

bool is_scalar(const TensorType& t) {
  const Dim count = t.num_elements();
  return count.is_static() && count.static_value() == 1;
}

class Blocker {
 public:
  Blocker(Program& p, int64_t block) : p_(p), block_(block), layout_(str_cat("NCHW", block, "c")) {}

  void run() {
    const std::vector<int64_t> reader = sole_readers();
    std::vector<Node> nodes = std::move(p_.nodes);
    p_.nodes.clear();
    std::vector<bool> done(nodes.size(), false);
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node& n = nodes[k];
      if (done[k]) continue;
      if (is_blockable_conv(p_, n, block_)) block_conv(std::move(n));
      else if (follows_blocks(n)) block_elementwise(std::move(n));
      else if (!block_pool(nodes, k, reader, done)) p_.nodes.push_back(std::move(n));
    }
  }

 private:
  // For each value, the node that is its only reader (and no program output), or -1.
  std::vector<int64_t> sole_readers() const {
    const std::vector<int32_t> uses = use_counts(p_);
    std::vector<int64_t> reader(p_.types.size(), -1);
    for (size_t k = 0; k < p_.nodes.size(); ++k)
      for (ValueId v : p_.nodes[k].inputs)
        if (uses[v] == 1) reader[v] = static_cast<int64_t>(k);
    return reader;
  }

  // permute to NHWC -> max_pool2d or avg_pool2d -> permute back, over a value with a block
  // form: a pool of [N, C/8, H, W, 8] is the NHWC pool of [N * C/8, H, W, 8], so the pool
  // runs on the blocks, between two reshapes (which copy nothing), and the permutes go.
  // Marks the pool and the second permute done.
  bool block_pool(std::vector<Node>& nodes, size_t k, const std::vector<int64_t>& reader, std::vector<bool>& done) {
    const Node& to_nhwc = nodes[k];
    if (!is_permute(to_nhwc, {0, 2, 3, 1}) || !blocked_.contains(to_nhwc.inputs[0])) return false;
    const int64_t pool_at = reader[to_nhwc.outputs[0]];
    if (pool_at < 0) return false;
    Node& pool = nodes[static_cast<size_t>(pool_at)];
    if ((pool.op != "max_pool2d" && pool.op != "avg_pool2d") || pool.inputs.size() != 1 || pool.outputs.size() != 1)
      return false;
    const int64_t back_at = reader[pool.outputs[0]];
    if (back_at < 0 || !is_permute(nodes[static_cast<size_t>(back_at)], {0, 3, 1, 2})) return false;
    const ValueId out = nodes[static_cast<size_t>(back_at)].outputs[0];
    const TensorType blocks_in = p_.types[blocked_.at(to_nhwc.inputs[0])], pooled = p_.types[pool.outputs[0]];
    const Dim images = blocks_in.dims[0] * blocks_in.dims[1];
    TensorType flat_in = blocks_in, flat_out = pooled;
    flat_in.dims = {images, blocks_in.dims[2], blocks_in.dims[3], Dim(block_)};
    flat_out.dims = {images, pooled.dims[1], pooled.dims[2], Dim(block_)};
    const ValueId a = reshape_to(blocked_.at(to_nhwc.inputs[0]), flat_in);
    const ValueId b = p_.new_value(flat_out);
    p_.nodes.push_back(Node{pool.op, {a}, {b}, pool.attrs, {}});
    Node back{"reshape", {b}, {}, {}, {}};
    back.outputs = {p_.new_value(blocked_type(p_.types[out], block_))};
    back.attrs.set("shape", p_.types[back.outputs[0]].dims);
    emit_blocked(std::move(back), {out});
    done[static_cast<size_t>(pool_at)] = done[static_cast<size_t>(back_at)] = true;
    return true;
  }

  ValueId reshape_to(ValueId v, const TensorType& t) {
    const ValueId r = p_.new_value(t);
    Node n{"reshape", {v}, {r}, {}, {}};
    n.attrs.set("shape", t.dims);
    p_.nodes.push_back(std::move(n));
    return r;
  }

  // The block form of v, made now when v has none.
  ValueId blocks_of(ValueId v) {
    if (auto it = blocked_.find(v); it != blocked_.end()) return it->second;
    const ValueId b = p_.new_value(blocked_type(p_.types[v], block_));
    p_.nodes.push_back(Node{"to_channel_blocks", {v}, {b}, {}, {}});
    blocked_.emplace(v, b);
    return b;
  }

  // Emits `n` writing block forms of its outputs, then the copies back into the NCHW values.
  void emit_blocked(Node n, const std::vector<ValueId>& plain_outputs) {
    const std::vector<ValueId> outputs = n.outputs;
    p_.nodes.push_back(std::move(n));
    for (size_t i = 0; i < plain_outputs.size(); ++i) {
      blocked_.emplace(plain_outputs[i], outputs[i]);
      p_.nodes.push_back(Node{"from_channel_blocks", {outputs[i]}, {plain_outputs[i]}, {}, {}});
    }
  }

  void block_conv(Node n) {
    if (n.op == "conv2d") {
      n.op = "fused_conv2d";
      n.attrs.set("has_bias", n.inputs.size() == 3);
      n.attrs.set("has_scale", false);
      n.attrs.set("has_shift", false);
      n.attrs.set("activation", std::string("none"));
    }
    // Input channels that do not divide stay NCHW; only the output is blocked.
    if (channels_divide(p_.types[n.inputs[0]], block_)) {
      n.attrs.set("input_layout", layout_);
      n.inputs[0] = blocks_of(n.inputs[0]);
    } else {
      n.attrs.set("output_layout", layout_);
    }
    const std::vector<ValueId> plain = n.outputs;
    n.outputs = {p_.new_value(blocked_type(p_.types[plain[0]], block_))};
    emit_blocked(std::move(n), plain);
  }

  // An elementwise node (one op or a fused chain) whose outputs are blockable and whose
  // every input either has a block form of the outputs' dims or is one element.
  bool follows_blocks(const Node& n) const {
    if (n.op != "fused_elementwise" && !(n.steps.empty() && is_elementwise_op(n.op, n.inputs.size()))) return false;
    if (n.outputs.empty() || !channels_divide(p_.types[n.outputs[0]], block_)) return false;
    const std::vector<Dim>& dims = p_.types[n.outputs[0]].dims;
    for (ValueId o : n.outputs)
      if (p_.types[o].dtype != DType::kFloat32 || p_.types[o].dims != dims) return false;
    bool any = false;
    for (ValueId v : n.inputs) {
      if (blocked_.contains(v) && p_.types[v].dims == dims) any = true;
      else if (!is_scalar(p_.types[v])) return false;
    }
    return any;
  }

  void block_elementwise(Node n) {
    std::unordered_map<ValueId, ValueId> renamed;
    auto block_value = [&](ValueId v) { renamed.emplace(v, p_.new_value(blocked_type(p_.types[v], block_))); };
    for (ValueId v : n.inputs)
      if (blocked_.contains(v)) renamed.emplace(v, blocked_.at(v));
    // A fused node's steps make values of the outputs' shape: all of them move to blocks.
    for (const Node& step : n.steps) block_value(step.outputs.at(0));
    for (ValueId o : n.outputs)
      if (!renamed.contains(o)) block_value(o);
    auto rename = [&](std::vector<ValueId>& values) {
      for (ValueId& v : values)
        if (auto it = renamed.find(v); it != renamed.end()) v = it->second;
    };
    const std::vector<ValueId> plain = n.outputs;
    rename(n.inputs);
    rename(n.outputs);
    for (Node& step : n.steps) rename(step.inputs), rename(step.outputs);
    emit_blocked(std::move(n), plain);
  }

  Program& p_;
  int64_t block_;
  std::string layout_;  // "NCHW8c" or "NCHW16c"
  std::unordered_map<ValueId, ValueId> blocked_;  // NCHW value -> its block form
};

// A residual add of a blocked convolution's output y that only it reads, by a lone add or a
// fused_elementwise of [add(y, r)] or [add(y, r), relu(.)]; r is not the convolution's input.
struct Residual {
  size_t conv = 0;
  ValueId residual = 0;
  bool relu = false;
};

bool takes_residual(const Node& n) {
  const std::string* layout = string_attr(n, "input_layout");
  const std::string* activation = string_attr(n, "activation");
  const AttrValue* residual = n.attrs.find("has_residual");
  return n.op == "fused_conv2d" && is_block_layout(layout) && activation && *activation == "none" && !residual;
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
    if (!takes_residual(conv) || conv.inputs[0] == r) continue;
    return Residual{static_cast<size_t>(k), r, relu};
  }
  return std::nullopt;
}

void fuse_block_residuals(Program& p) {
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

void block_conv_channels(Program& p, int64_t block) {
  Blocker(p, block).run();
  eliminate_dead_code(p);
  fuse_block_residuals(p);
}

}  // namespace maxc
