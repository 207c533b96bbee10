"""ONNX models as exporters ship them, with dims the model leaves open, against ONNX Runtime
at two or more input shapes each: dims declared -1, "?" or unnamed (each its own symbol);
equalities of dims the Dim algebra cannot prove at import (Reshape element counts, Concat
and Add across branches, Squeeze of an expression) accepted there and checked when the
model runs (INVALID_ARGUMENT naming the node, the model staying usable); Resize of symbolic
axes (scale 1, integer nearest upscales, sizes read from shapes); a float Range over a dim
cast to float; edge, reflect and wrap
Pad of a symbolic axis, with pads computed from constants the way PyTorch exports F.pad."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import model_files
from max_c import _errors
from max_c.engine import InferenceSession
from model_files import init, vi

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def save(tmp_path, *args, **kwargs):
    return model_files.save(tmp_path, *args, ir_version=8, **kwargs)


class Pair:
    """One file loaded in max_c and in ONNX Runtime."""

    def __init__(self, path):
        self.ours = InferenceSession(num_threads=1).load(path)
        self.ort = ort.InferenceSession(path, providers=["CPUExecutionProvider"])

    def check(self, **feeds):
        want = self.ort.run(None, feeds)
        got = [t.to_numpy() for t in self.ours(**feeds)]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def pair(tmp_path, *args, **kwargs):
    return Pair(save(tmp_path, *args, **kwargs))


def rand(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def dims_of(model, name):
    return [i.shape for i in model.input_metadata if i.name == name][0]


# ---- 1. dims the file leaves open ----

def test_minus_one_question_mark_and_unnamed_dims_are_each_their_own_symbol(tmp_path):
    """-1, "?" twice, "" and a dim with neither value nor name: five independent dims (the
    two "?" differ at run time, as ONNX Runtime allows)."""
    x = helper.make_tensor_value_info("x", F32, [-1, "?", "?", "", None])
    p = pair(tmp_path, "open_dims", [helper.make_node("Transpose", ["x"], ["y"], perm=[4, 3, 2, 1, 0])],
             [x], [vi("y", F32, None)])
    assert dims_of(p.ours, "x") == [None] * 5
    p.check(x=rand(1, 2, 3, 4, 5))
    p.check(x=rand(3, 5, 2, 1, 2))


def test_named_dims_still_bind_together(tmp_path):
    """A real dim_param names one dim wherever it appears: Add of two "n" inputs needs no check."""
    p = pair(tmp_path, "named", [helper.make_node("Add", ["a", "b"], ["y"])],
             [vi("a", F32, ["n"]), vi("b", F32, ["n"])], [vi("y", F32, ["n"])])
    p.check(a=rand(4), b=rand(4))
    p.check(a=rand(7), b=rand(7))


# ---- 2. equalities checked when the model runs ----

def halve_rows_reshape(tmp_path, with_minus_one):
    """Reshape of x [a, b] to [a // 2, 2 * b]: a * b against (a // 2) * 2 * b, equal only for
    even a, which ONNX Runtime checks at run time. Or to [2, -1]: the -1 is (a * b) // 2,
    exact only for even a * b."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             c("i0", [0]), c("i1", [1]), c("two", [2]), c("m1", [-1]),
             helper.make_node("Gather", ["s", "i0"], ["a"]),
             helper.make_node("Gather", ["s", "i1"], ["b"]),
             helper.make_node("Div", ["a", "two"], ["half"]),
             helper.make_node("Mul", ["b", "two"], ["double"]),
             helper.make_node("Concat", ["two", "m1"] if with_minus_one else ["half", "double"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    return pair(tmp_path, f"halve_{with_minus_one}", nodes, [vi("x", F32, ["a", "b"])], [vi("y", F32, None)])


@pytest.mark.parametrize("with_minus_one", [False, True])
def test_reshape_counts_checked_at_run_time(tmp_path, with_minus_one):
    p = halve_rows_reshape(tmp_path, with_minus_one)
    p.check(x=rand(4, 3))
    p.check(x=rand(6, 5))
    with pytest.raises(_errors.MaxValueError) as e:  # 15 elements, shape [1, 10] or [2, 7]
        p.ours(x=rand(3, 5))
    assert e.value.code == _errors.INVALID_ARGUMENT
    assert "Reshape" in str(e.value) and "elements" in str(e.value)
    p.check(x=rand(2, 2))  # still usable


def pool_then_upsample(tmp_path, combine, resize_mode="asymmetric", nearest_mode="floor"):
    """A YOLO neck in miniature: x [1, 2, h, w] pooled by 2 (h -> (h - 1) // 2 + 1), upsampled
    back by 2 and combined with x, which needs (((h - 1) // 2) + 1) * 2 == h (even h)."""
    scales = init("scales", np.float32([1, 1, 2, 2]))
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[1, 1], strides=[2, 2]),
             helper.make_node("Resize", ["p", "", "scales"], ["u"], mode="nearest",
                              coordinate_transformation_mode=resize_mode, nearest_mode=nearest_mode)]
    if combine == "Concat":
        nodes.append(helper.make_node("Concat", ["x", "u"], ["y"], axis=1))
    else:
        nodes.append(helper.make_node(combine, ["x", "u"], ["y"]))
    return pair(tmp_path, f"neck_{combine}_{resize_mode}", nodes, [vi("x", F32, [1, 2, "h", "w"])],
                [vi("y", F32, None)], [scales])


@pytest.mark.parametrize("combine", ["Concat", "Add", "Mul"])
def test_branch_dims_checked_at_run_time(tmp_path, combine):
    p = pool_then_upsample(tmp_path, combine)
    p.check(x=rand(1, 2, 4, 6))
    p.check(x=rand(1, 2, 8, 2))
    with pytest.raises(_errors.MaxValueError) as e:
        p.ours(x=rand(1, 2, 5, 6))
    assert e.value.code == _errors.INVALID_ARGUMENT and combine in str(e.value)
    p.check(x=rand(1, 2, 2, 2))


def test_squeeze_of_an_expression_checked_at_run_time(tmp_path):
    """x [n, h] pooled to (h - 4) // 4 + 1 and squeezed: a model for h in [4, 8) only."""
    nodes = [helper.make_node("Unsqueeze", ["x", "ax"], ["x3"]),
             helper.make_node("MaxPool", ["x3"], ["p"], kernel_shape=[4], strides=[4]),
             helper.make_node("Squeeze", ["p", "pooled"], ["y"])]
    p = pair(tmp_path, "squeeze", nodes, [vi("x", F32, ["n", "h"])], [vi("y", F32, None)],
             [init("ax", np.int64([1])), init("pooled", np.int64([2]))])
    p.check(x=rand(2, 4))
    p.check(x=rand(3, 7))
    with pytest.raises(_errors.MaxValueError) as e:
        p.ours(x=rand(2, 8))
    assert e.value.code == _errors.INVALID_ARGUMENT and "Squeeze" in str(e.value)


def squeeze_if(tmp_path, data_condition=False):
    """torch's x.squeeze(2) of a dynamic dim: If(Shape(x)[2] == 1, Squeeze(x, [2]), Identity(x)),
    what follows (a MatMul by a [c, 3] weight) traced for the squeezed rank."""
    then_g = helper.make_graph([helper.make_node("Squeeze", ["x", "two"], ["sq"])], "then", [],
                               [vi("sq", F32, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["id"])], "else", [], [vi("id", F32, None)])
    cond = [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
            helper.make_node("Greater", ["m", "zero"], ["c"])] if data_condition else [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "two_scalar"], ["d"]),
        helper.make_node("Equal", ["d", "one"], ["c"])]
    nodes = cond + [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
                    helper.make_node("MatMul", ["y", "w"], ["z"])]
    return save(tmp_path, f"squeeze_if_{data_condition}", nodes, [vi("x", F32, ["n", 4, "l"])], [vi("z", F32, None)],
                [init("two", np.int64([2])), init("two_scalar", np.int64(2)), init("one", np.int64(1)),
                 init("zero", np.float32(0)), init("w", rand(4, 3))])


def test_if_on_a_dim_that_squeezes_it(tmp_path):
    p = Pair(squeeze_if(tmp_path))
    p.check(x=rand(2, 4, 1))
    p.check(x=rand(5, 4, 1))
    # ONNX Runtime would take else_branch, whose rank the MatMul was not traced for.
    with pytest.raises(_errors.MaxValueError) as e:
        p.ours(x=rand(2, 4, 3))
    assert e.value.code == _errors.INVALID_ARGUMENT and "Squeeze" in str(e.value)
    p.check(x=rand(1, 4, 1))


def test_if_on_data_whose_branches_differ_in_rank_stays_refused(tmp_path):
    with pytest.raises(_errors.MaxError) as e:
        InferenceSession(num_threads=1).load(squeeze_if(tmp_path, data_condition=True))
    assert e.value.code == _errors.UNIMPLEMENTED and "one type" in str(e.value)


def test_assertion_in_the_branch_not_taken_does_not_fail_the_run(tmp_path):
    """A cond plans both branches; the else branch's Reshape asserts an even length that only
    its own inputs have. Odd lengths take the then branch and must run."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    else_g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"]), c("i0", [0]), c("two", [2]), c("m1", [-1]),
                                helper.make_node("Gather", ["s", "i0"], ["a"]),
                                helper.make_node("Div", ["a", "two"], ["half"]),
                                helper.make_node("Mul", ["half", "two"], ["even"]),
                                helper.make_node("Reshape", ["x", "even"], ["r"]),
                                helper.make_node("ReduceSum", ["r"], ["e"], keepdims=0)], "else", [],
                               [vi("e", F32, None)])
    then_g = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["t"], keepdims=0)], "then", [],
                               [vi("t", F32, None)])
    nodes = [helper.make_node("If", ["odd"], ["y"], then_branch=then_g, else_branch=else_g)]
    p = pair(tmp_path, "branch_assert", nodes, [vi("x", F32, ["a"]), vi("odd", TensorProto.BOOL, [])],
             [vi("y", F32, None)])
    p.check(x=rand(5), odd=np.array(True))
    p.check(x=rand(6), odd=np.array(False))
    with pytest.raises(_errors.MaxValueError) as e:
        p.ours(x=rand(5), odd=np.array(False))
    assert e.value.code == _errors.INVALID_ARGUMENT and "Reshape" in str(e.value)


def test_lstm_initial_state_batch_named_apart_from_the_input(tmp_path):
    """silero_vad.onnx names X's batch and the state's apart ("" each): checked at run time."""
    hidden, size = 3, 2
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "", "", "h0"], ["y"], hidden_size=hidden)]
    p = pair(tmp_path, "lstm", nodes, [vi("x", F32, [4, "", size]), vi("h0", F32, [1, "", hidden])],
             [vi("y", F32, None)], [init("w", rand(1, 4 * hidden, size)), init("r", rand(1, 4 * hidden, hidden))])
    p.check(x=rand(4, 2, size), h0=rand(1, 2, hidden))
    p.check(x=rand(4, 5, size), h0=rand(1, 5, hidden))
    with pytest.raises(_errors.MaxValueError) as e:
        p.ours(x=rand(4, 2, size), h0=rand(1, 3, hidden))
    assert e.value.code == _errors.INVALID_ARGUMENT and "LSTM" in str(e.value)


# ---- 3. Resize of symbolic axes ----

@pytest.mark.parametrize("coords,nearest", [("asymmetric", "floor"), ("half_pixel", "round_prefer_floor"),
                                            ("pytorch_half_pixel", "round_prefer_ceil")])
def test_nearest_integer_upscale_of_symbolic_axes(tmp_path, coords, nearest):
    scales = init("scales", np.float32([1, 1, 3, 2]))
    p = pair(tmp_path, f"up_{coords}", [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                                                          coordinate_transformation_mode=coords,
                                                          nearest_mode=nearest)],
             [vi("x", F32, ["n", 2, "h", "w"])], [vi("y", F32, None)], [scales])
    p.check(x=rand(1, 2, 3, 4))
    p.check(x=rand(2, 2, 5, 1))


def test_resize_sizes_read_from_shapes(tmp_path):
    """sizes = Concat(Shape(x)[:2], Shape(x)[2:] * 2): symbolic sizes twice the input's."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "z", "two"], ["nc"]),
             helper.make_node("Slice", ["s", "two", "four"], ["hw"]),
             helper.make_node("Mul", ["hw", "two"], ["hw2"]),
             helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
    p = pair(tmp_path, "sizes", nodes, [vi("x", F32, ["n", 3, "h", "w"])], [vi("y", F32, None)],
             [init("z", np.int64([0])), init("two", np.int64([2])), init("four", np.int64([4]))])
    p.check(x=rand(1, 3, 2, 5))
    p.check(x=rand(2, 3, 4, 3))


def test_upsample_of_symbolic_axes(tmp_path):
    p = pair(tmp_path, "upsample", [helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")],
             [vi("x", F32, ["n", 1, "h", 3])], [vi("y", F32, None)], [init("scales", np.float32([1, 1, 2, 2]))],
             opset=9)
    p.check(x=rand(1, 1, 2, 3))
    p.check(x=rand(2, 1, 5, 3))


def test_linear_resize_of_a_symbolic_axis_is_refused_by_name(tmp_path):
    path = save(tmp_path, "linear", [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
                [vi("x", F32, [1, 1, "h", 4])], [vi("y", F32, None)], [init("scales", np.float32([1, 1, 2, 2]))])
    with pytest.raises(_errors.MaxError) as e:
        InferenceSession(num_threads=1).load(path)
    assert e.value.code == _errors.UNIMPLEMENTED and "symbolic dim h" in str(e.value)


def test_float_range_over_a_cast_dim(tmp_path):
    """A YOLO head's anchor grid: Range(0.0, Cast(Shape(x)[3], float), 1.0) + 0.5."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "three"], ["w"]),
             helper.make_node("Cast", ["w"], ["wf"], to=F32),
             helper.make_node("Range", ["zero", "wf", "one"], ["r"]),
             helper.make_node("Add", ["r", "half"], ["y"])]
    p = pair(tmp_path, "float_range", nodes, [vi("x", F32, [1, 2, "h", "w"])], [vi("y", F32, None)],
             [init("three", np.int64(3)), init("zero", np.float32(0)), init("one", np.float32(1)),
              init("half", np.float32(0.5))])
    p.check(x=rand(1, 2, 3, 4))
    p.check(x=rand(1, 2, 2, 7))


# ---- 4. Pad of a symbolic axis ----

@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap"])
def test_pad_of_a_symbolic_axis(tmp_path, mode):
    p = pair(tmp_path, f"pad_{mode}", [helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)],
             [vi("x", F32, ["n", "t"])], [vi("y", F32, None)], [init("pads", np.int64([0, 3, 1, 2]))],
             opset=18)
    p.check(x=rand(2, 5))
    p.check(x=rand(3, 9))
    p.check(x=rand(4, 4))


def test_reflect_pad_too_long_for_the_axis_fails_at_run_time(tmp_path):
    path = save(tmp_path, "pad_short", [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
                [vi("x", F32, [1, "t"])], [vi("y", F32, None)], [init("pads", np.int64([0, 3, 0, 0]))])
    model = InferenceSession(num_threads=1).load(path)
    with pytest.raises(_errors.MaxValueError) as e:
        model(x=rand(1, 2))
    assert e.value.code == _errors.INVALID_ARGUMENT
    assert model(x=rand(1, 6))[0].to_numpy().shape == (1, 9)


def test_pads_as_pytorch_exports_f_pad(tmp_path):
    """pads = Cast(Reshape(Transpose(Slice(Reshape(Concat([k, k], zeros(2)), [-1, 2]), step -1)),
    [-1])): a reversed, transposed constant that must fold to [0, k, 0, k] at import."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [c("k", [3, 3]), c("two", [2]), c("rows", [-1, 2]), c("m1", [-1]), c("zero", [0]),
             c("lo", [-9223372036854775807]), c("flat", [-1]),
             helper.make_node("ConstantOfShape", ["two"], ["z"], value=numpy_helper.from_array(np.int64([0]))),
             helper.make_node("Concat", ["k", "z"], ["cat"], axis=0),
             helper.make_node("Reshape", ["cat", "rows"], ["r"]),
             helper.make_node("Slice", ["r", "m1", "lo", "zero", "m1"], ["rev"]),
             helper.make_node("Transpose", ["rev"], ["tr"], perm=[1, 0]),
             helper.make_node("Reshape", ["tr", "flat"], ["p64"]),
             helper.make_node("Cast", ["p64"], ["pads"], to=I64),
             helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")]
    p = pair(tmp_path, "torch_pad", nodes, [vi("x", F32, ["n", "t"])], [vi("y", F32, None)])
    p.check(x=rand(1, 8))
    p.check(x=rand(2, 5))
