"""MAX's control flow through Python (inventory §5.16): ops.cond, ops.while_loop, ops.call
and Graph.add_subgraph, built with closures that capture values of the enclosing graphs
(max_c/_subgraph.py), compiled on the CPU and run; and the error paths, each leaving the
graph usable."""
import numpy as np
import pytest

import max_c
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import (INPUT_ANY, INPUT_ONE, INPUT_VARIADIC, REGISTRY, Graph, TensorType,
                         Weight, ops)

F32, I64, BOOL = DType.float32, DType.int64, DType.bool


@pytest.fixture(scope="module")
def session():
    s = InferenceSession(num_threads=2)
    yield s
    s.close()


def run(session, graph, *inputs, weights=None):
    """Compiles `graph` and runs it on numpy `inputs`: the outputs as numpy arrays."""
    model = session.load(graph, weights_registry=weights)
    with model:
        return [t.to_numpy() for t in model.execute(*[np.asarray(a) for a in inputs])]


def t(dtype, *shape):
    return TensorType(dtype, list(shape))


# ---- the registry ----------------------------------------------------------------------------


def test_registry_reports_the_any_arity():
    assert INPUT_ANY == 3
    assert REGISTRY["cond"].inputs == [("pred", INPUT_ONE), ("args", INPUT_ANY)]
    assert REGISTRY["call"].inputs == [("args", INPUT_ANY)]
    assert REGISTRY["while_loop"].inputs == [("values", INPUT_VARIADIC)]
    assert "args[]" in REGISTRY["cond"].signature()


# ---- cond ------------------------------------------------------------------------------------


def select_graph():
    """cond(p, x + 1, x * 2) on x float32[3], with p a bool scalar input."""
    with Graph("select", input_types=[t(BOOL), t(F32, 3)]) as g:
        p, x = g.inputs
        (y,) = ops.cond(p, [t(F32, 3)], lambda: x + 1, lambda: x * 2)
        g.output(y)
    return g


@pytest.mark.parametrize("pred", [True, False])
def test_cond_runs_the_branch_the_predicate_picks(session, pred):
    x = np.array([1, -2, 3], np.float32)
    (y,) = run(session, select_graph(), np.array(pred), x)
    np.testing.assert_allclose(y, x + 1 if pred else x * 2)


def test_cond_branches_return_python_scalars_as_out_types(session):
    with Graph("scalars", input_types=[t(BOOL)]) as g:
        (y,) = ops.cond(g.inputs[0], t(DType.int32), lambda: 1, lambda: 0)
        g.output(y)
    assert y.dtype == DType.int32
    for pred, want in ((True, 1), (False, 0)):
        (out,) = run(session, g, np.array(pred))
        assert out.dtype == np.int32 and out == want


def test_cond_with_several_results_and_outer_values_returned_bare(session):
    # A branch may give an outer value back as it is, and values of both kinds together.
    with Graph("several", input_types=[t(BOOL), t(F32, 2), t(F32, 2)]) as g:
        p, a, b = g.inputs
        outs = ops.cond(p, [t(F32, 2), t(F32, 2)], lambda: (a, a + b), lambda: [b - a, b])
        assert isinstance(outs, list) and len(outs) == 2
        g.output(*outs)
    a, b = np.array([1, 2], np.float32), np.array([10, 20], np.float32)
    assert all(np.array_equal(o, w) for o, w in zip(run(session, g, np.array(True), a, b),
                                                    (a, a + b)))
    assert all(np.array_equal(o, w) for o, w in zip(run(session, g, np.array(False), a, b),
                                                    (b - a, b)))


def test_cond_captures_values_only_one_branch_uses(session):
    # then uses x and w, else uses y and w (w twice): both branches take all three.
    with Graph("captures", input_types=[t(BOOL), t(F32, 2), t(F32, 2)]) as g:
        p, x, y = g.inputs
        w = ops.constant(np.array([3, 4], np.float32))
        (r,) = ops.cond(p, [t(F32, 2)], lambda: x * w + w, lambda: y - w * w)
        g.output(r)
    x, y = np.array([1, 2], np.float32), np.array([5, 7], np.float32)
    w = np.array([3, 4], np.float32)
    (a,) = run(session, g, np.array(True), x, y)
    (b,) = run(session, g, np.array(False), x, y)
    np.testing.assert_allclose(a, x * w + w)
    np.testing.assert_allclose(b, y - w * w)


def test_a_value_captured_through_two_levels(session):
    # x and q are the main graph's; the inner cond's branches use them, so the outer
    # branch captures them first and passes them on.
    with Graph("nested", input_types=[t(BOOL), t(BOOL), t(F32, 3)]) as g:
        p, q, x = g.inputs
        outer_only = x * 10

        def then_fn():
            (inner,) = ops.cond(q, [t(F32, 3)], lambda: x + outer_only, lambda: -x)
            return inner * 2

        (r,) = ops.cond(p, [t(F32, 3)], then_fn, lambda: x)
        g.output(r)
    x = np.array([1, 2, 3], np.float32)
    for p, q, want in ((True, True, (x + 10 * x) * 2), (True, False, -x * 2),
                       (False, True, x), (False, False, x)):
        (out,) = run(session, g, np.array(p), np.array(q), x)
        np.testing.assert_allclose(out, want, err_msg=f"p={p} q={q}")


def test_cond_with_a_weight_inside_a_branch(session):
    w = Weight("w", F32, [2])
    with Graph("weighted", input_types=[t(BOOL), t(F32, 2)]) as g:
        p, x = g.inputs
        (r,) = ops.cond(p, [t(F32, 2)], lambda: x * w, lambda: x)
        g.output(r)
    x = np.array([1, 2], np.float32)
    weights = {"w": np.array([5, 6], np.float32)}
    (out,) = run(session, g, np.array(True), x, weights=weights)
    np.testing.assert_allclose(out, x * weights["w"])


def test_cond_on_a_computed_predicate_and_symbolic_shapes(session):
    with Graph("symbolic", input_types=[t(F32, "n")]) as g:
        x = g.inputs[0]
        positive = ops.sum(x, axis=0).reshape([]) > 0
        (r,) = ops.cond(positive, [t(F32, "n")], lambda: x, lambda: -x)
        g.output(r)
    for x in (np.array([1, -2, 4], np.float32), np.array([-5, 1], np.float32)):
        (out,) = run(session, g, x)
        np.testing.assert_allclose(out, x if x.sum() > 0 else -x)


def test_cond_with_out_types_none_adds_nothing():
    with Graph("nothing", input_types=[t(BOOL)]) as g:
        ops_before = g.num_ops
        assert ops.cond(g.inputs[0], None, lambda: None, lambda: None) == []
        assert g.num_ops == ops_before


# ---- while_loop --------------------------------------------------------------------------------


def factorial_graph():
    """n! by a loop over (i, acc), with n an input the predicate captures."""
    with Graph("factorial", input_types=[t(I64)]) as g:
        n = g.inputs[0]
        i, acc = ops.while_loop([1, 1], lambda i, acc: i <= n,
                                lambda i, acc: [i + 1, acc * i])
        g.output(acc, i)
    return g


@pytest.mark.parametrize("n,want", [(0, 1), (1, 1), (5, 120), (10, 3628800)])
def test_while_loop_factorial(session, n, want):
    acc, i = run(session, factorial_graph(), np.array(n, np.int64))
    assert acc == want and i == max(n, 0) + 1


def test_while_loop_on_tensors_with_captures_in_the_body(session):
    # Doubles x and adds a captured step until its sum reaches the captured limit.
    with Graph("tensors", input_types=[t(F32, 2, 2), t(F32)]) as g:
        x, limit = g.inputs
        step = ops.constant(np.array([[1, 0], [0, 1]], np.float32))
        count = ops.constant(0, I64)
        total = lambda v: ops.sum(ops.sum(v, 0), 1).reshape([])  # noqa: E731
        y, k = ops.while_loop((x, count), lambda v, c: total(v) < limit,
                              lambda v, c: (v * 2 + step, c + 1))
        g.output(y, k)
    x = np.array([[0.5, 1], [0, 0.25]], np.float32)
    want, k = x.copy(), 0
    while want.sum() < 100:
        want, k = want * 2 + np.eye(2, dtype=np.float32), k + 1
    y, count = run(session, g, x, np.array(100, np.float32))
    np.testing.assert_allclose(y, want)
    assert count == k


def test_while_loop_single_value_bare_and_zero_iterations(session):
    with Graph("bare", input_types=[t(I64)]) as g:
        (r,) = ops.while_loop(g.inputs[0], lambda v: v < 10, lambda v: v + 3)
        g.output(r)
    assert run(session, g, np.array(1, np.int64))[0] == 10
    assert run(session, g, np.array(42, np.int64))[0] == 42  # the body never runs


def test_loops_and_conds_nest_with_captures(session):
    # A loop in a cond branch, and a cond in a loop body, both capturing outer values.
    with Graph("mixed", input_types=[t(BOOL), t(I64), t(I64)]) as g:
        p, n, bump = g.inputs

        def then_fn():
            (s,) = ops.while_loop(0, lambda s: s < n, lambda s: ops.cond(
                s < 3, [t(I64)], lambda: s + bump, lambda: s + 1)[0])
            return s

        (r,) = ops.cond(p, [t(I64)], then_fn, lambda: n * 100)
        g.output(r)

    def reference(p, n, bump):
        if not p:
            return n * 100
        s = 0
        while s < n:
            s = s + bump if s < 3 else s + 1
        return s

    for args in ((True, 10, 2), (True, 2, 5), (False, 7, 1)):
        (out,) = run(session, g, *[np.array(a) for a in args])
        assert out == reference(*args), args


# ---- call and add_subgraph -----------------------------------------------------------------------


def test_call_inlines_a_subgraph_with_a_prefixed_weight(session):
    with Graph("calls", input_types=[t(F32, "batch", 2)]) as g:
        layer = g.add_subgraph("layer", input_types=[t(F32, "batch", 2)])
        with layer:
            w = layer.add_weight(Weight("w", F32, [2, 2]))
            layer.output(ops.relu(layer.inputs[0] @ w))
        (h,) = ops.call(layer, g.inputs[0], prefix="l0.")
        (y,) = ops.call(layer, h, prefix="l1.")
        g.output(y)
    w0 = np.array([[1, -1], [2, 0.5]], np.float32)
    w1 = np.array([[0.5, 1], [-1, 3]], np.float32)
    x = np.array([[1, 2], [-3, 1], [0.5, 0.5]], np.float32)
    (out,) = run(session, g, x, weights={"l0.w": w0, "l1.w": w1})
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    np.testing.assert_allclose(out, relu(relu(x @ w0) @ w1), rtol=1e-6)


def test_add_subgraph_with_forward_and_several_results(session):
    with Graph("forward", input_types=[t(F32, 3)]) as g:
        both = g.add_subgraph("both", lambda v: (v + 1, v * v), input_types=[t(F32, 3)])
        assert isinstance(both, Graph) and both.name == "both"
        outs = ops.call(both, g.inputs[0])
        assert isinstance(outs, list) and len(outs) == 2
        g.output(*outs)
    x = np.array([1, 2, 3], np.float32)
    a, b = run(session, g, x)
    np.testing.assert_allclose(a, x + 1)
    np.testing.assert_allclose(b, x * x)


def test_add_subgraph_of_a_graph_still_gives_an_index():
    sub = Graph("sub", lambda v: v, input_types=[t(F32, 1)])
    g = Graph("holder")
    assert g.add_subgraph(sub) == 0
    assert g.add_subgraph(sub) == 1


def test_a_control_flow_graph_round_trips_through_maxg(session):
    data = select_graph().serialize()
    g = Graph.deserialize(data)
    x = np.array([4, 5, 6], np.float32)
    (y,) = run(session, g, np.array(False), x)
    np.testing.assert_allclose(y, x * 2)


# ---- errors, each leaving the graph usable -------------------------------------------------------


def assert_still_usable(session, g, ops_before):
    """No op was added, g is still the graph being built, and it still compiles and runs."""
    assert g.num_ops == ops_before
    assert Graph.current is g
    g.output(g.inputs[1] + 1)
    (out,) = run(session, g, np.array(True), np.array([1, 2], np.float32))
    np.testing.assert_allclose(out, [2, 3])


@pytest.fixture
def graph():
    with Graph("errors", input_types=[t(BOOL), t(F32, 2)]) as g:
        yield g


def test_mismatched_branch_types(session, graph):
    p, x = graph.inputs
    before = graph.num_ops
    with pytest.raises(ValueError, match="branch results do not match"):
        ops.cond(p, [t(F32, 2)], lambda: x, lambda: x.cast(I64))
    with pytest.raises(ValueError, match="then_fn returned 2 values, but out_types has 1"):
        ops.cond(p, [t(F32, 2)], lambda: (x, x), lambda: x)
    with pytest.raises(ValueError, match="out_types is None"):
        ops.cond(p, None, lambda: x, lambda: None)
    with pytest.raises(TypeError, match="TensorType"):
        ops.cond(p, ["float32"], lambda: x, lambda: x)
    assert_still_usable(session, graph, before)


def test_predicates_must_be_bool_scalars(session, graph):
    p, x = graph.inputs
    before = graph.num_ops
    with pytest.raises(TypeError, match="rank-0 bool"):
        ops.cond(x, [t(F32, 2)], lambda: x, lambda: x)
    with pytest.raises(TypeError, match="predicate's result must be a rank-0 bool"):
        ops.while_loop(x, lambda v: v, lambda v: v)
    with pytest.raises(TypeError, match="must return one rank-0 bool, got 2"):
        ops.while_loop(x, lambda v: (p, p), lambda v: v)
    assert_still_usable(session, graph, before)


def test_while_loop_errors(session, graph):
    p, x = graph.inputs
    before = graph.num_ops
    with pytest.raises(ValueError, match="initial_values is empty"):
        ops.while_loop([], lambda: p, lambda: [])
    with pytest.raises(ValueError, match="body result 0 is tensor<\\[2\\], int64"):
        ops.while_loop(x, lambda v: p, lambda v: v.cast(I64))
    with pytest.raises(ValueError, match="body returned 2 values"):
        ops.while_loop(x, lambda v: p, lambda v: (v, v))
    assert_still_usable(session, graph, before)


def test_an_exception_in_a_branch_propagates(session, graph):
    p, x = graph.inputs
    before = graph.num_ops

    def broken():
        raise KeyError("in the branch")

    with pytest.raises(KeyError, match="in the branch"):
        ops.cond(p, [t(F32, 2)], lambda: x, broken)
    with pytest.raises(KeyError, match="in the branch"):
        ops.while_loop(x, lambda v: p, lambda v: broken())
    assert_still_usable(session, graph, before)


def test_a_branch_value_cannot_leak_out(session, graph):
    p, x = graph.inputs
    before = graph.num_ops
    leaked = []

    def then_fn():
        leaked.append(x + 1)
        return x

    ops.cond(p, [t(F32, 2)], then_fn, lambda: x)
    with pytest.raises(max_c.MaxError):
        ops.add(leaked[0], x)
    # The cond was added; nothing else.
    assert graph.num_ops == before + 1


def test_call_checks_its_arguments(graph):
    p, x = graph.inputs
    sub = Graph("takes_one", lambda v: v * 2, input_types=[t(F32, 2)])
    before = graph.num_ops
    with pytest.raises(ValueError, match="takes 1 inputs, got 2 arguments"):
        ops.call(sub, x, x)
    with pytest.raises(ValueError, match="argument 0 is tensor<\\[\\], bool"):
        ops.call(sub, p)
    # A scalar argument becomes a constant, which the op itself refuses (a [] float32).
    with pytest.raises(max_c.MaxValueError, match="input 0"):
        ops.call(sub, 1.5)
    with pytest.raises(TypeError, match="must be a Graph"):
        ops.call("takes_one", x)
    assert graph.num_ops == before + 1  # the scalar's constant
    (y,) = ops.call(sub, x)
    assert y.type == t(F32, 2)
