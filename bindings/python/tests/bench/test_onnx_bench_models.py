"""The ONNX bench's model generators (bench/onnx_*.py) at tiny sizes: each family's graph,
written as torch.onnx.export writes the real model, imports into max_c and gives what the
ONNX reference evaluator (onnx.reference, always there with onnx) and ONNX Runtime (where
installed) give, at two batch sizes and sequence lengths of one compiled model; on gpu:0 too,
where there is an accelerator (a real GPU, or the emulated one of scripts/test.sh
gpu_emulated). Also the bench's worker protocol (bench/onnx_peer.py through
bench/onnx_worker.py, concurrent callers included) on a tiny file.
This keeps the bench's models importable as the importer and the engine change."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import onnx  # installed by scripts/setup.sh: a missing package fails the suite, never skips it
import pytest
from onnx.reference import ReferenceEvaluator

from max_c.engine import InferenceSession

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

import onnx_decoder  # noqa: E402
import onnx_encoder  # noqa: E402
import onnx_mlp  # noqa: E402
import onnx_resnet  # noqa: E402

ENCODER = onnx_encoder.EncoderConfig(hidden=32, heads=4, layers=2, ffn=64, vocab=60, max_positions=24)
DECODER = onnx_decoder.DecoderConfig(hidden=32, heads=4, layers=2, vocab=60, max_positions=24)
RESNET = onnx_resnet.ResNetConfig(blocks=(1, 1, 1, 1), widths=(4, 4, 8, 8), stem=8, classes=10,
                                  image=32)
MLP_DIMS = (16, 48, 32, 8)

# (model, {batch and seq: inputs}) per family; two shapes each run on one compiled model.
FAMILIES = {
    "encoder": (lambda: onnx_encoder.build(ENCODER, onnx_encoder.random_weights(ENCODER, 1)),
                [onnx_encoder.inputs(ENCODER, b, s) for b, s in ((1, 16), (3, 7))]),
    "decoder": (lambda: onnx_decoder.build(DECODER, onnx_decoder.random_weights(DECODER, 1)),
                [onnx_decoder.inputs(DECODER, b, s) for b, s in ((1, 16), (2, 5))]),
    "resnet": (lambda: onnx_resnet.build(RESNET, 1),
               [onnx_resnet.inputs(RESNET, b) for b in (1, 2)]),
    "mlp": (lambda: onnx_mlp.build(MLP_DIMS, 1), [onnx_mlp.inputs(MLP_DIMS, b) for b in (1, 5)]),
}


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request, tmp_path_factory):
    make, feeds = FAMILIES[request.param]
    path = tmp_path_factory.mktemp("bench-models") / f"{request.param}.onnx"
    onnx.save(make(), str(path))
    return path, feeds


def run_max_c(path, feeds):
    model = InferenceSession(num_threads=1).load(str(path))
    names = [s.name for s in model.input_metadata]
    return [[t.to_numpy() for t in model.execute(*[f[n] for n in names])] for f in feeds]


def run_max_c_on(gpu, path, feeds):
    """The model imported onto `gpu` whole, fed device tensors, its outputs copied back."""
    from max_c.driver import CPU, Tensor
    model = InferenceSession(devices=[CPU(), gpu], num_threads=1).load(str(path), device=gpu)
    names = [s.name for s in model.input_metadata]
    results = []
    for f in feeds:
        outputs = model.execute(*[Tensor.from_numpy(np.ascontiguousarray(f[n])).to(gpu) for n in names])
        assert all(not t.device.is_host for t in outputs), "an output came back on the host"
        results.append([t.to(CPU()).to_numpy() for t in outputs])
    return results


def assert_close(ours, theirs, what):
    for got, want in zip(ours, theirs):
        for g, w in zip(got, want):
            assert g.shape == w.shape, what
            scale = max(1.0, float(np.abs(w).max()))
            assert np.abs(g - w).max() <= 1e-4 * scale, (
                f"{what}: max |diff| {np.abs(g - w).max():.3g} (scale {scale:.3g})")


def test_graphs_are_valid_onnx(family):
    path, _ = family
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)


def test_max_c_matches_the_reference_evaluator(family):
    path, feeds = family
    reference = ReferenceEvaluator(str(path))
    want = [reference.run(None, f) for f in feeds]
    assert_close(run_max_c(path, feeds), want, f"{path.name}: max_c vs onnx.reference")


def test_max_c_on_the_gpu_matches_the_reference_evaluator(family, gpu):
    path, feeds = family
    reference = ReferenceEvaluator(str(path))
    want = [reference.run(None, f) for f in feeds]
    assert_close(run_max_c_on(gpu, path, feeds), want, f"{path.name} on gpu:0: max_c vs onnx.reference")


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None,
                    reason="onnxruntime is not installed (bench/run.sh installs it)")
def test_max_c_matches_onnxruntime(family):
    import onnxruntime as ort
    path, feeds = family
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = [session.run(None, f) for f in feeds]
    assert_close(run_max_c(path, feeds), want, f"{path.name}: max_c vs ONNX Runtime")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_peer_matches_the_reference_evaluator(family):
    from onnx_torch import TorchOnnxModel
    path, feeds = family
    reference = ReferenceEvaluator(str(path))
    model = TorchOnnxModel(path)
    assert_close([model(f) for f in feeds], [reference.run(None, f) for f in feeds],
                 f"{path.name}: the torch peer vs onnx.reference")


def test_peer_worker_protocol(tmp_path):
    from onnx_worker import PeerError, Worker
    path = tmp_path / "mlp.onnx"
    onnx.save(onnx_mlp.build(MLP_DIMS, 1), str(path))
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, **onnx_mlp.inputs(MLP_DIMS, 2))
    w = Worker("max_c", path, inputs, tmp_path / "out.npz", threads=1, warmup=1)
    try:
        ready = w.read(120)
        assert ready["outputs"] == ["y"] and ready["load_ms"] > 0
        assert len(w.ask("run 0 3", 60)["times_ms"]) == 3
        # The contention bench's concurrent callers: every call of every thread is timed.
        clients = w.ask("clients 4 0.2", 60)
        assert clients["calls"] == len(clients["times_ms"]) >= 4
        assert clients["seconds"] >= 0.2 and min(clients["times_ms"]) > 0
        assert w.ask("quit", 60)["peak_mb"] >= 0
    finally:
        w.close()
    want = ReferenceEvaluator(str(path)).run(None, dict(np.load(inputs)))[0]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["out0"], want, rtol=1e-4, atol=1e-4)
    bad = Worker("max_c", tmp_path / "missing.onnx", inputs, tmp_path / "o.npz", 1, 1)
    try:
        with pytest.raises(PeerError, match="missing.onnx"):
            bad.read(120)
    finally:
        bad.close()
