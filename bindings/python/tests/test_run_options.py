"""RunOptions (ABI 1.8): a timeout and a terminate flag, as onnxruntime's RunOptions, stop a
Model.execute between steps and between loop iterations. The model that needs them: an ONNX
Loop whose trip count (4.6e15, from the file) would run for ever, found by the fuzzer."""
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from max_c import _errors
from max_c.engine import InferenceSession, RunOptions

I64, F32, BOOL = TensorProto.INT64, TensorProto.FLOAT, TensorProto.BOOL
ENDLESS = 4_600_000_000_000_000


@pytest.fixture(scope="module")
def endless_loop(tmp_path_factory):
    """v = v0; repeat M times (M an initializer, or the input m): v = v + 1."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", BOOL, []),
         helper.make_tensor_value_info("v_in", F32, [])],
        [helper.make_tensor_value_info("c_out", BOOL, []), helper.make_tensor_value_info("v_out", F32, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "v0"], ["v"], body=body, name="endless")], "endless",
        [helper.make_tensor_value_info("m", I64, []), helper.make_tensor_value_info("v0", F32, [])],
        [helper.make_tensor_value_info("v", F32, [])],
        initializer=[numpy_helper.from_array(np.float32(1), "one")])
    path = tmp_path_factory.mktemp("run_options") / "endless.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with InferenceSession(num_threads=1) as session:
        yield session.load(str(path))


def run(model, m, run_options=None):
    out = model.execute(np.array(m, np.int64), np.float32(0), run_options=run_options)
    return float(out[0].to_numpy())


def test_a_timeout_stops_a_loop_of_4_6e15_iterations(endless_loop):
    options = RunOptions(timeout=0.05)
    t0 = time.monotonic()
    with pytest.raises(_errors.MaxDeadlineExceededError) as e:
        run(endless_loop, ENDLESS, options)
    elapsed = time.monotonic() - t0
    assert e.value.code == _errors.DEADLINE_EXCEEDED
    assert "op 'while_loop' (iteration " in e.value.message and "deadline" in e.value.message
    assert 0.05 <= elapsed < 5.0
    assert isinstance(e.value, RuntimeError)
    # The model is usable at once, with and without the options.
    assert run(endless_loop, 20, options) == 20.0
    assert run(endless_loop, 3) == 3.0


def test_terminate_from_another_thread_cancels_and_reset_runs_again(endless_loop):
    options = RunOptions()
    timer = threading.Timer(0.05, lambda: setattr(options, "terminate", True))
    timer.start()
    try:
        with pytest.raises(_errors.MaxCancelledError) as e:
            run(endless_loop, ENDLESS, options)
    finally:
        timer.cancel()
    assert e.value.code == _errors.CANCELLED and "cancel" in e.value.message
    assert options.terminate
    with pytest.raises(_errors.MaxCancelledError):  # still set: refused before its first step
        run(endless_loop, 1, options)
    options.terminate = False
    assert run(endless_loop, 5, options) == 5.0


def test_one_options_object_cancels_every_call_running_under_it(endless_loop):
    options = RunOptions(timeout=60)
    errors = []

    def call():
        try:
            run(endless_loop, ENDLESS, options)
        except _errors.MaxError as e:
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    options.terminate = True
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert [type(e) for e in errors] == [_errors.MaxCancelledError] * 3


def test_run_options_values_are_checked():
    assert RunOptions().timeout is None and not RunOptions().terminate
    assert RunOptions(timeout=2).timeout == 2.0
    assert "timeout=0.5" in repr(RunOptions(timeout=0.5))
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            RunOptions(timeout=bad)
    for bad in ("1", True):
        with pytest.raises(TypeError):
            RunOptions(timeout=bad)


def test_execute_refuses_what_is_not_run_options(endless_loop):
    with pytest.raises(TypeError, match="RunOptions"):
        run(endless_loop, 1, {"timeout": 1})
