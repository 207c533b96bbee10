"""Building the subgraphs of control-flow ops, with captures.

MAX's branch and loop functions are closures: they use values of the graphs around them.
libmax_c's subgraphs see nothing of the graph that holds them (every value one uses must
arrive as one of its inputs), so while a function runs, its ops go to a new Graph whose
`_scope` turns each outer value it touches into a new input of that graph, once per value,
and records the outer value as an operand that the control-flow op must pass. A value from
two or more levels out is first captured by the enclosing subgraph (which is itself being
built), so captures propagate level by level. graph.py consults `_scope` wherever a value
meets a graph it does not belong to.
"""
from typing import Callable, List, Optional, Sequence, Tuple

from .graph import Graph, TensorType, TensorValue, _as_value


class CaptureScope:
    """The captures of one subgraph under construction: which values of the graph that will
    hold its op (`parent`) became which of its inputs."""

    def __init__(self, graph: Graph, parent: Graph):
        self.graph = graph
        self.parent = parent
        self.operands: List[TensorValue] = []  # values of `parent`, in input order
        self.inputs: List[TensorValue] = []  # the subgraph inputs that stand for them
        self._by_ptr = {}  # an operand's C value -> its index in operands

    def encloses(self, graph: Graph) -> bool:
        """Whether `graph` is the parent of this subgraph or encloses it further out."""
        g = self.parent
        while g is not None:
            if g is graph:
                return True
            scope = getattr(g, "_scope", None)
            g = scope.parent if scope is not None else None
        return False

    def capture(self, value: TensorValue) -> TensorValue:
        """The input of the subgraph that stands for outer `value`, added on first use."""
        # A value from further out becomes a value of the parent first (its own capture).
        outer = value if value._graph is self.parent else _as_value(self.parent, value, None)
        index = self._by_ptr.get(outer._ptr)
        if index is not None:
            return self.inputs[index]
        inner = self.graph._add_input(f"capture{len(self.operands)}", outer.type)
        self._by_ptr[outer._ptr] = len(self.operands)
        self.operands.append(outer)
        self.inputs.append(inner)
        return inner

    def capture_all(self, values: Sequence[TensorValue]) -> None:
        """Captures `values` (of the parent) in order: another subgraph's captures, so that
        both subgraphs take the same operands in the same order."""
        for v in values:
            self.capture(v)


def results_list(result) -> list:
    """A subgraph function's result as a list: None is none, a tuple or list its items."""
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return list(result)
    return [result]


def build(parent: Graph, name: str, input_types: Sequence[TensorType], fn: Callable,
          adopt: Sequence[TensorValue] = ()) -> Tuple[Graph, CaptureScope, list]:
    """Runs fn(*inputs) with a new graph `name` as the graph being built, its inputs first
    of `input_types`, then captures of `adopt` (values of `parent`), then whatever fn
    captures. Gives the graph, its scope and fn's results (not yet its outputs). The graph
    is closed again when fn raises."""
    sub = Graph(name)
    try:
        scope = CaptureScope(sub, parent)
        sub._scope = scope
        args = [sub._add_input(f"value{i}", t) for i, t in enumerate(input_types)]
        scope.capture_all(adopt)
        with sub:
            results = results_list(fn(*args))
        return sub, scope, results
    except BaseException:
        sub.close()
        raise


def set_outputs(sub: Graph, results: Sequence, types: Optional[Sequence[TensorType]]) -> list:
    """Makes `results` the outputs of `sub` and gives them as values of it. A Python scalar or
    array becomes a constant of types[i] (when given); an outer value is captured."""
    with sub:
        values = []
        for i, r in enumerate(results):
            t = types[i] if types is not None and i < len(types) else None
            values.append(_as_value(sub, r, t.dtype if t else None, t.device if t else None))
        sub.output(*values)
    return values
