"""MAX's control flow (inventory §5.16): ops.cond, ops.while_loop and ops.call, over
libmax_c's `cond`, `while_loop` and `call` registry ops (ABI 1.6).

The branch and loop functions are closures; _subgraph builds them into subgraphs whose
captured outer values become extra operands: a cond's `args`, and for a loop extra loop
values that the body passes through unchanged (so a loop's operands are its initial values,
then its captures, and only the first are given back).
"""
from typing import Callable, List, Optional, Sequence

from . import _subgraph
from .dtype import DType
from .graph import Graph, TensorType, TensorValue, _as_value, _find_graph, add_op


def _require_bool_scalar(value: TensorValue, what: str) -> None:
    t = value.type
    if t.dtype != DType.bool or t.rank != 0:
        raise TypeError(f"{what} must be a rank-0 bool tensor, got {t}")


def _out_types(out_types) -> Optional[List[TensorType]]:
    if out_types is None:
        return None
    types = [out_types] if isinstance(out_types, TensorType) else list(out_types)
    for t in types:
        if not isinstance(t, TensorType):
            raise TypeError(f"cond: out_types must be TensorTypes, got {t!r}")
    return types


def _check_results(who: str, values: Sequence[TensorValue], expected: Sequence[TensorType],
                   of: str) -> None:
    """ValueError unless `values` have exactly the types `expected` (`of` says whose)."""
    if len(values) != len(expected):
        raise ValueError(f"{who} returned {len(values)} values, but {of} has {len(expected)}: "
                         f"{_MISMATCH}")
    for i, (v, t) in enumerate(zip(values, expected)):
        if v.type != t:
            raise ValueError(f"{who} result {i} is {v.type}, but {of} says {t}: {_MISMATCH}")


_MISMATCH = "the branch results do not match"  # MAX's wording, for loop bodies too


def _as_list(result) -> list:
    return result if isinstance(result, list) else [result]


def _branch(graph: Graph, name: str, fn: Callable, who: str, input_types, types,
            of: str, adopt=()):
    """Builds fn into subgraph `name` of `graph` and makes its results (converted to `types`
    where they are Python scalars) its outputs, checked against `types`. Gives the graph,
    its scope and the output values; the graph is closed again when anything fails."""
    sub, scope, results = _subgraph.build(graph, name, input_types, fn, adopt)
    try:
        if types is None:
            if results:
                raise ValueError(f"{who} returned {len(results)} values, but {of} is None: "
                                 f"{_MISMATCH}")
            return sub, scope, []
        values = _subgraph.set_outputs(sub, results, types)
        _check_results(who, values, types, of)
        return sub, scope, values
    except BaseException:
        sub.close()
        raise


def cond(pred, out_types: Optional[Sequence[TensorType]], then_fn: Callable,
         else_fn: Callable) -> List[TensorValue]:
    """MAX's cond(pred, out_types, then_fn, else_fn): runs then_fn when the rank-0 bool `pred`
    is true, else else_fn, and gives the results of the branch that ran. The branches take no
    arguments and use values of the enclosing graphs freely; each returns values (or Python
    scalars) of exactly `out_types`, else ValueError. With out_types None (or empty) the
    branches return nothing, and as nothing in a libmax_c graph has side effects, no op is
    added and the result is [] (the branches are still built, so their errors show)."""
    types = _out_types(out_types)
    graph = _find_graph([pred])
    pred = _as_value(graph, pred, DType.bool)
    _require_bool_scalar(pred, "cond: the predicate")
    then_g, then_scope, _ = _branch(graph, "cond_then", then_fn, "cond: then_fn", (), types,
                                    "out_types")
    try:
        # The else branch starts from the then branch's captures, in order; what it
        # captures beyond them, the then branch takes too (unused): both take one operand list.
        else_g, else_scope, _ = _branch(graph, "cond_else", else_fn, "cond: else_fn", (), types,
                                        "out_types", adopt=then_scope.operands)
        try:
            if not types:
                return []
            then_scope.capture_all(else_scope.operands[len(then_scope.operands):])
            res = add_op("cond", [pred] + else_scope.operands,
                         {"then_graph": then_g, "else_graph": else_g}, graph=graph)
            return _as_list(res)
        finally:
            else_g.close()
    finally:
        then_g.close()


_BOOL_SCALAR = TensorType(DType.bool, [])


def while_loop(initial_values, predicate: Callable, body: Callable) -> List[TensorValue]:
    """MAX's while_loop(initial_values, predicate, body): v = initial_values; while
    predicate(*v): v = body(*v); gives the final v as a list. predicate returns a rank-0 bool
    (else TypeError); body returns values of the initial values' types (ValueError
    otherwise; a single value may be returned bare). Both may use values of the enclosing
    graphs. Empty initial values raise ValueError."""
    values = _subgraph.results_list(initial_values)
    if not values:
        raise ValueError("while_loop: initial_values is empty; a loop needs at least one value")
    graph = _find_graph(values)
    values = [_as_value(graph, v, None) for v in values]
    types = [v.type for v in values]
    pred_g, pred_scope, _ = _predicate(graph, predicate, types)
    try:
        body_g, body_scope, body_vals = _branch(graph, "while_body", body, "while_loop: body",
                                                types, types, "initial_values",
                                                adopt=pred_scope.operands)
        try:
            # Captures ride along as extra loop values, which the body hands back unchanged;
            # the predicate takes the body's extra captures too (unused).
            pred_scope.capture_all(body_scope.operands[len(pred_scope.operands):])
            body_g.output(*body_vals, *body_scope.inputs)
            res = add_op("while_loop", values + body_scope.operands,
                         {"predicate": pred_g, "body": body_g}, graph=graph)
            return _as_list(res)[:len(values)]
        finally:
            body_g.close()
    finally:
        pred_g.close()


def _predicate(graph: Graph, predicate: Callable, types):
    """The loop's predicate subgraph; TypeError unless it gives one rank-0 bool."""
    sub, scope, results = _subgraph.build(graph, "while_predicate", types, predicate)
    try:
        if len(results) != 1:
            raise TypeError(f"while_loop: the predicate must return one rank-0 bool, got "
                            f"{len(results)} values")
        (decision,) = _subgraph.set_outputs(sub, results, [_BOOL_SCALAR])
        _require_bool_scalar(decision, "while_loop: the predicate's result")
        return sub, scope, [decision]
    except BaseException:
        sub.close()
        raise


def call(graph: Graph, *args, prefix: str = "") -> List[TensorValue]:
    """MAX's call(graph, *args, prefix=''): the results of subgraph `graph` (see
    Graph.add_subgraph) on `args`, which must have the types of its inputs. libmax_c inlines
    it when compiling; its weights are the model's weights named prefix + name."""
    if not isinstance(graph, Graph):
        raise TypeError(f"call: graph must be a Graph, got {type(graph).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"call: prefix must be a str, got {type(prefix).__name__}")
    _check_call_args(graph, args)
    res = add_op("call", list(args), {"graph": graph, "prefix": prefix})
    return _as_list(res)


def _check_call_args(graph: Graph, args) -> None:
    """ValueError unless `args` fit the inputs of `graph`, checked here because the op would
    be refused only after a copy of `graph` was added to the caller (which cannot be undone)."""
    takes = [v.type for v in graph.inputs]
    if len(args) != len(takes):
        raise ValueError(f"call: graph '{graph.name}' takes {len(takes)} inputs, got "
                         f"{len(args)} arguments")
    for i, (a, want) in enumerate(zip(args, takes)):
        if isinstance(a, TensorValue) and a.type != want:
            raise ValueError(f"call: argument {i} is {a.type}, but graph '{graph.name}' input "
                             f"{i} is {want}")


def install(ops) -> None:
    """Puts cond, while_loop and call on the `ops` module, over the generated helpers."""
    ops.cond = cond
    ops.while_loop = while_loop
    ops.call = call
