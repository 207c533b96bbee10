"""A BERT-style encoder (BertModel, eager attention) as torch.onnx.export writes it at opset 17:
inputs input_ids and attention_mask, int64 [batch, seq]; output last_hidden_state, float32
[batch, seq, hidden]. Weights are given by their Hugging Face names in torch's layout (Linear
weights [out, in]); the exporter's constant folding stores them transposed, [in, out].

The same graph serves MiniLM-L6 (with its published weights) and BERT-base (random ones).
"""
from dataclasses import dataclass

import numpy as np

from onnx_builder import FLOAT, INT64, OnnxBuilder

MASK_MIN = float(np.finfo(np.float32).min)  # what get_extended_attention_mask multiplies by
LINEARS = ("attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense")


@dataclass(frozen=True)
class EncoderConfig:
    hidden: int = 768
    heads: int = 12
    layers: int = 12
    ffn: int = 3072
    vocab: int = 30522
    max_positions: int = 512
    type_vocab: int = 2
    eps: float = 1e-12


MINILM_L6 = EncoderConfig(hidden=384, heads=12, layers=6, ffn=1536)
BERT_BASE = EncoderConfig()


def weight_shapes(cfg: EncoderConfig) -> dict:
    h = cfg.hidden
    shapes = {"embeddings.word_embeddings.weight": (cfg.vocab, h),
              "embeddings.position_embeddings.weight": (cfg.max_positions, h),
              "embeddings.token_type_embeddings.weight": (cfg.type_vocab, h),
              "embeddings.LayerNorm.weight": (h,), "embeddings.LayerNorm.bias": (h,)}
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."
        dims = dict(zip(LINEARS, [(h, h)] * 4 + [(cfg.ffn, h), (h, cfg.ffn)]))
        for name, (out_f, in_f) in dims.items():
            shapes[p + name + ".weight"] = (out_f, in_f)
            shapes[p + name + ".bias"] = (out_f,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"] = (h,)
            shapes[p + ln + ".bias"] = (h,)
    return shapes


def random_weights(cfg: EncoderConfig, seed: int) -> dict:
    """BERT's initialization (normal, std 0.02; LayerNorm gains near 1): LayerNorm after each
    residual keeps activations near unit scale however deep the stack."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in weight_shapes(cfg).items():
        w = 0.02 * rng.standard_normal(shape, dtype=np.float32)
        weights[name] = w + 1.0 if "LayerNorm.weight" in name else w
    return weights


def build(cfg: EncoderConfig, weights: dict, name: str = "bert"):
    """The exported graph for `weights` (Hugging Face names, torch layout)."""
    b = OnnxBuilder(name)
    ids = b.input("input_ids", INT64, ["batch", "seq"])
    mask = b.input("attention_mask", INT64, ["batch", "seq"])
    x = _embeddings(b, cfg, weights, ids)
    additive = _extended_mask(b, mask)
    for i in range(cfg.layers):
        x = _layer(b, cfg, weights, f"encoder.layer.{i}.", x, additive)
    b.output(x, "last_hidden_state", FLOAT, ["batch", "seq", cfg.hidden])
    return b.model()


def _embeddings(b, cfg, w, ids):
    # position_ids and token_type_ids are registered buffers sliced to the sequence length;
    # the token types are expanded to the batch (input_ids' shape).
    seq = b.op("Unsqueeze", b.dim(ids, 1), b.ints([0]))
    def buffer_slice(name, values):
        return b.op("Slice", b.weight(name, values), b.ints([0]), seq, b.ints([1]), b.ints([1]))
    positions = buffer_slice("embeddings.position_ids",
                             np.arange(cfg.max_positions, dtype=np.int64)[None])
    types = buffer_slice("embeddings.token_type_ids", np.zeros((1, cfg.max_positions), np.int64))
    types = b.op("Expand", types, b.op("Shape", ids))
    def embed(table, index):
        return b.op("Gather", b.weight(f"embeddings.{table}.weight", w[f"embeddings.{table}.weight"]),
                    index, axis=0)
    x = b.op("Add", embed("word_embeddings", ids), embed("token_type_embeddings", types))
    x = b.op("Add", x, embed("position_embeddings", positions))
    return b.layer_norm(x, "embeddings.LayerNorm", w["embeddings.LayerNorm.weight"],
                        w["embeddings.LayerNorm.bias"], cfg.eps)


def _extended_mask(b, mask):
    """(1 - mask[:, None, None, :]) * finfo.min, float32 [batch, 1, 1, seq]."""
    m = b.op("Unsqueeze", b.op("Unsqueeze", mask, b.ints([1])), b.ints([2]))
    m = b.op("Sub", b.const(1.0), b.op("Cast", m, to=FLOAT))
    return b.op("Mul", m, b.const(MASK_MIN))


def _linear(b, w, x, name):
    return b.linear(x, name, w[name + ".weight"].T, w[name + ".bias"])


def _layer(b, cfg, w, p, x, additive):
    head_dim = cfg.hidden // cfg.heads
    q = b.split_heads(_linear(b, w, x, p + "attention.self.query"), cfg.heads, head_dim, (0, 2, 1, 3))
    # key.transpose(-1, -2) after the head split: the exporter fuses the two permutes.
    k = b.split_heads(_linear(b, w, x, p + "attention.self.key"), cfg.heads, head_dim, (0, 2, 3, 1))
    v = b.split_heads(_linear(b, w, x, p + "attention.self.value"), cfg.heads, head_dim, (0, 2, 1, 3))
    scores = b.op("Div", b.op("MatMul", q, k), b.const(np.sqrt(head_dim)))
    probs = b.op("Softmax", b.op("Add", scores, additive), axis=-1)
    context = b.merge_heads(b.op("MatMul", probs, v), cfg.hidden)
    attn = _linear(b, w, context, p + "attention.output.dense")
    x = _norm(b, cfg, w, b.op("Add", attn, x), p + "attention.output.LayerNorm")
    inter = b.gelu_erf(_linear(b, w, x, p + "intermediate.dense"))
    out = _linear(b, w, inter, p + "output.dense")
    return _norm(b, cfg, w, b.op("Add", out, x), p + "output.LayerNorm")


def _norm(b, cfg, w, x, name):
    return b.layer_norm(x, name, w[name + ".weight"], w[name + ".bias"], cfg.eps)


def inputs(cfg: EncoderConfig, batch: int, seq: int, seed: int = 0) -> dict:
    """Token ids with [CLS]-like first tokens; rows after the first are padded at the end
    (shorter by seq/16 each, at most half) so the mask does real work."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(min(1000, cfg.vocab // 2), cfg.vocab, size=(batch, seq), dtype=np.int64)
    ids[:, 0] = min(101, cfg.vocab - 1)
    mask = np.ones((batch, seq), np.int64)
    for row in range(1, batch):
        length = max(seq - row * max(seq // 16, 1), seq // 2)
        mask[row, length:] = 0
        ids[row, length:] = 0
    return {"input_ids": ids, "attention_mask": mask}
