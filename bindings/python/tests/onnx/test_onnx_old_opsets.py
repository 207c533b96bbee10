"""Models of opsets 7 to 12 (the ones most exported models in the wild still use): operators
whose older versions took attributes where opset 13 takes inputs (Squeeze, Unsqueeze,
ReduceSum, Split, Pad, Slice, Clip, TopK), Softmax's 2-D coercion, Dropout's mask type and
Scatter each import in their old form and compute what onnx's reference evaluator computes;
Upsample (opsets 7 to 9) maps onto Resize.
A version max_c does not map (Resize-10, BatchNormalization spatial=0, opset 6) is
UNIMPLEMENTED naming it."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from max_c import _errors
from max_c.engine import InferenceSession

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(11)


def x_of(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def single_node(tmp_path, opset, op, inputs, outputs, attrs=None, out_types=None, initializers=()):
    """A one-node model of `opset`: inputs {name: array} (None for an omitted one),
    outputs [name]; the output types are float32 unless out_types says otherwise."""
    names = [n if a is not None else "" for n, a in inputs.items()]
    node = helper.make_node(op, names, outputs, **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in inputs.items() if a is not None and n not in initializers]
    inits = [onnx.numpy_helper.from_array(inputs[n], n) for n in initializers]
    types = out_types or [F32] * len(outputs)
    graph = helper.make_graph([node], "old", graph_inputs,
                              [helper.make_tensor_value_info(o, t, None) for o, t in zip(outputs, types)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    path = tmp_path / f"{op}_{opset}.onnx"
    onnx.save(model, str(path))
    feeds = {n: a for n, a in inputs.items() if a is not None and n not in initializers}
    return path, model, feeds


def run_ours(path, feeds):
    m = InferenceSession(num_threads=1).load(str(path))
    return [t.to_numpy() for t in m.execute(*[feeds[s.name] for s in m.input_metadata])]


def check(tmp_path, opset, op, inputs, outputs, attrs=None, out_types=None, initializers=(), want=None):
    """Our outputs against `want`, or else onnx's reference evaluator's."""
    path, model, feeds = single_node(tmp_path, opset, op, inputs, outputs, attrs, out_types, initializers)
    ours = run_ours(path, feeds)
    for got, expected in zip(ours, want if want is not None else ReferenceEvaluator(model).run(None, feeds)):
        assert got.shape == np.asarray(expected).shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    return ours


@pytest.mark.parametrize("opset", [7, 11, 12])
def test_squeeze_unsqueeze_and_reduce_sum_take_axes_as_attributes(tmp_path, opset):
    check(tmp_path, opset, "Squeeze", {"x": x_of(2, 1, 3, 1)}, ["y"], {"axes": [1, 3]})
    check(tmp_path, opset, "Unsqueeze", {"x": x_of(2, 3)}, ["y"], {"axes": [0, 3]})
    check(tmp_path, opset, "ReduceSum", {"x": x_of(2, 3, 4)}, ["y"], {"axes": [1], "keepdims": 0})
    if opset >= 11:  # negative axes came with opset 11
        check(tmp_path, opset, "Unsqueeze", {"x": x_of(2, 3)}, ["y"], {"axes": [-1]})


@pytest.mark.parametrize("opset", [7, 11])
def test_split_takes_sizes_as_an_attribute(tmp_path, opset):
    x = x_of(2, 5)
    ours = check(tmp_path, opset, "Split", {"x": x}, ["a", "b"], {"axis": 1, "split": [2, 3]})
    np.testing.assert_array_equal(ours[1], x[:, 2:])


def as_matrix(op, x, axis):
    """The opset-1..12 meaning: x as rows of everything from `axis` on (onnx's reference
    evaluator applies the opset-13 meaning at every opset, so the expectation is written out)."""
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    if op == "Hardmax":
        out = np.eye(rows.shape[1], dtype=x.dtype)[rows.argmax(axis=1)]
    else:
        e = np.exp(rows - rows.max(axis=1, keepdims=True))
        out = e / e.sum(axis=1, keepdims=True)
        out = np.log(out) if op == "LogSoftmax" else out
    return out.reshape(x.shape)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_softmax_family_coerces_to_a_matrix_before_opset_13(tmp_path, op, axis):
    attrs = {} if axis is None else {"axis": axis}
    x = x_of(2, 3, 4)
    want = as_matrix(op, x, 1 if axis is None else axis % 3)
    check(tmp_path, 11, op, {"x": x}, ["y"], attrs, want=[want])


def test_pad_takes_pads_and_value_as_attributes(tmp_path):
    x = x_of(2, 3)
    ours = check(tmp_path, 7, "Pad", {"x": x}, ["y"], {"pads": [0, 1, 1, 2], "value": 1.5})
    np.testing.assert_array_equal(ours[0], np.pad(x, ((0, 1), (1, 2)), constant_values=1.5))
    ours = check(tmp_path, 10, "Pad", {"x": x}, ["y"], {"pads": [1, 1, 0, 1], "mode": "reflect"})
    np.testing.assert_array_equal(ours[0], np.pad(x, ((1, 0), (1, 1)), mode="reflect"))
    ours = check(tmp_path, 10, "Pad", {"x": x}, ["y"], {"pads": [0, 2, 0, 0], "mode": "edge"})
    np.testing.assert_array_equal(ours[0], np.pad(x, ((0, 0), (2, 0)), mode="edge"))


def test_slice_takes_starts_ends_and_axes_as_attributes(tmp_path):
    x = x_of(3, 5, 4)
    ours = check(tmp_path, 9, "Slice", {"x": x}, ["y"], {"starts": [1, 0], "ends": [-1, 100], "axes": [1, 2]})
    np.testing.assert_array_equal(ours[0], x[:, 1:-1, :])
    ours = check(tmp_path, 7, "Slice", {"x": x}, ["y"], {"starts": [1], "ends": [3]})
    np.testing.assert_array_equal(ours[0], x[1:3])


def test_clip_takes_its_bounds_as_attributes(tmp_path):
    x = x_of(4, 5)
    ours = check(tmp_path, 9, "Clip", {"x": x}, ["y"], {"min": -0.5, "max": 0.25})
    np.testing.assert_array_equal(ours[0], np.clip(x, -0.5, 0.25))
    ours = check(tmp_path, 10, "Clip", {"x": x}, ["y"], {"min": 0.0})
    np.testing.assert_array_equal(ours[0], np.maximum(x, 0))


def test_top_k_takes_k_as_an_attribute(tmp_path):
    x = x_of(3, 6)
    ours = check(tmp_path, 9, "TopK", {"x": x}, ["v", "i"], {"k": 2, "axis": 1}, [F32, TensorProto.INT64])
    np.testing.assert_array_equal(ours[1], np.argsort(-x, axis=1)[:, :2])


def test_dropout_mask_has_the_inputs_type_before_opset_10(tmp_path):
    x = x_of(2, 3)
    ours = check(tmp_path, 7, "Dropout", {"x": x}, ["y", "mask"], {"ratio": 0.3}, [F32, F32],
                 want=[x, np.ones((2, 3), np.float32)])
    assert ours[1].dtype == np.float32
    ours = check(tmp_path, 10, "Dropout", {"x": x}, ["y", "mask"], {"ratio": 0.3}, [F32, TensorProto.BOOL],
                 want=[x, np.ones((2, 3), bool)])
    assert ours[1].dtype == np.bool_


def test_scatter_is_scatter_elements(tmp_path):
    data = np.zeros((3, 3), np.float32)
    indices = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    updates = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    want = data.copy()
    for i in range(2):
        for j in range(3):
            want[indices[i, j], j] = updates[i, j]
    check(tmp_path, 9, "Scatter", {"data": data, "indices": indices, "updates": updates}, ["y"], {"axis": 0},
          want=[want])


def test_batch_norm_of_opset_7(tmp_path):
    c = 3
    inputs = {"x": x_of(2, c, 4), "s": x_of(c), "b": x_of(c), "m": x_of(c),
              "v": np.abs(x_of(c)) + np.float32(0.5)}
    per_c = [inputs[n].reshape(1, c, 1) for n in "sbmv"]
    want = (inputs["x"] - per_c[2]) / np.sqrt(per_c[3] + np.float32(1e-3)) * per_c[0] + per_c[1]
    check(tmp_path, 7, "BatchNormalization", inputs, ["y"], {"epsilon": 1e-3}, initializers=("s", "b", "m", "v"),
          want=[want])
    path, _, _ = single_node(tmp_path, 7, "BatchNormalization", inputs, ["y"], {"spatial": 0},
                             initializers=("s", "b", "m", "v"))
    with pytest.raises(_errors.MaxError, match="spatial = 0") as e:
        InferenceSession(num_threads=1).load(str(path))
    assert e.value.code == _errors.UNIMPLEMENTED


def test_unmapped_versions_are_unimplemented_naming_them(tmp_path):
    x = x_of(1, 1, 2, 2)
    path, _, _ = single_node(tmp_path, 10, "Resize", {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)}, ["y"],
                             initializers=("scales",))
    with pytest.raises(_errors.MaxError, match="opset 10's version of Resize") as e:
        InferenceSession(num_threads=1).load(str(path))
    assert e.value.code == _errors.UNIMPLEMENTED
    path, _, _ = single_node(tmp_path, 6, "Relu", {"x": x}, ["y"])
    with pytest.raises(_errors.MaxError, match="opset 6") as e:
        InferenceSession(num_threads=1).load(str(path))
    assert e.value.code == _errors.UNIMPLEMENTED


def upsample_reference(x, scales, mode):
    """Upsample as ONNX Runtime computes it: output position y reads the source position
    y / scale (asymmetric), rounded down for nearest, interpolated between its two neighbours
    (the last one repeated past the end) for linear; axis by axis."""
    for axis, scale in enumerate(scales):
        n = x.shape[axis]
        pos = np.arange(int(np.floor(n * scale))) / np.float64(scale)
        lo = np.minimum(np.floor(pos).astype(np.int64), n - 1)
        if mode == "nearest":
            x = np.take(x, lo, axis=axis)
            continue
        hi = np.minimum(lo + 1, n - 1)
        shape = [1] * x.ndim
        shape[axis] = -1
        w = (pos - lo).reshape(shape)
        x = (np.take(x, lo, axis=axis) * (1 - w) + np.take(x, hi, axis=axis) * w).astype(x.dtype)
    return x


@pytest.mark.parametrize("opset", [7, 8, 9])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_is_resize_with_asymmetric_positions(tmp_path, opset, mode):
    """Scales are an attribute before opset 9 and an input from it on; non-integer ones too."""
    x = x_of(2, 3, 3, 4)
    scales = np.array([1, 2, 1.5, 2.5] if mode == "nearest" else [1, 1, 1.5, 2.5], np.float32)
    if opset < 9:
        ours = check(tmp_path, opset, "Upsample", {"x": x}, ["y"], {"mode": mode, "scales": scales.tolist()},
                     want=[upsample_reference(x, scales, mode)])
    else:
        ours = check(tmp_path, opset, "Upsample", {"x": x, "scales": scales}, ["y"], {"mode": mode},
                     initializers=("scales",), want=[upsample_reference(x, scales, mode)])
    assert ours[0].shape == ((2, 6, 4, 10) if mode == "nearest" else (2, 3, 4, 10))


def test_upsample_nearest_moves_integers_unchanged(tmp_path):
    x = np.arange(-6, 6, dtype=np.int32).reshape(1, 2, 2, 3)
    scales = np.array([1, 1, 3, 2], np.float32)
    check(tmp_path, 9, "Upsample", {"x": x, "scales": scales}, ["y"], out_types=[TensorProto.INT32],
          initializers=("scales",), want=[upsample_reference(x, scales, "nearest")])


@pytest.mark.parametrize("opset, inputs, attrs, message", [
    (9, {"scales": np.array([1, 1, 0.5, 2], np.float32)}, {}, r"scales\[2\] is 0.5"),
    (9, {"scales": np.array([1, 2], np.float32)}, {}, "2 entries for an input of rank 4"),
    (9, {"scales": np.array([1, 1, 2, 2], np.float32)}, {"mode": "cubic"}, 'mode "cubic"'),
    (7, {}, {}, "attribute 'scales' is required"),
    (10, {"scales": np.array([1, 1, 2, 2], np.float32)}, {}, "deprecated from opset 10"),
])
def test_upsample_refuses_what_onnx_forbids_naming_it(tmp_path, opset, inputs, attrs, message):
    path, _, _ = single_node(tmp_path, opset, "Upsample", {"x": x_of(1, 1, 2, 2), **inputs}, ["y"], attrs,
                             initializers=tuple(inputs))
    with pytest.raises(_errors.MaxError, match=message) as e:
        InferenceSession(num_threads=1).load(str(path))
    assert e.value.code == _errors.INVALID_ARGUMENT
    assert "(Upsample)" in e.value.message


def test_upsample_linear_of_integers_is_unimplemented(tmp_path):
    x = np.arange(4, dtype=np.int32).reshape(1, 1, 2, 2)
    path, _, _ = single_node(tmp_path, 9, "Upsample", {"x": x, "scales": np.array([1, 1, 2, 2], np.float32)}, ["y"],
                             {"mode": "linear"}, out_types=[TensorProto.INT32], initializers=("scales",))
    with pytest.raises(_errors.MaxError, match=r"\(Upsample\).*non-float") as e:
        InferenceSession(num_threads=1).load(str(path))
    assert e.value.code == _errors.UNIMPLEMENTED


def test_a_transformer_layer_as_opset_11_exporters_write_it(tmp_path):
    """A BERT-style layer the way torch.onnx wrote it at opset 11: LayerNorm spelled out with
    ReduceMean (axes attribute), Unsqueeze/Squeeze with axes attributes, a head split with
    Split's attribute, Softmax over the last axis, Erf GELU."""
    b, s, h, heads = 2, 5, 8, 2
    d = h // heads
    w = {n: x_of(*shape) * np.float32(0.3) for n, shape in
         {"wq": (h, h), "wk": (h, h), "wv": (h, h), "wo": (h, h), "w1": (h, 2 * h), "w2": (2 * h, h)}.items()}
    consts = {"two": np.float32(2), "eps": np.float32(1e-5), "scale": np.float32(1 / np.sqrt(d)),
              "half": np.float32(0.5), "one": np.float32(1), "rsqrt2": np.float32(1 / np.sqrt(2)),
              "shape_heads": np.array([b, s, heads, d], np.int64), "shape_back": np.array([b, s, h], np.int64)}
    N = helper.make_node
    nodes = [
        N("ReduceMean", ["x"], ["mu"], axes=[-1]),
        N("Sub", ["x", "mu"], ["xc"]),
        N("Pow", ["xc", "two"], ["sq"]),
        N("ReduceMean", ["sq"], ["var"], axes=[-1]),
        N("Add", ["var", "eps"], ["ve"]),
        N("Sqrt", ["ve"], ["sd"]),
        N("Div", ["xc", "sd"], ["ln"]),
        N("Unsqueeze", ["mask"], ["m1"], axes=[1]),
        N("Unsqueeze", ["m1"], ["m2"], axes=[2]),
    ]
    for n in "qkv":
        nodes += [N("MatMul", ["ln", "w" + n], [n + "0"]),
                  N("Reshape", [n + "0", "shape_heads"], [n + "1"]),
                  N("Transpose", [n + "1"], [n + "2"], perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3])]
    nodes += [
        N("MatMul", ["q2", "k2"], ["qk"]),
        N("Mul", ["qk", "scale"], ["qs"]),
        N("Add", ["qs", "m2"], ["qm"]),
        N("Softmax", ["qm"], ["p"], axis=3),
        N("MatMul", ["p", "v2"], ["ctx"]),
        N("Transpose", ["ctx"], ["ct"], perm=[0, 2, 1, 3]),
        N("Reshape", ["ct", "shape_back"], ["cb"]),
        N("MatMul", ["cb", "wo"], ["att"]),
        N("Add", ["att", "x"], ["r1"]),
        N("MatMul", ["r1", "w1"], ["f1"]),
        N("Mul", ["f1", "rsqrt2"], ["f2"]),
        N("Erf", ["f2"], ["f3"]),
        N("Add", ["f3", "one"], ["f4"]),
        N("Mul", ["f1", "f4"], ["f5"]),
        N("Mul", ["f5", "half"], ["f6"]),
        N("MatMul", ["f6", "w2"], ["f7"]),
        N("Split", ["f7"], ["lo", "hi"], axis=2, split=[3, 5]),
        N("Slice", ["r1", "starts", "ends", "axes"], ["first"]),
        N("Squeeze", ["first"], ["y0"], axes=[1]),
    ]
    consts.update({"starts": np.array([0], np.int64), "ends": np.array([1], np.int64), "axes": np.array([1], np.int64)})
    inits = [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in {**w, **consts}.items()]
    graph = helper.make_graph(
        nodes, "layer11",
        [helper.make_tensor_value_info("x", F32, [b, s, h]), helper.make_tensor_value_info("mask", F32, [b, s])],
        [helper.make_tensor_value_info(n, F32, None) for n in ("lo", "hi", "y0")], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    path = tmp_path / "layer11.onnx"
    onnx.save(model, str(path))
    mask = np.zeros((b, s), np.float32)
    mask[1, 3:] = -1e4
    feeds = {"x": x_of(b, s, h), "mask": mask}
    for got, expected in zip(run_ours(path, feeds), ReferenceEvaluator(model).run(None, feeds)):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
