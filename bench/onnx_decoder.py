"""A GPT-2-small-style decoder stack (GPT2Model, eager attention) as torch.onnx.export writes
it at opset 17, run as a prefill: input_ids int64 [batch, seq] -> last_hidden_state float32
[batch, seq, hidden] after the final LayerNorm. The LM head (a [hidden, vocab] MatMul) is
left out: it is one large matmul that says little about the decoder blocks.

Each block: pre-LayerNorm, the fused QKV projection [hidden, 3 hidden] and Split, the causal
mask sliced from a constant lower-triangular bool buffer and applied with Where(mask, scores,
finfo.min), softmax, the output projection, a residual Add, then LayerNorm, the MLP with
GPT-2's tanh GELU, and the second residual Add. GPT-2's Conv1D weights are already [in, out].
"""
from dataclasses import dataclass

import numpy as np

from onnx_builder import FLOAT, INT64, OnnxBuilder


@dataclass(frozen=True)
class DecoderConfig:
    hidden: int = 768
    heads: int = 12
    layers: int = 12
    vocab: int = 50257
    max_positions: int = 1024
    eps: float = 1e-5


GPT2_SMALL = DecoderConfig()


def weight_shapes(cfg: DecoderConfig) -> dict:
    h = cfg.hidden
    shapes = {"wte.weight": (cfg.vocab, h), "wpe.weight": (cfg.max_positions, h),
              "ln_f.weight": (h,), "ln_f.bias": (h,)}
    for i in range(cfg.layers):
        p = f"h.{i}."
        for name, (fan_in, fan_out) in {"attn.c_attn": (h, 3 * h), "attn.c_proj": (h, h),
                                        "mlp.c_fc": (h, 4 * h), "mlp.c_proj": (4 * h, h)}.items():
            shapes[p + name + ".weight"] = (fan_in, fan_out)
            shapes[p + name + ".bias"] = (fan_out,)
        for ln in ("ln_1", "ln_2"):
            shapes[p + ln + ".weight"] = (h,)
            shapes[p + ln + ".bias"] = (h,)
    return shapes


def random_weights(cfg: DecoderConfig, seed: int) -> dict:
    """GPT-2's initialization: normal, std 0.02, the residual projections scaled down by
    sqrt(2 * layers) so the residual stream does not grow with depth."""
    rng = np.random.default_rng(seed)
    residual_std = 0.02 / float(np.sqrt(2 * cfg.layers))  # a Python float keeps float32
    weights = {}
    for name, shape in weight_shapes(cfg).items():
        std = residual_std if name.endswith("c_proj.weight") else 0.02
        w = std * rng.standard_normal(shape, dtype=np.float32)
        is_gain = name.split(".")[-2] in ("ln_1", "ln_2", "ln_f") and name.endswith(".weight")
        weights[name] = w + 1.0 if is_gain else w
    return weights


def build(cfg: DecoderConfig, weights: dict, name: str = "gpt2"):
    b = OnnxBuilder(name)
    ids = b.input("input_ids", INT64, ["batch", "seq"])
    seq = b.dim(ids, 1)
    positions = b.op("Unsqueeze", b.op("Range", b.const(0, np.int64), seq, b.const(1, np.int64)),
                     b.ints([0]))
    x = b.op("Add", b.op("Gather", b.weight("wte.weight", weights["wte.weight"]), ids, axis=0),
             b.op("Gather", b.weight("wpe.weight", weights["wpe.weight"]), positions, axis=0))
    causal = _causal_mask(b, cfg, seq)
    for i in range(cfg.layers):
        x = _block(b, cfg, weights, f"h.{i}.", x, causal)
    x = _norm(b, cfg, weights, x, "ln_f")
    b.output(x, "last_hidden_state", FLOAT, ["batch", "seq", cfg.hidden])
    return b.model()


def _causal_mask(b, cfg, seq):
    """The attn.bias buffer [1, 1, P, P] (lower-triangular bool) sliced to [1, 1, seq, seq]
    (one buffer for all blocks, as the exporter dedupes identical constants)."""
    tril = np.tril(np.ones((cfg.max_positions, cfg.max_positions), bool))[None, None]
    s = b.op("Unsqueeze", seq, b.ints([0]))
    ends = b.op("Concat", s, s, axis=0)
    return b.op("Slice", b.weight("attn.bias", tril), b.ints([0, 0]), ends, b.ints([2, 3]),
                b.ints([1, 1]))


def _linear(b, w, x, name):
    return b.linear(x, name, w[name + ".weight"], w[name + ".bias"])


def _norm(b, cfg, w, x, name):
    return b.layer_norm(x, name, w[name + ".weight"], w[name + ".bias"], cfg.eps)


def _block(b, cfg, w, p, x, causal):
    h, head_dim = cfg.hidden, cfg.hidden // cfg.heads
    qkv = _linear(b, w, _norm(b, cfg, w, x, p + "ln_1"), p + "attn.c_attn")
    q, k, v = b.op("Split", qkv, b.ints([h, h, h]), axis=2, n_out=3)
    q = b.split_heads(q, cfg.heads, head_dim, (0, 2, 1, 3))
    k = b.split_heads(k, cfg.heads, head_dim, (0, 2, 3, 1))
    v = b.split_heads(v, cfg.heads, head_dim, (0, 2, 1, 3))
    scores = b.op("Div", b.op("MatMul", q, k), b.const(np.sqrt(head_dim)))
    scores = b.op("Where", causal, scores, b.const(np.finfo(np.float32).min))
    context = b.merge_heads(b.op("MatMul", b.op("Softmax", scores, axis=-1), v), h)
    x = b.op("Add", _linear(b, w, context, p + "attn.c_proj"), x)
    inner = b.gelu_tanh(_linear(b, w, _norm(b, cfg, w, x, p + "ln_2"), p + "mlp.c_fc"))
    return b.op("Add", x, _linear(b, w, inner, p + "mlp.c_proj"))


def inputs(cfg: DecoderConfig, batch: int, seq: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"input_ids": rng.integers(0, cfg.vocab, size=(batch, seq), dtype=np.int64)}
