"""ONNX If, Loop and Scan through the Python binding, against numpy loops written from the
ONNX specs: subgraphs that use outer values (captured), nested subgraphs, scan directions
and axes, symbolic scan lengths, loops that stop early, trip counts known only when the
model runs; and the forms max_c refuses (UNIMPLEMENTED naming the node)."""
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


def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)


# ---- If ----

def test_if_on_a_run_time_condition_uses_outer_values_and_initializers(tmp_path):
    then_g = branch("then", [helper.make_node("Add", ["y", "w"], ["t"])], [vi("t", F32, [3])])
    else_g = branch("else", [helper.make_node("Mul", ["x", "w"], ["e"])], [vi("e", F32, [3])])
    model = load(tmp_path, "if_capture", [
        helper.make_node("Neg", ["x"], ["y"]),
        helper.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g)],
        [vi("c", BOOL, [1]), vi("x", F32, [3])], [vi("z", F32, [3])], [init("w", np.float32([1, 2, 3]))])
    x = np.float32([4, 5, 6])
    np.testing.assert_allclose(run(model, np.array([True]), x)[0], -x + [1, 2, 3])
    np.testing.assert_allclose(run(model, np.array([False]), x)[0], x * [1, 2, 3])


def test_nested_if_inside_a_loop_body_reads_the_main_graphs_values(tmp_path):
    """v = v + (i even ? a : b) per iteration; a is a graph input, b an initializer, both
    named only inside the If inside the body."""
    two = init("two", np.int64(2))
    zero = init("zero", np.int64(0))
    then_g = branch("even", [helper.make_node("Add", ["v_in", "a"], ["ve"])], [vi("ve", F32, [2])])
    else_g = branch("odd", [helper.make_node("Add", ["v_in", "b"], ["vo"])], [vi("vo", F32, [2])])
    body = helper.make_graph([
        helper.make_node("Mod", ["i", "two"], ["r"]),
        helper.make_node("Equal", ["r", "zero"], ["even"]),
        helper.make_node("If", ["even"], ["v_out"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [vi("i", I64, []), vi("c_in", BOOL, []), vi("v_in", F32, [2])], [vi("c_out", BOOL, []), vi("v_out", F32, [2])])
    model = load(tmp_path, "nested", [helper.make_node("Loop", ["m", "", "v0"], ["v"], body=body)],
                 [vi("m", I64, []), vi("v0", F32, [2]), vi("a", F32, [2])], [vi("v", F32, [2])],
                 [init("b", np.float32([100, 200])), two, zero])
    a, v0 = np.float32([1, 2]), np.float32([0, 0])
    for m in (0, 1, 4, 5):
        want = v0 + ((m + 1) // 2) * a + (m // 2) * np.float32([100, 200])
        np.testing.assert_allclose(run(model, np.array(m, np.int64), v0, a)[0], want)


# ---- Scan ----

def scan_reference(state, xs, axis, reverse, out_axis, out_reverse):
    """Running sums along `axis` of xs, as ONNX Scan with body (s + x_t, s + x_t)."""
    steps = np.moveaxis(xs, axis, 0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    rows = []
    for t in order:
        state = state + steps[t]
        rows.append(state)
    if out_reverse:
        rows = rows[::-1]
    stacked = np.stack(rows) if rows else np.zeros((0,) + state.shape, state.dtype)
    return state, np.moveaxis(stacked, 0, out_axis)


@pytest.mark.parametrize("reverse,out_reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scan_directions_axes_and_a_symbolic_length(tmp_path, reverse, out_reverse):
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y_t"])], "body",
                             [vi("s_in", F32, [3]), vi("x_t", F32, [3])], [vi("s_out", F32, [3]), vi("y_t", F32, [3])])
    model = load(tmp_path, "scan", [helper.make_node(
        "Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1, scan_input_axes=[-1],
        scan_input_directions=[reverse], scan_output_axes=[1], scan_output_directions=[out_reverse])],
        [vi("s0", F32, [3]), vi("x", F32, [3, "steps"])], [vi("s", F32, [3]), vi("y", F32, [3, "steps"])])
    rng = np.random.default_rng(0)
    for steps in (1, 4, 0):
        s0, x = rng.standard_normal(3).astype(np.float32), rng.standard_normal((3, steps)).astype(np.float32)
        want_s, want_y = scan_reference(s0, x, 1, reverse, 1, out_reverse)
        got_s, got_y = run(model, s0, x)
        np.testing.assert_allclose(got_s, want_s, rtol=1e-5, atol=1e-6)
        assert got_y.shape == (3, steps)
        np.testing.assert_allclose(got_y, want_y, rtol=1e-5, atol=1e-6)


def test_scan_with_two_inputs_no_state_and_an_initializer_in_the_body(tmp_path):
    body = helper.make_graph([helper.make_node("Mul", ["a_t", "b_t"], ["p"]),
                              helper.make_node("MatMul", ["p", "w"], ["y_t"])], "body",
                             [vi("a_t", F32, [2]), vi("b_t", F32, [2])], [vi("y_t", F32, [4])])
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    model = load(tmp_path, "scan2", [helper.make_node("Scan", ["a", "b"], ["y"], body=body, num_scan_inputs=2,
                                                      scan_input_axes=[0, 1])],
                 [vi("a", F32, [5, 2]), vi("b", F32, [2, 5])], [vi("y", F32, [5, 4])], [init("w", w)])
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 2)).astype(np.float32), rng.standard_normal((2, 5)).astype(np.float32)
    np.testing.assert_allclose(run(model, a, b)[0], (a * b.T) @ w, rtol=1e-5, atol=1e-5)


# ---- Loop ----

def counting_body(scan_output):
    """v += step each iteration; stops once v >= limit (both outer values)."""
    outputs = [vi("c_out", BOOL, []), vi("v_out", F32, [])] + ([vi("row", F32, [])] if scan_output else [])
    nodes = [helper.make_node("Add", ["v_in", "step"], ["v_out"]),
             helper.make_node("Less", ["v_out", "limit"], ["c_out"])]
    if scan_output:
        nodes.append(helper.make_node("Identity", ["v_out"], ["row"]))
    return helper.make_graph(nodes, "body", [vi("i", I64, []), vi("c_in", BOOL, []), vi("v_in", F32, [])], outputs)


def test_loop_that_stops_early_on_its_condition(tmp_path):
    model = load(tmp_path, "until", [helper.make_node("Loop", ["m", "c", "v0"], ["v"], body=counting_body(False))],
                 [vi("m", I64, []), vi("c", BOOL, []), vi("v0", F32, []), vi("step", F32, [])], [vi("v", F32, [])],
                 [init("limit", np.float32(10))])
    for m, c, v0, step in ((100, True, 0, 3), (2, True, 0, 3), (100, False, 1, 3), (9223372036854775807, True, -5, 0.5)):
        v = np.float32(v0)
        for _ in range(m if c else 0):
            v = np.float32(v + step)
            if not v < 10:
                break
        got = run(model, np.array(m, np.int64), np.array(c), np.float32(v0), np.float32(step))[0]
        np.testing.assert_allclose(got, v)


def test_loop_scan_outputs_with_a_trip_count_given_when_run(tmp_path):
    """The scan outputs' length is the trip count: a graph input, so the model compiles per
    trip count (and initial condition); large counts run as a while_loop, not unrolled."""
    body = helper.make_graph([helper.make_node("Add", ["v_in", "step"], ["v_out"]),
                              helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Mul", ["v_out", "v_out"], ["row"])], "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []), vi("v_in", F32, [])],
                             [vi("c_out", BOOL, []), vi("v_out", F32, []), vi("row", F32, [])])
    model = load(tmp_path, "rows", [helper.make_node("Loop", ["m", "c", "v0"], ["v", "rows"], body=body)],
                 [vi("m", I64, []), vi("c", BOOL, []), vi("v0", F32, [])], [vi("v", F32, []), vi("rows", F32, ["n"])],
                 [init("step", np.float32(0.5))])
    for m, c in ((3, True), (0, True), (4, False), (3000, True)):
        n = m if c else 0
        vs = np.float32(1) + np.float32(0.5) * np.arange(1, n + 1, dtype=np.float32)
        v, rows = run(model, np.array(m, np.int64), np.array(c), np.float32(1))
        np.testing.assert_allclose(v, vs[-1] if n else 1)
        assert rows.shape == (n,)
        np.testing.assert_allclose(rows, vs * vs, rtol=1e-6)


def test_loop_scan_outputs_that_may_stop_early_are_unimplemented(tmp_path):
    with pytest.raises(_errors.MaxError, match="may stop early") as e:
        m = load(tmp_path, "early", [helper.make_node("Loop", ["m", "c", "v0"], ["v", "rows"], body=counting_body(True),
                                                      name="counting")],
                 [vi("m", I64, []), vi("c", BOOL, []), vi("v0", F32, []), vi("step", F32, [])],
                 [vi("v", F32, []), vi("rows", F32, ["n"])], [init("limit", np.float32(10))])
        run(m, np.array(5, np.int64), np.array(True), np.float32(0), np.float32(1))
    assert e.value.code == _errors.UNIMPLEMENTED
    assert "'counting' (Loop)" in e.value.message


def test_loop_carrying_a_value_whose_shape_changes_is_unimplemented(tmp_path):
    body = helper.make_graph([helper.make_node("Concat", ["v_in", "v_in"], ["v_out"], axis=0),
                              helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []), vi("v_in", F32, None)],
                             [vi("c_out", BOOL, []), vi("v_out", F32, None)])
    with pytest.raises(_errors.MaxError, match="one type") as e:
        m = load(tmp_path, "grow", [helper.make_node("Loop", ["m", "c", "v0"], ["v"], body=body, name="grow")],
                 [vi("m", I64, []), vi("c", BOOL, []), vi("v0", F32, [1])], [vi("v", F32, None)])
        run(m, np.array(3, np.int64), np.array(True), np.float32([1]))
    assert e.value.code == _errors.UNIMPLEMENTED


def test_loop_over_a_sequence_is_unimplemented(tmp_path):
    body = helper.make_graph([helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"]),
                              helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
                             [vi("i", I64, []), vi("c_in", BOOL, []),
                              helper.make_tensor_sequence_value_info("s_in", F32, None)],
                             [vi("c_out", BOOL, []), helper.make_tensor_sequence_value_info("s_out", F32, None)])
    with pytest.raises(_errors.MaxError) as e:
        m = load(tmp_path, "seq", [helper.make_node("SequenceEmpty", [], ["s0"]),
                                   helper.make_node("Loop", ["m", "", "s0"], ["s"], body=body),
                                   helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                 [vi("m", I64, []), vi("x", F32, [2])], [vi("y", F32, None)])
        run(m, np.array(3, np.int64), np.float32([1, 2]))
    assert e.value.code == _errors.UNIMPLEMENTED
