"""Real models as they ship (issue 27): each .onnx file of the corpus (bench/real_corpus.py:
PP-OCRv4 detection and recognition, the mobile direction classifier, YOLOv8n, the six silero
VAD exports, the ONNX zoo's light CNNs), loaded unedited with no shape given, run by one
compiled max_c model at every input shape of its entry and compared with ONNX Runtime on the
same file and inputs. The VAD runs ten streaming calls, each engine feeding its own state
back, so a drift that builds up call after call shows. The light zoo models are also held to
the output their test data ships.

The corpus is fetched by scripts/fetch_models.sh (setup.sh runs it); a missing corpus fails
these tests, naming the command. Models max_c cannot run yet are listed in EXPECTED_FAILURES:
their cases are strict xfails, so the day one passes the suite fails until it is taken off the
list. An expected failure must be a max_c error (MaxError); a wrong number fails outright.
"""
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import max_c
from max_c.engine import InferenceSession

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

import real_corpus  # noqa: E402

THREADS = 2

# Model -> why max_c cannot run it yet (issue 27). Edit this list as the engine catches up.
EXPECTED_FAILURES: dict[str, str] = {}


def _param(model):
    reason = EXPECTED_FAILURES.get(model.name)
    marks = [pytest.mark.xfail(strict=True, raises=max_c.MaxError, reason=f"issue 27: {reason}")
             ] if reason else []
    return pytest.param(model, id=model.name, marks=marks)


def test_the_expected_failures_name_corpus_models():
    unknown = set(EXPECTED_FAILURES) - set(real_corpus.MODELS)
    assert not unknown, f"EXPECTED_FAILURES names models the corpus lacks: {sorted(unknown)}"


class Engines:
    """max_c and ONNX Runtime on one file, both at THREADS threads; run(feeds) gives each
    engine's outputs by name."""

    def __init__(self, path: Path):
        self.ours = InferenceSession(num_threads=THREADS).load(path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.log_severity_level = 3  # exporters' unused initializers are not our business
        self.theirs = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [s.name for s in self.ours.input_metadata]
        self.outputs = [s.name for s in self.ours.output_metadata]
        assert sorted(self.inputs) == sorted(i.name for i in self.theirs.get_inputs())
        assert self.outputs == [o.name for o in self.theirs.get_outputs()]

    def run(self, ours_feeds, theirs_feeds):
        ours = self.ours.execute(*[ours_feeds[n] for n in self.inputs])
        theirs = self.theirs.run(self.outputs, theirs_feeds)
        return ({n: t.to_numpy() for n, t in zip(self.outputs, ours)},
                dict(zip(self.outputs, theirs)))


def assert_agree(model, where, ours, theirs):
    for name, want in theirs.items():
        got = ours[name]
        assert got.shape == want.shape, f"{where} output {name!r}: shape {got.shape}, ORT's {want.shape}"
        diff = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
        np.testing.assert_allclose(
            got, want, rtol=model.rtol, atol=model.atol,
            err_msg=f"{where} output {name!r} (max |diff| {diff:.3g}, rtol {model.rtol}, atol {model.atol})")


@pytest.mark.parametrize("model", [_param(m) for m in real_corpus.models()])
def test_max_c_matches_onnxruntime(model):
    engines = Engines(model.path())
    for shape in model.shapes:
        ours_state, theirs_state = {}, {}
        for step in range(shape.steps):
            feeds = shape.feeds(step)
            ours, theirs = engines.run({**feeds, **ours_state}, {**feeds, **theirs_state})
            where = f"{model.name} at {shape.name}" + (f", call {step + 1}" if shape.steps > 1 else "")
            assert_agree(model, where, ours, theirs)
            # Each engine goes on from its own state, as two deployments would.
            ours_state = {i: ours[o] for o, i in model.carry.items()}
            theirs_state = {i: theirs[o] for o, i in model.carry.items()}
        if model.expected_output is not None:
            shipped = dict(zip(engines.outputs, model.expected_output()))
            assert_agree(model, f"{model.name} against its shipped test data", ours, shipped)
