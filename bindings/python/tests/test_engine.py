"""max_c.engine through Python: InferenceSession.load, Model.execute / __call__ / reload,
TensorSpec metadata, input checking, threads and MAXG files."""
import os
import re
import threading

import numpy as np
import pytest

import max_c
from max_c.driver import CPU, Tensor
from max_c.dtype import DType
from max_c.engine import InferenceSession, Model, TensorSpec
from max_c.graph import Graph, TensorType, Weight, ops

F32 = DType.float32


@pytest.fixture(scope="module")
def session():
    s = InferenceSession(num_threads=2)
    yield s
    s.close()


def affine_graph():
    """y = x * 2 + 1 on float32[3]."""
    with Graph("affine", input_types=[TensorType(F32, [3])]) as g:
        g.output(g.inputs[0] * 2 + 1)
    return g


def mlp_graph():
    """relu(x @ w + b) with x float32[batch, 4], weight w float32[4, 8], weight b float32[8]."""
    with Graph("mlp", input_types=[TensorType(F32, ["batch", 4])]) as g:
        w = g.add_weight(Weight("w", F32, [4, 8]))
        b = g.add_weight(Weight("b", F32, [8]))
        g.output(ops.relu(g.inputs[0] @ w + b))
    return g


def pair_graph():
    """x + y with x, y float32[batch, 2]: the two inputs share the symbol batch."""
    with Graph("pair", input_types=[TensorType(F32, ["batch", 2]),
                                    TensorType(F32, ["batch", 2])]) as g:
        g.output(g.inputs[0] + g.inputs[1])
    return g


def mlp_weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal((4, 8)).astype(np.float32),
            "b": rng.standard_normal(8).astype(np.float32)}


def mlp_reference(x, weights):
    return np.maximum(x @ weights["w"] + weights["b"], 0)


@pytest.fixture(scope="module")
def mlp(session):
    weights = mlp_weights()
    model = session.load(mlp_graph(), weights_registry=weights)
    return model, weights


def batch(n, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 4)).astype(np.float32)


def names_input(message, name):
    """Whether an error message names the input (by name, or as "input N")."""
    index = name[len("input"):]
    return re.search(rf"{name}|input #?{index}\b", message) is not None


# ---- the binding -----------------------------------------------------------------------------


def test_every_called_function_is_declared():
    # ctypes defaults an undeclared function's result to int: a handle would be truncated.
    from max_c import _lib
    declared = (set(_lib._DECLS) | set(_lib._DECLS_ENGINE) | set(_lib._DECLS_WEIGHTS)
                | set(_lib._DECLS_GRAPHS) | set(_lib._DECLS_PLACEMENT) | set(_lib._DECLS_RUN_OPTIONS))
    package = os.path.dirname(max_c.__file__)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name)) as f:
                called = set(re.findall(r"\blib\.(max_\w+)", f.read()))
            assert not called - declared, (name, sorted(called - declared))


def test_engine_symbols_present():
    assert max_c._lib.missing_engine == []
    assert max_c.abi_version() >= (1, 2)


# ---- compile and execute ---------------------------------------------------------------------


def test_session_defaults_and_devices():
    with InferenceSession(devices=[CPU()], num_threads=2) as s:
        assert s.num_threads == 2
        assert s.devices == [CPU()]
        assert "InferenceSession" in repr(s)
    with InferenceSession() as s:
        assert s.num_threads >= 1 and s.devices == [CPU()]
    assert max_c.engine.InferenceSession is InferenceSession


def test_graph_on_a_device_the_session_lacks_is_refused(session):
    from max_c.graph import DeviceRef
    g = Graph("on_gpu", input_types=[TensorType(DType.float32, [4], DeviceRef.GPU(0))])
    with g:
        (x,) = g.inputs
        g.output(ops.relu(x))
    with pytest.raises(ValueError, match=r"input '\w+' is placed on gpu:0.*cpu:0"):
        session.load(g)
    (y,) = session.load(affine_graph()).execute(np.ones(3, np.float32))  # the session still works
    np.testing.assert_allclose(y.to_numpy(), 3.0)


def test_affine_executes_and_returns_tensors(session):
    model = session.load(affine_graph())
    assert isinstance(model, Model)
    x = np.array([0.0, 1.5, -2.0], np.float32)
    (y,) = model.execute(x)
    assert isinstance(y, Tensor) and y.dtype is F32 and y.shape == (3,)
    np.testing.assert_allclose(y.to_numpy(), x * 2 + 1)
    np.testing.assert_array_equal(x, [0.0, 1.5, -2.0])  # inputs are only read


def test_inputs_as_tensor_dlpack_and_strided_arrays(session):
    model = session.load(affine_graph())
    x = np.array([1.0, 2.0, 3.0], np.float32)
    expected = x * 2 + 1

    class DLPackOnly:  # any producer of the DLPack protocol, as torch tensors are
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    strided = np.array([1.0, 9.0, 2.0, 9.0, 3.0, 9.0], np.float32)[::2]
    for arg in (Tensor.from_numpy(x), DLPackOnly(x), strided, x.copy()):
        np.testing.assert_allclose(model.execute(arg)[0].to_numpy(), expected)


def test_torch_inputs_through_dlpack(session):
    torch = pytest.importorskip("torch")
    model = session.load(affine_graph())
    y = model.execute(torch.tensor([1.0, 2.0, 3.0]))[0]
    np.testing.assert_allclose(y.to_numpy(), [3.0, 5.0, 7.0])


def test_scalar_inputs_take_the_input_dtype(session):
    with Graph("scale", input_types=[TensorType(F32, [2]), TensorType(F32, [])]) as g:
        g.output(g.inputs[0] * g.inputs[1])
    model = session.load(g)
    x = np.array([1.0, -2.0], np.float32)
    for s in (3, 3.0, np.float64(3.0), np.int32(3)):
        np.testing.assert_allclose(model.execute(x, s)[0].to_numpy(), x * 3)


def test_matmul_relu_with_weights(session, mlp):
    model, weights = mlp
    x = batch(5)
    (y,) = model.execute(x)
    assert y.shape == (5, 8)
    np.testing.assert_allclose(y.to_numpy(), mlp_reference(x, weights), rtol=1e-5, atol=1e-5)


def test_weights_as_tensors_and_dlpack(session):
    weights = mlp_weights(3)
    registry = {"w": Tensor.from_numpy(weights["w"]),
                "b": Tensor.from_dlpack(weights["b"])}
    model = session.load(mlp_graph(), weights_registry=registry)
    x = batch(2)
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), mlp_reference(x, weights),
                               rtol=1e-5, atol=1e-5)


def test_fusion_off_gives_the_same_results(session):
    weights = mlp_weights()
    fused = session.load(mlp_graph(), weights_registry=weights)
    plain = session.load(mlp_graph(), weights_registry=weights, fuse=False,
                         fold_constants=False, plan_cache_capacity=1)
    for n in (1, 3, 3, 9):
        x = batch(n, seed=n)
        np.testing.assert_allclose(plain.execute(x)[0].to_numpy(),
                                   fused.execute(x)[0].to_numpy(), rtol=1e-5, atol=1e-6)


def test_symbolic_batch_runs_any_size(mlp):
    model, weights = mlp
    for n in (1, 7, 64, 7):
        x = batch(n, seed=n)
        (y,) = model.execute(x)
        assert y.shape == (n, 8)
        np.testing.assert_allclose(y.to_numpy(), mlp_reference(x, weights), rtol=1e-5,
                                   atol=1e-5)


# ---- metadata --------------------------------------------------------------------------------


def test_metadata(mlp):
    model, _ = mlp
    (spec,) = model.input_metadata
    assert isinstance(spec, TensorSpec)
    assert spec.name == "input0" and spec.dtype is F32
    assert spec.shape == [None, 4] and spec.dim_names == ["batch", None]
    assert spec.dims == ["batch", 4] and spec.rank == 2
    assert spec.device == CPU()
    (out,) = model.output_metadata
    assert out.name and out.dtype is F32 and out.shape == [None, 8]
    assert out.dim_names == ["batch", None]
    weights = {s.name: s for s in model.weights_metadata}
    assert set(weights) == {"w", "b"}
    assert weights["w"].shape == [4, 8] and weights["w"].dtype is F32
    assert weights["b"].shape == [8]
    assert model.input_devices == [CPU()] and model.devices == [CPU()]
    assert "TensorSpec(shape=[None, 4], dtype=DType.float32, name='input0')" == repr(spec)


def test_metadata_of_an_expression_dim(session):
    with Graph("twice", input_types=[TensorType(F32, ["batch", 3])]) as g:
        g.output(ops.concat([g.inputs[0], g.inputs[0]], axis=0))
    model = session.load(g)
    (out,) = model.output_metadata
    assert out.shape == [None, 3]
    assert out.dim_names[0].replace(" ", "") in ("batch*2", "2*batch")
    y = model.execute(np.ones((4, 3), np.float32))[0]
    assert y.shape == (8, 3)


# ---- named inputs ----------------------------------------------------------------------------


def test_execute_by_name(session):
    model = session.load(pair_graph())
    assert [s.name for s in model.input_metadata] == ["input0", "input1"]
    a = np.ones((3, 2), np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    expected = a + b
    for outs in (model(a, b), model(input1=b, input0=a), model(a, input1=b)):
        np.testing.assert_allclose(outs[0].to_numpy(), expected)
    with pytest.raises(LookupError, match="nope"):
        model(input0=a, nope=b)
    with pytest.raises(ValueError, match="input1"):
        model(input0=a)
    with pytest.raises(TypeError, match="both"):
        model(a, input0=a)
    np.testing.assert_allclose(model(a, b)[0].to_numpy(), expected)


# ---- reload ----------------------------------------------------------------------------------


def test_reload_changes_results_without_recompiling(session):
    first, second = mlp_weights(0), mlp_weights(1)
    model = session.load(mlp_graph(), weights_registry=first)
    x = batch(4)
    before = model.execute(x)[0].to_numpy()
    model.reload(second)
    after = model.execute(x)[0].to_numpy()
    np.testing.assert_allclose(after, mlp_reference(x, second), rtol=1e-5, atol=1e-5)
    assert not np.allclose(before, after)
    # Only the named weights change.
    model.reload({"b": first["b"]})
    mixed = {"w": second["w"], "b": first["b"]}
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), mlp_reference(x, mixed),
                               rtol=1e-5, atol=1e-5)


def test_bad_reload_changes_nothing(session):
    weights = mlp_weights()
    model = session.load(mlp_graph(), weights_registry=weights)
    x = batch(2)
    before = model.execute(x)[0].to_numpy()
    with pytest.raises(ValueError, match=r"\bw\b"):
        model.reload({"w": np.zeros((8, 4), np.float32), "b": np.zeros(8, np.float32)})
    with pytest.raises(ValueError, match="nope"):
        model.reload({"nope": np.zeros(8, np.float32)})
    np.testing.assert_array_equal(model.execute(x)[0].to_numpy(), before)


# ---- errors ----------------------------------------------------------------------------------


def test_bad_inputs_raise_and_model_stays_usable(session):
    model = session.load(pair_graph())
    a = np.ones((2, 2), np.float32)
    bad = {
        "count": lambda: model.execute(a),
        "too many": lambda: model.execute(a, a, a),
        "rank": lambda: model.execute(a, a.reshape(4)),
        "static dim": lambda: model.execute(a, np.ones((2, 3), np.float32)),
        "symbol": lambda: model.execute(a, np.ones((5, 2), np.float32)),
    }
    for what, call in bad.items():
        with pytest.raises(ValueError) as e:
            call()
        assert isinstance(e.value, max_c.MaxValueError), what
        assert e.value.code_name == "INVALID_ARGUMENT", what
        if what not in ("count", "too many"):
            assert names_input(e.value.message, "input1"), (what, e.value.message)
        if what == "symbol":
            assert "batch" in e.value.message, e.value.message
        np.testing.assert_allclose(model.execute(a, a)[0].to_numpy(), a + a)


def test_wrong_input_dtype_is_a_type_error(session):
    # MAX raises TypeError for a dtype mismatch (ValueError is kept for shapes and values).
    model = session.load(pair_graph())
    a = np.ones((2, 2), np.float32)
    calls = {
        "positional numpy": lambda: model.execute(a, a.astype(np.float64)),
        "driver.Tensor": lambda: model.execute(a, Tensor.from_numpy(a.astype(np.int64))),
        "by name": lambda: model(input0=a, input1=a.astype(np.int32)),
        "first input": lambda: model.execute(a.astype(np.float16), a),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError) as e:
            call()
        assert isinstance(e.value, max_c.MaxTypeError), what
        assert not isinstance(e.value, ValueError), what
        assert e.value.code_name == "INVALID_ARGUMENT", what
        assert "float32" in e.value.message, (what, e.value.message)
        wanted = "input0" if what == "first input" else "input1"
        assert names_input(e.value.message, wanted), (what, e.value.message)
        np.testing.assert_allclose(model.execute(a, a)[0].to_numpy(), a + a)
    # A wrong dtype together with a wrong shape is still a dtype error, as in MAX.
    with pytest.raises(TypeError):
        model.execute(a, np.ones((2, 3), np.int64))


def test_unconvertible_input_is_a_type_error(session):
    model = session.load(affine_graph())
    with pytest.raises(TypeError, match="input 0"):
        model.execute(object())


def test_missing_and_unknown_weights(session):
    with pytest.raises(LookupError) as e:
        session.load(mlp_graph(), weights_registry={"w": mlp_weights()["w"]})
    assert isinstance(e.value, max_c.MaxNotFoundError)
    assert re.search(r"\bb\b", e.value.message), e.value.message
    with pytest.raises(LookupError):
        session.load(mlp_graph())
    registry = dict(mlp_weights(), extra=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="extra"):
        session.load(mlp_graph(), weights_registry=registry)
    wrong = dict(mlp_weights(), b=np.zeros(9, np.float32))
    with pytest.raises(ValueError, match=r"\bb\b"):
        session.load(mlp_graph(), weights_registry=wrong)
    wrong = dict(mlp_weights(), b=np.zeros(8, np.float64))
    with pytest.raises(TypeError, match=r"weight 'b': dtype is float64 but the model expects float32"):
        session.load(mlp_graph(), weights_registry=wrong)
    model = session.load(mlp_graph(), weights_registry=mlp_weights())
    with pytest.raises(TypeError, match=r"weight 'b'"):
        model.reload(wrong)


def test_load_errors(session, tmp_path):
    with pytest.raises(TypeError):
        session.load(42)
    missing = tmp_path / "absent.maxg"
    with pytest.raises(LookupError, match="absent.maxg"):
        session.load(missing)
    with Graph("empty", input_types=[TensorType(F32, [1])]) as g:
        pass
    with pytest.raises(ValueError):
        session.load(g)  # no outputs
    with pytest.raises(max_c.MaxRuntimeError):
        session.load(affine_graph(), custom_extensions=["ops.mojopkg"])


def test_closed_model_raises(session):
    model = session.load(affine_graph())
    model.close()
    model.close()
    with pytest.raises(max_c.MaxRuntimeError, match="closed"):
        model.execute(np.zeros(3, np.float32))
    assert repr(model) == "Model(<closed>)"
    with pytest.raises(TypeError):
        Model()


def test_model_outlives_its_session():
    s = InferenceSession(num_threads=1)
    model = s.load(affine_graph())
    s.close()
    with pytest.raises(max_c.MaxRuntimeError, match="closed"):
        s.load(affine_graph())
    np.testing.assert_allclose(model.execute(np.ones(3, np.float32))[0].to_numpy(), [3, 3, 3])


# ---- threads and files -----------------------------------------------------------------------


def test_concurrent_executes_on_one_model(mlp):
    model, weights = mlp
    inputs = [batch(1 + t, seed=t) for t in range(8)]
    expected = [model.execute(x)[0].to_numpy() for x in inputs]
    failures = []

    def worker(t):
        try:
            for _ in range(200):
                got = model.execute(inputs[t])[0].to_numpy()
                if not np.array_equal(got, expected[t]):
                    failures.append(f"thread {t}: results differ")
                    return
        except Exception as e:  # reported below: pytest does not see other threads' errors
            failures.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures


def test_reload_while_other_threads_execute(session):
    sets = [mlp_weights(0), mlp_weights(1)]
    model = session.load(mlp_graph(), weights_registry=sets[0])
    x = batch(6)
    expected = [model.execute(x)[0].to_numpy()]
    model.reload(sets[1])
    expected.append(model.execute(x)[0].to_numpy())
    stop, failures = threading.Event(), []

    def worker():
        try:
            while not stop.is_set():
                got = model.execute(x)[0].to_numpy()
                # A call sees one weight set or the other, never a mix.
                if not any(np.array_equal(got, e) for e in expected):
                    failures.append("a result matches neither weight set")
                    return
        except Exception as e:
            failures.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    try:
        for i in range(100):
            model.reload(sets[i % 2])
    finally:
        stop.set()
        for th in threads:
            th.join()
    assert not failures, failures


def test_load_from_maxg_file(session, tmp_path):
    path = tmp_path / "mlp.maxg"
    mlp_graph().save(path)
    weights = mlp_weights()
    x = batch(3)
    for p in (path, str(path)):
        model = session.load(p, weights_registry=weights)
        assert model.input_metadata[0].dim_names == ["batch", None]
        np.testing.assert_allclose(model.execute(x)[0].to_numpy(), mlp_reference(x, weights),
                                   rtol=1e-5, atol=1e-5)


# ---- capture and replay (MAX's device graphs; on the CPU, the captured plan) ----------------


def test_replay_rewrites_the_captured_outputs(mlp):
    model, weights = mlp
    a, b = batch(3, seed=4), batch(3, seed=5)
    (out,) = model.capture(11, a)
    np.testing.assert_allclose(out.to_numpy(), mlp_reference(a, weights), rtol=1e-5, atol=1e-5)
    model.replay(11, b)
    np.testing.assert_allclose(out.to_numpy(), mlp_reference(b, weights), rtol=1e-5, atol=1e-5)
    model.debug_verify_replay([11], b)
    # A sequence of one key per device is the same key.
    model.replay((11,), a)
    np.testing.assert_allclose(out.to_numpy(), mlp_reference(a, weights), rtol=1e-5, atol=1e-5)


def test_graph_calls_check_keys_and_inputs(mlp):
    model, _ = mlp
    x = batch(2)
    with pytest.raises(TypeError, match="graph_keys"):
        model.capture("1", x)
    with pytest.raises(TypeError, match="graph_keys"):
        model.replay([1, 2.0], x)
    with pytest.raises(ValueError, match="uint64"):
        model.capture(-1, x)
    with pytest.raises(ValueError, match="no inputs"):
        model.replay(1)
    with pytest.raises(ValueError, match="one device"):
        model.capture([1, 1], x)
    with pytest.raises(RuntimeError, match="nothing is captured under graph key 12345"):
        model.replay(12345, x)
    with pytest.raises(RuntimeError, match="nothing is captured"):
        model.debug_verify_replay(12345, x)
    (out,) = model.capture(12, x)
    before = out.to_numpy().copy()
    with pytest.raises(ValueError, match="batch=5 but graph key 12 was captured with batch=2"):
        model.replay(12, batch(5))
    np.testing.assert_array_equal(out.to_numpy(), before)
    model.replay(12, x)
    np.testing.assert_array_equal(out.to_numpy(), before)


def test_copy_inputs_to_device_is_a_compile_option(session):
    # On the host every input already is where the model runs: the option changes nothing
    # (a GPU model copies host inputs in; tests/gpu_engine checks that on the emulated GPU).
    weights = mlp_weights()
    model = session.load(mlp_graph(), weights_registry=weights, copy_inputs_to_device=True)
    x = batch(3)
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), mlp_reference(x, weights),
                               rtol=1e-5, atol=1e-5)
