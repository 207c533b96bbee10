"""An independent float64 numpy forward pass of all-MiniLM-L6-v2 (BERT encoder, mean pooling,
L2 normalization), for checking max_c against. It shares no code with
examples/python/minilm.py: its own safetensors reading, its own config handling, and a
differently written attention mask (masked scores set to -inf instead of an additive bias).
"""
import json
import math
import struct
from pathlib import Path

import numpy as np

_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path) -> dict:
    """{name: float64 or int array}, each tensor read with its own np.fromfile."""
    path = Path(path)
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n).decode("utf-8"))
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, stop = meta["data_offsets"]
        dt = np.dtype(_DTYPES[meta["dtype"]])
        arr = np.fromfile(path, dtype=dt, count=(stop - start) // dt.itemsize, offset=8 + n + start)
        arr = arr.reshape(meta["shape"])
        tensors[name] = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    return tensors


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    """BERT's exact gelu: x/2 (1 + erf(x/√2)), erf from the math module."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class MiniLMReference:
    def __init__(self, model_dir):
        model_dir = Path(model_dir)
        self.cfg = json.loads((model_dir / "config.json").read_text())
        modules = json.loads((model_dir / "modules.json").read_text())
        self.normalize = any(m["type"].endswith("Normalize") for m in modules)
        self.t = read_safetensors(model_dir / "model.safetensors")

    def _dense(self, x, name):
        return x @ self.t[name + ".weight"].T + self.t[name + ".bias"]

    def _ln(self, x, name):
        return layer_norm(x, self.t[name + ".weight"], self.t[name + ".bias"],
                          self.cfg["layer_norm_eps"])

    def hidden_states(self, input_ids, attention_mask):
        """The encoder's last hidden state, float64 [batch, seq, hidden]."""
        t, cfg = self.t, self.cfg
        ids = np.asarray(input_ids)
        keep = np.asarray(attention_mask).astype(bool)
        b, s = ids.shape
        nh = cfg["num_attention_heads"]
        hd = cfg["hidden_size"] // nh
        x = (t["embeddings.word_embeddings.weight"][ids]
             + t["embeddings.position_embeddings.weight"][np.arange(s)][None]
             + t["embeddings.token_type_embeddings.weight"][np.zeros_like(ids)])
        x = self._ln(x, "embeddings.LayerNorm")
        key_ok = keep[:, None, None, :]  # [b, 1, 1, s]: which keys each query may see
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def heads(y):
                return y.reshape(b, s, nh, hd).transpose(0, 2, 1, 3)

            q = heads(self._dense(x, p + "attention.self.query"))
            k = heads(self._dense(x, p + "attention.self.key"))
            v = heads(self._dense(x, p + "attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(hd)
            probs = softmax(np.where(key_ok, scores, -np.inf))
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, -1)
            x = self._ln(self._dense(ctx, p + "attention.output.dense") + x,
                         p + "attention.output.LayerNorm")
            inter = gelu(self._dense(x, p + "intermediate.dense"))
            x = self._ln(self._dense(inter, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def embed(self, input_ids, attention_mask):
        """Sentence embeddings, float64 [batch, hidden]: the mean of the kept tokens' hidden
        states, L2-normalized when modules.json lists Normalize."""
        x = self.hidden_states(input_ids, attention_mask)
        keep = np.asarray(attention_mask).astype(np.float64)
        out = np.einsum("bsh,bs->bh", x, keep) / keep.sum(axis=1, keepdims=True)
        if self.normalize:
            out = out / np.linalg.norm(out, axis=1, keepdims=True)
        return out
