"""LSTM, GRU and RNN over a sequence length the file leaves symbolic (or a static one too long
to unroll), which max_c runs as a while_loop per direction, against ONNX Runtime at several
lengths: forward, reverse and bidirectional, with and without initial states, biases,
peepholes, sequence_lens and layout 1."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from max_c.engine import InferenceSession

F32, I32 = TensorProto.FLOAT, TensorProto.INT32
HIDDEN, FEATURES = 5, 3
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def weights(op, dirs, seed):
    rng = np.random.default_rng(seed)
    g = GATES[op]
    w = {
        "W": rng.standard_normal((dirs, g * HIDDEN, FEATURES)).astype(np.float32) * 0.5,
        "R": rng.standard_normal((dirs, g * HIDDEN, HIDDEN)).astype(np.float32) * 0.5,
        "B": rng.standard_normal((dirs, 2 * g * HIDDEN)).astype(np.float32) * 0.5,
    }
    if op == "LSTM":
        w["P"] = rng.standard_normal((dirs, 3 * HIDDEN)).astype(np.float32) * 0.5
    return w


def model(tmp_path, op, direction="forward", *, states=False, lens=False, layout=0, seq="S", **attrs):
    """X [S, B, I] (layout 1: [B, S, I]) with S = `seq`; every output wanted."""
    dirs = 2 if direction == "bidirectional" else 1
    w = weights(op, dirs, seed=len(op) + dirs)
    batch_first = layout == 1
    x_shape = ["B", seq, FEATURES] if batch_first else [seq, "B", FEATURES]
    state_shape = ["B", dirs, HIDDEN] if batch_first else [dirs, "B", HIDDEN]
    inputs = [helper.make_tensor_value_info("X", F32, x_shape)]
    names = ["X", "W", "R", "B", "", "", "", ""][: 8 if op == "LSTM" else 6]
    if lens:
        inputs.append(helper.make_tensor_value_info("lens", I32, ["B"]))
        names[4] = "lens"
    if states:
        inputs.append(helper.make_tensor_value_info("h0", F32, state_shape))
        names[5] = "h0"
        if op == "LSTM":
            inputs.append(helper.make_tensor_value_info("c0", F32, state_shape))
            names[6] = "c0"
    if op == "LSTM":
        names[7] = "P"
    while names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h", "Y_c"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(op, names, outs, hidden_size=HIDDEN, direction=direction, layout=layout, **attrs)
    graph = helper.make_graph([node], f"{op}_{direction}", inputs,
                              [helper.make_tensor_value_info(o, F32, None) for o in outs],
                              initializer=[numpy_helper.from_array(v, k) for k, v in w.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    path = tmp_path / f"{op}_{direction}_{states}_{lens}_{layout}.onnx"
    onnx.save(m, str(path))
    return str(path)


def feeds(op, direction, steps, batch, *, states=False, lens=False, layout=0):
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(steps * 10 + batch)
    x = rng.standard_normal((steps, batch, FEATURES)).astype(np.float32)
    f = {"X": x.transpose(1, 0, 2).copy() if layout == 1 else x}
    if lens:
        f["lens"] = rng.integers(0, steps + 1, size=batch).astype(np.int32)
        f["lens"][0] = steps
    if states:
        for name in ["h0", "c0"] if op == "LSTM" else ["h0"]:
            s = rng.standard_normal((dirs, batch, HIDDEN)).astype(np.float32)
            f[name] = s.transpose(1, 0, 2).copy() if layout == 1 else s
    return f


def check(path, runs):
    ours = InferenceSession(num_threads=1).load(path)
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for f in runs:
        want = theirs.run(None, f)
        got = [t.to_numpy() for t in ours(**f)]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


LENGTHS = [(1, 2), (7, 3), (40, 1)]  # (steps, batch)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_symbolic_sequence_length(tmp_path, op, direction):
    path = model(tmp_path, op, direction)
    check(path, [feeds(op, direction, s, b) for s, b in LENGTHS])


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_symbolic_sequence_with_initial_states(tmp_path, op):
    path = model(tmp_path, op, "bidirectional", states=True)
    check(path, [feeds(op, "bidirectional", s, b, states=True) for s, b in LENGTHS])


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_symbolic_sequence_in_layout_1(tmp_path, op):
    """ONNX Runtime's CPU kernels refuse layout 1, so its answer is the layout-0 model's on
    the same data, moved to the batch-first axes."""
    ours = InferenceSession(num_threads=1).load(model(tmp_path, op, "bidirectional", states=True, layout=1))
    theirs = ort.InferenceSession(model(tmp_path, op, "bidirectional", states=True),
                                  providers=["CPUExecutionProvider"])
    for s, b in LENGTHS:
        f = feeds(op, "bidirectional", s, b, states=True)
        want = theirs.run(None, f)
        batch_first = {k: v.transpose(1, 0, 2).copy() for k, v in f.items()}
        got = [t.to_numpy() for t in ours(**batch_first)]
        np.testing.assert_allclose(got[0], want[0].transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_symbolic_sequence_with_sequence_lens(tmp_path, op, direction):
    """Entries shorter than the sequence keep their state past their length, output zeros
    there, and a reverse pass starts at their last step; an empty entry ends in zeros."""
    path = model(tmp_path, op, direction, states=True, lens=True)
    check(path, [feeds(op, direction, s, b, states=True, lens=True) for s, b in [(6, 4), (9, 3), (2, 5)]])


def test_gru_linear_before_reset_and_clip_over_a_symbolic_sequence(tmp_path):
    path = model(tmp_path, "GRU", "bidirectional", states=True, linear_before_reset=1, clip=0.7)
    check(path, [feeds("GRU", "bidirectional", s, b, states=True) for s, b in LENGTHS])


def test_lstm_with_activations_over_a_symbolic_sequence(tmp_path):
    path = model(tmp_path, "LSTM", "forward", activations=["HardSigmoid", "LeakyRelu", "Softsign"],
                 activation_alpha=[0.3, 0.2], activation_beta=[0.4])
    check(path, [feeds("LSTM", "forward", s, b) for s, b in LENGTHS])


def test_a_static_sequence_too_long_to_unroll_runs_as_a_loop(tmp_path):
    """3000 steps were RESOURCE_EXHAUSTED while every recurrence was unrolled (at most 1024)."""
    path = model(tmp_path, "LSTM", "bidirectional", seq=3000)
    check(path, [feeds("LSTM", "bidirectional", 3000, 2)])


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_short_static_sequences_still_match(tmp_path, op):
    """The unrolled form, kept for short static lengths."""
    path = model(tmp_path, op, "bidirectional", states=True, lens=True, seq=4)
    check(path, [feeds(op, "bidirectional", 4, 3, states=True, lens=True)])
