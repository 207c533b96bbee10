"""The GPU bench (bench/onnx_bench.py --device gpu: max_c against PyTorch on one GPU), checked
where there is no GPU: it refuses cleanly without an accelerator; a GPU case that cannot run
is reported with its reason, ONNX Runtime's CPU run giving the reference outputs; and the
torch peer's device plumbing (weights and
inputs moved once, outputs left on the device) runs on torch's "meta" device. The GPU runs
themselves need a machine with one: `bench/run.sh onnx --device gpu ...`."""
import importlib.util
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import onnx
import pytest

from max_c.driver import accelerator_count

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

import onnx_decoder  # noqa: E402
import onnx_encoder  # noqa: E402
import onnx_mlp  # noqa: E402
import onnx_resnet  # noqa: E402

ENCODER = onnx_encoder.EncoderConfig(hidden=32, heads=4, layers=2, ffn=64, vocab=60, max_positions=24)
DECODER = onnx_decoder.DecoderConfig(hidden=32, heads=4, layers=2, vocab=60, max_positions=24)
MLP_DIMS = (16, 48, 32, 8)
MODELS = {
    "encoder": (lambda: onnx_encoder.build(ENCODER, onnx_encoder.random_weights(ENCODER, 1)),
                lambda: onnx_encoder.inputs(ENCODER, 3, 7)),
    "decoder": (lambda: onnx_decoder.build(DECODER, onnx_decoder.random_weights(DECODER, 1)),
                lambda: onnx_decoder.inputs(DECODER, 2, 5)),
    "mlp": (lambda: onnx_mlp.build(MLP_DIMS, 1), lambda: onnx_mlp.inputs(MLP_DIMS, 5)),
}
no_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                              reason="torch is not installed (the GPU machine's python3 has it)")


def _need_no_accelerator():
    if accelerator_count() > 0:
        pytest.skip("this process sees an accelerator: the refusal is for machines without one")


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, tmp_path_factory):
    make, feeds = MODELS[request.param]
    path = tmp_path_factory.mktemp("gpu-bench") / f"{request.param}.onnx"
    onnx.save(make(), str(path))
    return path, feeds()


def _assert_close(ours, theirs):
    assert [a.shape for a in ours] == [b.shape for b in theirs]
    for a, b in zip(ours, theirs):
        assert np.abs(a - b).max() <= 1e-4 * max(1.0, float(np.abs(b).max()))


# ---- the driver without an accelerator ----------------------------------------------------------


def test_device_gpu_refuses_without_an_accelerator(tmp_path):
    _need_no_accelerator()
    cache = tmp_path / "models"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "onnx_bench.py"), "--device", "gpu", "--cases", "mlp",
         "--batches", "1", "--out", str(tmp_path / "out"), "--cache", str(cache)],
        capture_output=True, text=True, timeout=120, env=_child_env())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("onnx_bench: no accelerator: "), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not cache.exists(), "it refused after generating models"


def _child_env():
    from onnx_worker import child_env
    return child_env()


def test_a_gpu_case_that_cannot_run_is_reported_with_a_reference(tmp_path, capsys):
    """What a GPU machine's run goes through, on a CPU: ONNX Runtime's untimed CPU run gives
    the reference outputs, each GPU peer that cannot run is a row with its reason, and the
    report, JSON and summary come out."""
    _need_no_accelerator()
    import onnx_bench
    import onnx_models
    import onnx_report
    path = tmp_path / "mlp.onnx"
    onnx.save(onnx_mlp.build(MLP_DIMS, 1), str(path))
    case = onnx_models.Case("tiny-mlp", "mlp", None, lambda batch: onnx_mlp.inputs(MLP_DIMS, batch))
    peers = ["max_c"] + (["torch"] if importlib.util.find_spec("torch") else [])
    args = Namespace(device="gpu", reference_only=True, peers=peers, warmup=0, budget=0.1,
                     rounds=1, min_iters=1, pause=0, batches=[2], threads=[1], no_chart=True)
    meta = {"weights": "random", "bytes": path.stat().st_size}
    report = onnx_report.Report(tmp_path, args)
    report.header()
    result = onnx_bench.run_case(args, case, 2, 1, path, meta)
    report.add(result)
    report.finish(chart=False)
    out = capsys.readouterr().out

    ref = result["peers"]["onnxruntime"]
    assert ref["ok"] and ref["reference_only"] and ref["device"] == "cpu"
    ours = result["peers"]["max_c"]
    assert not ours["ok"] and "ccelerator" in ours["error"], ours
    if "torch" in peers:
        assert not result["peers"]["torch"]["ok"]
        assert "CUDA" in result["peers"]["torch"]["error"]
    assert result["targets"] == {} and result["ratio"] == {}
    assert result["problems"] and result["problems"][0].startswith("max_c failed")
    assert "CPU, untimed" in out and "max_c / PyTorch eager on" in out
    assert "tiny-mlp" in (tmp_path / "onnx_bench.json").read_text()


# ---- the torch peer's device plumbing ------------------------------------------------------------


@no_torch
def test_torch_peer_keeps_weights_inputs_and_outputs_on_its_device(model):
    """On "meta" (shapes and devices, no data) a mixed-device op raises as on CUDA: the
    weights and inputs are on the device, the shape math on the host, the outputs on the
    device with the shapes of the CPU run."""
    import torch
    from onnx_torch import TorchOnnxModel
    path, feeds = model
    want = TorchOnnxModel(path)(feeds)
    m = TorchOnnxModel(path, device=torch.device("meta"))
    assert all(v.device.type == "meta" for k, v in m.values.items()
               if k in {t.name for t in onnx.load(str(path)).graph.initializer})
    inputs = m.device_inputs(feeds)
    assert all(t.device.type == "meta" for t in inputs.values())
    outs = m.run(inputs)
    assert [(o.device.type, tuple(o.shape)) for o in outs] == [("meta", w.shape) for w in want]


@no_torch
def test_torch_peer_on_the_cpu_through_the_device_path(model):
    from onnx_torch import TorchOnnxModel
    path, feeds = model
    m = TorchOnnxModel(path, device="cpu")
    got = TorchOnnxModel.outputs_to_numpy(m.run(m.device_inputs(feeds)))
    _assert_close(got, m(feeds))


@no_torch
def test_torch_peer_without_cuda_says_so(tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("torch sees a CUDA device here")
    import onnx_peer
    path = tmp_path / "mlp.onnx"
    onnx.save(onnx_mlp.build(MLP_DIMS, 1), str(path))
    with pytest.raises(RuntimeError, match="sees no CUDA device"):
        onnx_peer.load_torch(path, 1, "gpu", onnx_mlp.inputs(MLP_DIMS, 1))
