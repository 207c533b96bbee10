"""ONNX NonZero, Compress and Unique through the Python binding, against numpy: output sizes
that the data decides (the engine counts first and plans the rest for that count), varying
between executions of one model, zero included; conditions and inputs known at import
(folded to static sizes); Unique sorted and by first occurrence, with and without an axis;
and the forms max_c refuses (UNIMPLEMENTED naming the node)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from max_c import _errors
from max_c.engine import InferenceSession
from model_files import init, save, vi

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def load(tmp_path, *args, **kwargs):
    return InferenceSession(num_threads=1).load(save(tmp_path, *args, **kwargs))


def run(model, *inputs):
    return [t.to_numpy() for t in model.execute(*inputs)]


# ---- NonZero ----

def test_nonzero_counts_differ_between_executions(tmp_path):
    model = load(tmp_path, "nonzero", [helper.make_node("NonZero", ["x"], ["y"])],
                 [vi("x", F32, ["n", 3])], [vi("y", I64, [2, None])])
    for x in (np.float32([[0, 1.5, 0], [np.nan, 0, -2]]), np.float32([[4, 5, 6]]),
              np.zeros((2, 3), np.float32), np.zeros((0, 3), np.float32)):
        (y,) = run(model, x)
        np.testing.assert_array_equal(y, np.array(np.nonzero(x)))
        assert y.shape == (2, np.count_nonzero(x))


def test_nonzero_feeds_ops_that_use_its_count(tmp_path):
    """The indices' columns gathered back from the input: GatherND over the transpose."""
    model = load(tmp_path, "nonzero_gather", [
        helper.make_node("NonZero", ["x"], ["idx"]),
        helper.make_node("Transpose", ["idx"], ["at"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "at"], ["y"])],
        [vi("x", I64, [2, 2, 3])], [vi("y", I64, [None])])
    rng = np.random.default_rng(0)
    for density in (0.5, 0.0, 1.0):
        x = rng.integers(1, 9, (2, 2, 3)) * (rng.random((2, 2, 3)) < density)
        (y,) = run(model, x)
        np.testing.assert_array_equal(y, x[x != 0])


def test_nonzero_of_an_initializer_is_folded_to_a_static_shape(tmp_path):
    x = np.array([[0, 3], [2, 0], [0, 0]], np.int64)
    model = load(tmp_path, "nonzero_known", [
        helper.make_node("NonZero", ["k"], ["idx"]),
        helper.make_node("Add", ["idx", "b"], ["y"])],
        [vi("b", I64, [2, 2])], [vi("y", I64, [2, 2])], [init("k", x)])
    b = np.array([[10, 20], [30, 40]], np.int64)
    (y,) = run(model, b)
    np.testing.assert_array_equal(y, np.array(np.nonzero(x)) + b)


def test_nonzero_in_an_unrolled_loop_counts_each_iteration_apart(tmp_path):
    """A Loop with a known trip count is unrolled: its body's NonZero is imported once per
    iteration into the main graph, each count with a symbol of its own."""
    body = helper.make_graph([
        helper.make_node("Mul", ["x_in", "x_in"], ["x_out"]),
        helper.make_node("Greater", ["x_out", "half"], ["big"]),
        helper.make_node("NonZero", ["big"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["nz_shape"]),
        helper.make_node("Gather", ["nz_shape", "one"], ["count"], axis=0),
        helper.make_node("Add", ["acc_in", "count"], ["acc_out"]),
        helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("x_in", F32, [4]), vi("acc_in", I64, [])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [4]), vi("acc_out", I64, [])])
    model = load(tmp_path, "loop_nonzero", [helper.make_node("Loop", ["m", "", "x", "acc0"], ["xf", "acc"], body=body)],
                 [vi("x", F32, [4])], [vi("xf", F32, [4]), vi("acc", I64, [])],
                 [init("m", np.int64(3)), init("acc0", np.int64(0)), init("half", np.float32(0.5)),
                  init("one", np.int64(1))])
    x = np.float32([0.9, 1.2, 0.2, 0.75])
    want, v = 0, x
    for _ in range(3):
        v = v * v
        want += int(np.count_nonzero(v > 0.5))
    _, acc = run(model, x)
    assert int(acc) == want


# ---- Compress ----

def test_compress_along_an_axis_with_a_short_run_time_condition(tmp_path):
    model = load(tmp_path, "compress_axis", [helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
                 [vi("x", F32, [2, 5, 3]), vi("c", BOOL, [3])], [vi("y", F32, [2, None, 3])])
    x = np.arange(30, dtype=np.float32).reshape(2, 5, 3)
    for c in ([True, False, True], [False, False, False], [True, True, True], [False, True, False]):
        c = np.array(c)
        (y,) = run(model, x, c)
        np.testing.assert_array_equal(y, np.compress(c, x, axis=1))


def test_compress_without_an_axis_flattens_and_the_count_flows_on(tmp_path):
    model = load(tmp_path, "compress_flat", [
        helper.make_node("Compress", ["x", "c"], ["y"]),
        helper.make_node("Exp", ["y"], ["z"])],
        [vi("x", F32, ["rows", 2]), vi("c", BOOL, ["m"])], [vi("z", F32, [None])])
    rng = np.random.default_rng(1)
    for rows, m in ((3, 6), (4, 5), (2, 0)):
        x = rng.standard_normal((rows, 2)).astype(np.float32)
        c = rng.random(m) < 0.5
        (z,) = run(model, x, c)
        np.testing.assert_allclose(z, np.exp(np.compress(c, x)), rtol=1e-6)


def test_compress_by_a_known_condition_has_a_static_size(tmp_path):
    model = load(tmp_path, "compress_known", [
        helper.make_node("Compress", ["x", "c"], ["y"], axis=-1),
        helper.make_node("Add", ["y", "b"], ["z"])],
        [vi("x", F32, [2, 4]), vi("b", F32, [2, 2])], [vi("z", F32, [2, 2])],
        [init("c", np.array([False, True, False, True]))])
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.float32([[100, 200], [300, 400]])
    (z,) = run(model, x, b)
    np.testing.assert_array_equal(z, x[:, [1, 3]] + b)


# ---- Unique ----

def unique_model(tmp_path, name, elem, shape, **attrs):
    return load(tmp_path, name, [helper.make_node("Unique", ["x"], ["y", "idx", "inv", "counts"], **attrs)],
                [vi("x", elem, shape)],
                [vi("y", elem, None), vi("idx", I64, [None]), vi("inv", I64, [None]), vi("counts", I64, [None])])


def numpy_unique(x, axis=None, sorted_=True):
    """ONNX's reference: numpy's unique, reordered by first occurrence when not sorted."""
    y, idx, inv, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, inv, counts = idx[order], place[inv], counts[order]
    return y, idx, inv, counts


def check_unique(got, want):
    for g, w, what in zip(got, want, ("Y", "indices", "inverse_indices", "counts")):
        np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_of_run_time_lengths_and_values(tmp_path, sorted_):
    model = unique_model(tmp_path, f"unique_{sorted_}", I64, ["n"], sorted=sorted_)
    rng = np.random.default_rng(2)
    for n, hi in ((12, 5), (7, 100), (1, 3), (9, 1), (0, 3)):
        x = rng.integers(-hi, hi + 1, n)
        check_unique(run(model, x), numpy_unique(x, sorted_=sorted_ == 1))


@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_of_floats_flattened_with_signed_zeros(tmp_path, sorted_):
    model = unique_model(tmp_path, f"unique_f_{sorted_}", F32, [2, 4], sorted=sorted_)
    x = np.float32([[2.5, -1, 0.0, 2.5], [-0.0, 7, -1, 3]])
    y, idx, inv, counts = run(model, x)
    wy, widx, winv, wcounts = numpy_unique(x, sorted_=sorted_ == 1)
    np.testing.assert_array_equal(y, wy)  # 0.0 == -0.0: either spelling is the one value
    check_unique((idx, inv, counts), (widx, winv, wcounts))


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_slices_along_an_axis(tmp_path, axis, sorted_):
    """The axis' length is symbolic (varying between executions); the slices' is static."""
    shape = [3, 3, 2]
    shape[axis] = "a"
    model = unique_model(tmp_path, f"unique_axis{axis}_{sorted_}", F32, shape, axis=axis, sorted=sorted_)
    rng = np.random.default_rng(3)
    for a in (4, 6, 1, 0):
        shape[axis] = a
        x = rng.integers(0, 2, shape).astype(np.float32)
        check_unique(run(model, x), numpy_unique(x, axis=axis, sorted_=sorted_ == 1))


def test_unique_of_a_compress_result_uses_a_count_learned_earlier(tmp_path):
    """Unique's input length is itself a count the engine learns first (two stages deep)."""
    model = load(tmp_path, "compress_unique", [
        helper.make_node("Compress", ["x", "c"], ["kept"]),
        helper.make_node("Unique", ["kept"], ["y", "idx", "inv", "counts"], sorted=0)],
        [vi("x", I64, [8]), vi("c", BOOL, [8])],
        [vi("y", I64, [None]), vi("idx", I64, [None]), vi("inv", I64, [None]), vi("counts", I64, [None])])
    x = np.array([3, 1, 3, 2, 1, 1, 5, 3], np.int64)
    for c in ([1, 1, 0, 1, 1, 0, 1, 1], [0] * 8, [1] * 8):
        c = np.array(c, bool)
        check_unique(run(model, x, c), numpy_unique(x[c], sorted_=False))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.uint64, np.float16, np.bool_])
def test_unique_of_types_our_sort_takes_through_a_key(tmp_path, dtype):
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = unique_model(tmp_path, f"unique_{np.dtype(dtype).name}", elem, [7], sorted=1)
    x = np.array([3, 250, 0, 3, 1, 250, 0], np.uint64)
    if dtype == np.uint64:
        x[1] = x[5] = 2**64 - 5  # past int64's range: the key must keep the order
    x = x.astype(dtype)
    check_unique(run(model, x), numpy_unique(x))


def test_unique_only_y_wanted(tmp_path):
    model = load(tmp_path, "unique_y", [helper.make_node("Unique", ["x"], ["y"])],
                 [vi("x", F32, [6])], [vi("y", F32, [None])])
    x = np.float32([3, 1, 3, np.nan, 1, np.nan])
    (y,) = run(model, x)
    np.testing.assert_array_equal(y, np.unique(x))


def expect_unimplemented(tmp_path, name, nodes, inputs, outputs, *mentions):
    path = save(tmp_path, name, nodes, inputs, outputs)
    with pytest.raises(_errors.MaxError) as e:
        InferenceSession(num_threads=1).load(path)
    assert e.value.code == _errors.UNIMPLEMENTED
    for m in mentions:
        assert m in str(e.value)


def test_unique_slices_of_a_symbolic_size_are_unimplemented(tmp_path):
    expect_unimplemented(tmp_path, "unique_sym", [helper.make_node("Unique", ["x"], ["y"], axis=0, name="u")],
                         [vi("x", F32, [4, "w"])], [vi("y", F32, None)], "'u' (Unique)", "static size")


def test_unique_slices_too_large_to_sort_by_element_are_unimplemented(tmp_path):
    expect_unimplemented(tmp_path, "unique_big", [helper.make_node("Unique", ["x"], ["y"], axis=0, name="u")],
                         [vi("x", F32, [4, 300])], [vi("y", F32, None)], "'u' (Unique)", "300 elements")


def test_nonzero_inside_a_while_loop_is_unimplemented(tmp_path):
    """A Loop whose trip count comes only at run time becomes a while_loop, whose body is
    planned whole: a count inside it cannot be learned first."""
    body = helper.make_graph([
        helper.make_node("NonZero", ["x_in"], ["nz"]),
        helper.make_node("ReduceSum", ["nz"], ["s"], keepdims=0),
        helper.make_node("Cast", ["s"], ["sf"], to=F32),
        helper.make_node("Add", ["x_in", "sf"], ["x_out"]),
        helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("x_in", F32, [4])],
        [vi("c_out", BOOL, []), vi("x_out", F32, [4])])
    expect_unimplemented(tmp_path, "loop_nonzero_rt", [helper.make_node("Loop", ["m", "", "x"], ["xf"], body=body)],
                         [vi("m", I64, []), vi("x", F32, [4])], [vi("xf", F32, [4])], "nonzero", "nz")


# ---- NonMaxSuppression ----

def nms_reference(boxes, scores, max_out, iou_threshold, score_threshold, center):
    """Greedy selection per (batch, class), written from the ONNX spec."""
    def extent(box):
        if center:
            x, y, w, h = box
            return x - w / 2, x + w / 2, y - h / 2, y + h / 2
        y1, x1, y2, x2 = box
        return min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)

    def suppresses(a, b):
        ax0, ax1, ay0, ay1 = extent(a)
        bx0, bx1, by0, by1 = extent(b)
        ix0, ix1, iy0, iy1 = max(ax0, bx0), min(ax1, bx1), max(ay0, by0), min(ay1, by1)
        if ix1 <= ix0 or iy1 <= iy0:
            return False
        inter = (ix1 - ix0) * (iy1 - iy0)
        area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
        union = area_a + area_b - inter
        if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
            return False
        return inter / union > iou_threshold

    out = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            order = sorted(range(scores.shape[2]), key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if len(kept) >= max_out:
                    break
                if score_threshold is not None and not scores[b, c, i] > score_threshold:
                    continue
                if not any(suppresses(boxes[b, k], boxes[b, i]) for k in kept):
                    kept.append(i)
            out += [[b, c, i] for i in kept]
    return np.array(out, np.int64).reshape(-1, 3)


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("with_score_threshold", [True, False])
def test_nms_against_a_greedy_reference_with_run_time_limits(tmp_path, center, with_score_threshold):
    names = ["boxes", "scores", "max_out", "iou", "score_min"][:5 if with_score_threshold else 4]
    model = load(tmp_path, f"nms_{center}_{with_score_threshold}",
                 [helper.make_node("NonMaxSuppression", names, ["sel"], center_point_box=center)],
                 [vi("boxes", F32, [2, 12, 4]), vi("scores", F32, [2, 3, 12]), vi("max_out", I64, [1]),
                  vi("iou", F32, [1]), vi("score_min", F32, [1])][:len(names)], [vi("sel", I64, [None, 3])])
    rng = np.random.default_rng(4 + center)
    for max_out, iou, score_min in ((3, 0.3, 0.2), (100, 0.0, 0.5), (0, 0.5, 0.0), (12, 0.6, 1.5), (2, 1.0, 0.1)):
        if center:
            boxes = np.concatenate([rng.random((2, 12, 2)) * 4, rng.random((2, 12, 2)) * 2 + 0.1], -1)
        else:
            boxes = rng.random((2, 12, 4)) * 4
        boxes = boxes.astype(np.float32)
        scores = rng.random((2, 3, 12)).astype(np.float32)
        scores[0, 1, 5] = scores[0, 1, 7]  # a tie: the lower box index goes first
        inputs = [boxes, scores, np.array([max_out], np.int64), np.float32([iou]), np.float32([score_min])]
        (got,) = run(model, *inputs[:len(names)])
        want = nms_reference(boxes, scores, max_out, iou, score_min if with_score_threshold else None, center)
        np.testing.assert_array_equal(got, want, err_msg=f"max_out {max_out}, iou {iou}, score_min {score_min}")


def test_nms_without_a_limit_selects_nothing(tmp_path):
    model = load(tmp_path, "nms_nothing", [helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"])],
                 [vi("boxes", F32, [1, 2, 4]), vi("scores", F32, [1, 1, 2])], [vi("sel", I64, [None, 3])])
    (got,) = run(model, np.float32([[[0, 0, 1, 1], [2, 2, 3, 3]]]), np.float32([[[0.5, 0.6]]]))
    assert got.shape == (0, 3)


def test_nms_of_a_symbolic_box_count_is_unimplemented(tmp_path):
    expect_unimplemented(tmp_path, "nms_sym",
                         [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"], name="nms")],
                         [vi("boxes", F32, [1, "n", 4]), vi("scores", F32, [1, 1, "n"]), vi("m", I64, [1])],
                         [vi("sel", I64, [None, 3])], "'nms' (NonMaxSuppression)", "box count")
