"""max_c.graph: building graphs (MAX's max.graph): Graph, TensorType, DeviceRef, Weight,
TensorValue with operator sugar, and `ops`, generated from libmax_c's op registry."""
import enum
import inspect
import operator
import sys
import threading
import types
from ctypes import (POINTER, byref, c_char_p, c_double, c_int32, c_int64, c_size_t, c_void_p,
                    string_at)
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from . import _errors
from ._errors import check
from ._lib import lib, library_path, max_dim_t, missing_placement
from .driver import Device, Tensor, _Handle
from .dtype import DType, as_dtype
from .quantization import QuantizationEncoding, encoding_name

INT64_MAX = (1 << 63) - 1
OPEN = INT64_MAX  # an omitted slice bound

ATTR_INT, ATTR_FLOAT, ATTR_STRING, ATTR_DTYPE, ATTR_INTS, ATTR_FLOATS, ATTR_DIMS, ATTR_GRAPH, \
    ATTR_BOOL, ATTR_DEVICE = range(10)
INPUT_ONE, INPUT_OPTIONAL, INPUT_VARIADIC, INPUT_ANY = range(4)  # INPUT_ANY: ABI 1.6
ATTR_REQUIRED, ATTR_OPTIONAL, ATTR_DEFAULTED = range(3)
_ATTR_KIND_NAMES = ["int", "float", "string", "dtype", "ints", "floats", "dims", "graph", "bool",
                    "device"]

DimLike = Union[int, str]


# ---- devices ---------------------------------------------------------------------------------


class DeviceKind(str, enum.Enum):
    CPU = "cpu"
    GPU = "gpu"

    def __str__(self):
        return self.value

    @staticmethod
    def from_string(txt: str) -> "DeviceKind":
        return DeviceKind(txt.lower())


class DeviceRef:
    """Where a graph value lives: DeviceRef.CPU(), DeviceRef.GPU(0); str() gives "cpu:0"."""

    __slots__ = ("device_type", "id")

    def __init__(self, device_type: Union[DeviceKind, str] = DeviceKind.CPU, id: int = 0):
        self.device_type = DeviceKind.from_string(str(device_type))
        self.id = int(id)

    @staticmethod
    def CPU(id: int = 0) -> "DeviceRef":
        return DeviceRef(DeviceKind.CPU, id)

    @staticmethod
    def GPU(id: int = 0) -> "DeviceRef":
        return DeviceRef(DeviceKind.GPU, id)

    def is_cpu(self) -> bool:
        return self.device_type == DeviceKind.CPU

    def is_gpu(self) -> bool:
        return self.device_type == DeviceKind.GPU

    @staticmethod
    def from_device(device) -> "DeviceRef":
        if isinstance(device, DeviceRef):
            return device
        if isinstance(device, str):
            kind, _, i = device.partition(":")
            return DeviceRef(kind, int(i or 0))
        if isinstance(device, Device):
            return DeviceRef("cpu" if device.is_host else "gpu", device.id)
        raise TypeError(f"{device!r} is not a device")

    def to_device(self) -> Device:
        from .driver import CPU, Accelerator
        return CPU() if self.is_cpu() else Accelerator(self.id)

    @property
    def _kind(self) -> int:
        return 0 if self.is_cpu() else 1

    def __eq__(self, other):
        if isinstance(other, (str, Device)):
            other = DeviceRef.from_device(other)
        return isinstance(other, DeviceRef) and (self.device_type, self.id) == (
            other.device_type, other.id)

    def __hash__(self):
        return hash((self.device_type.value, self.id))

    def __str__(self):
        return f"{self.device_type.value}:{self.id}"

    def __repr__(self):
        return f"DeviceRef({self.device_type.value!r}, {self.id})"


# ---- dims and types --------------------------------------------------------------------------


def _dim_value(d):
    if isinstance(d, str):
        return d
    if isinstance(d, bool):
        raise TypeError(f"{d!r} is not a dim")
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"{d!r} is not a dim (an int or a symbolic str)") from None


def _dims_struct(dims):
    dims = list(dims)
    arr = (max_dim_t * max(len(dims), 1))()
    for i, d in enumerate(dims):
        d = _dim_value(d)
        if isinstance(d, str):
            arr[i].size = 0
            arr[i].expr = d.encode()  # ctypes keeps the bytes alive with the array
        else:
            arr[i].size = d
            arr[i].expr = None
    return arr, len(dims)


class TensorType:
    """A tensor's type: dtype, shape (ints and symbolic strs) and device."""

    def __init__(self, dtype, shape: Iterable[DimLike], device: Optional[DeviceRef] = None):
        self.dtype = as_dtype(dtype)
        self.shape = [_dim_value(d) for d in shape]
        self.device = DeviceRef.from_device(device) if device is not None else DeviceRef.CPU()

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.shape, self.device) == (
            other.dtype, other.shape, other.device)

    def __hash__(self):
        return hash((self.dtype, tuple(self.shape), self.device))

    def __str__(self):
        return f"tensor<[{', '.join(map(str, self.shape))}], {self.dtype.name}, {self.device}>"

    def __repr__(self):
        return f"TensorType(dtype={self.dtype!r}, shape={self.shape!r}, device={self.device!r})"


class Weight:
    """A named external weight, bound when a model is initialized. Added to the graph the
    first time an op uses it (or through Graph.add_weight)."""

    def __init__(self, name: str, dtype, shape: Iterable[DimLike],
                 device: Optional[DeviceRef] = None, **kwargs):
        self.name = name
        self.dtype = as_dtype(dtype)
        self.shape = [_dim_value(d) for d in shape]
        self.device = DeviceRef.from_device(device) if device is not None else DeviceRef.CPU()
        encoding = kwargs.get("quantization_encoding")
        # A quantized weight is uint8 [..., row_bytes]; the encoding is for the ops to read.
        self.quantization_encoding = (None if encoding is None
                                      else QuantizationEncoding.from_name(encoding))

    @property
    def type(self) -> TensorType:
        return TensorType(self.dtype, self.shape, self.device)

    def __repr__(self):
        return f"Weight({self.name!r}, {self.dtype!r}, {self.shape!r}, {self.device!r})"


# ---- graphs ----------------------------------------------------------------------------------

_local = threading.local()


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


class _GraphMeta(type):
    @property
    def current(cls) -> "Graph":
        s = _stack()
        if not s:
            raise LookupError("no graph is being built: use `with Graph(...) as g:`")
        return s[-1]


def _buffer_bytes(buf) -> bytes:
    try:
        data, size = c_void_p(), c_size_t()
        check(lib.max_buffer_data(buf, byref(data)))
        check(lib.max_buffer_size(buf, byref(size)))
        return string_at(data.value, size.value) if size.value else b""
    finally:
        lib.max_buffer_release(buf)


class Graph(_Handle, metaclass=_GraphMeta):
    """A graph (MAX's max.graph.Graph).

        with Graph("mlp", input_types=[TensorType(DType.float32, ["batch", 4])]) as g:
            x = g.inputs[0]
            g.output(ops.relu(x @ w))
    """

    _kind = "Graph"
    _release = staticmethod(lib.max_graph_release)

    def __init__(self, name: str = "main", forward=None, input_types: Iterable[TensorType] = (),
                 path=None, *args, **kwargs):
        out = c_void_p()
        if path is not None:
            check(lib.max_graph_load(str(path).encode(), byref(out)))
            self._adopt(out.value)
            return
        check(lib.max_graph_create(name.encode() if name else None, byref(out)))
        self._adopt(out.value)
        for i, t in enumerate(input_types):
            self._add_input(f"input{i}", t)
        if forward is not None:
            with self:
                result = forward(*self.inputs)
                if result is None:
                    self.output()
                elif isinstance(result, (tuple, list)):
                    self.output(*result)
                else:
                    self.output(result)

    @classmethod
    def _wrap(cls, ptr) -> "Graph":
        g = object.__new__(cls)
        g._adopt(ptr)
        return g

    def _add_input(self, name, t: TensorType) -> "TensorValue":
        if not isinstance(t, TensorType):
            raise TypeError(f"input types must be TensorType, got {t!r}")
        dims, rank = _dims_struct(t.shape)
        out = c_void_p()
        check(lib.max_graph_add_input(self._h, name.encode(), t.dtype.value, dims, rank,
                                      t.device._kind, t.device.id, byref(out)))
        return TensorValue(self, out.value)

    # ---- context manager: Graph.current -------------------------------------------------

    def __enter__(self):
        self._h
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        s = _stack()
        if s and s[-1] is self:
            s.pop()
        elif self in s:
            s.remove(self)

    # ---- structure ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        s = c_char_p()
        check(lib.max_graph_name(self._h, byref(s)))
        return s.value.decode()

    @property
    def inputs(self) -> tuple:
        h = self._h
        n = c_size_t()
        check(lib.max_graph_num_inputs(h, byref(n)))
        vals = []
        for i in range(n.value):
            v, nm = c_void_p(), c_char_p()
            check(lib.max_graph_input(h, i, byref(v), byref(nm)))
            vals.append(TensorValue(self, v.value))
        return tuple(vals)

    @property
    def input_names(self) -> list:
        h = self._h
        n = c_size_t()
        check(lib.max_graph_num_inputs(h, byref(n)))
        names = []
        for i in range(n.value):
            v, nm = c_void_p(), c_char_p()
            check(lib.max_graph_input(h, i, byref(v), byref(nm)))
            names.append(nm.value.decode())
        return names

    def _outputs(self):
        h = self._h
        n = c_size_t()
        check(lib.max_graph_num_outputs(h, byref(n)))
        res = []
        for i in range(n.value):
            v, nm = c_void_p(), c_char_p()
            check(lib.max_graph_output(h, i, byref(v), byref(nm)))
            res.append((nm.value.decode(), TensorValue(self, v.value)))
        return res

    @property
    def outputs(self) -> tuple:
        return tuple(v for _, v in self._outputs())

    @property
    def output_names(self) -> list:
        return [n for n, _ in self._outputs()]

    @property
    def output_types(self) -> list:
        return [v.type for v in self.outputs]

    @property
    def num_ops(self) -> int:
        n = c_size_t()
        check(lib.max_graph_num_ops(self._h, byref(n)))
        return n.value

    def output(self, *outputs) -> None:
        """Sets the graph's outputs (values, numpy arrays or scalars)."""
        vals = [_as_value(self, o, None) for o in outputs]
        arr = (c_void_p * max(len(vals), 1))(*[v._ptr for v in vals])
        check(lib.max_graph_set_outputs(self._h, arr, None, len(vals)))

    def add_weight(self, weight: Union[Weight, str], force_initial_weight_on_host: bool = True,
                   *args, dtype=None, shape=None, device=None) -> "TensorValue":
        """Declares an external weight (MAX's add_weight(weight, force_initial_weight_on_host));
        the same weight again gives the same value, another type under the same name raises
        ValueError. max_c also takes add_weight(name, dtype, shape[, device])."""
        if not isinstance(weight, Weight):
            # The shorthand's positional dtype/shape/device arrive in MAX's second slot.
            given = ((force_initial_weight_on_host,) if force_initial_weight_on_host is not True
                     else ()) + args
            if len(given) > 3:
                raise TypeError("add_weight(name, dtype, shape, device) takes at most 4 "
                                "arguments")
            parts = {"dtype": dtype, "shape": shape, "device": device}
            for key, value in zip(parts, given):
                if parts[key] is not None:
                    raise TypeError(f"add_weight() got multiple values for '{key}'")
                parts[key] = value
            weight = Weight(weight, **parts)
        elif args:
            raise TypeError("add_weight(weight, force_initial_weight_on_host) takes a Weight")
        dims, rank = _dims_struct(weight.shape)
        out = c_void_p()
        check(lib.max_graph_add_weight(self._h, weight.name.encode(), weight.dtype.value, dims,
                                       rank, weight.device._kind, weight.device.id, byref(out)))
        return TensorValue(self, out.value)

    def add_subgraph(self, name, forward=None, input_types: Iterable[TensorType] = (),
                     path=None, *args, **kwargs):
        """MAX's add_subgraph(name, forward=None, input_types=()): a new graph `name` with
        those inputs (built by `forward` when given) to pass to ops.call. libmax_c copies a
        subgraph into the caller when ops.call uses it, so the result is a graph of its own
        and sees nothing of this one: what it needs arrives through its inputs.

        add_subgraph(graph) (a Graph rather than a name) appends a copy of `graph` and gives
        its index, for a MAX_ATTR_GRAPH attribute of add_op."""
        if isinstance(name, Graph):
            idx = c_int64()
            check(lib.max_graph_add_subgraph(self._h, name._h, byref(idx)))
            return idx.value
        if not isinstance(name, str):
            raise TypeError(f"add_subgraph: name must be a str, got {type(name).__name__}")
        # custom_extensions and devices (MAX's trailing parameters) have nothing to set here.
        return Graph(name, forward, input_types, path)

    def constant(self, value, dtype=None, device=None) -> "TensorValue":
        return _constant(self, value, dtype, device)

    def verify(self) -> None:
        check(lib.max_graph_verify(self._h))

    # ---- serialization and printing --------------------------------------------------------

    def serialize(self) -> bytes:
        """The graph in the MAXG format."""
        buf = c_void_p()
        check(lib.max_graph_serialize(self._h, byref(buf)))
        return _buffer_bytes(buf.value)

    @classmethod
    def deserialize(cls, data: bytes) -> "Graph":
        data = bytes(data)
        out = c_void_p()
        check(lib.max_graph_deserialize(data, len(data), byref(out)))
        return cls._wrap(out.value)

    def save(self, path) -> None:
        check(lib.max_graph_save(self._h, str(path).encode()))

    @classmethod
    def load(cls, path) -> "Graph":
        out = c_void_p()
        check(lib.max_graph_load(str(path).encode(), byref(out)))
        return cls._wrap(out.value)

    def to_text(self) -> str:
        buf = c_void_p()
        check(lib.max_graph_to_text(self._h, byref(buf)))
        return _buffer_bytes(buf.value).decode()

    def to_dot(self) -> str:
        buf = c_void_p()
        check(lib.max_graph_to_dot(self._h, byref(buf)))
        return _buffer_bytes(buf.value).decode()

    def __str__(self):
        if self.closed:
            return "Graph(<closed>)"
        return self.to_text()

    def __repr__(self):
        if self.closed:
            return "Graph(<closed>)"
        return f"Graph({self.name!r}, inputs={len(self.inputs)}, ops={self.num_ops})"


# ---- values ----------------------------------------------------------------------------------


class TensorValue:
    """A tensor value of a graph (an op's result, an input, a constant or a weight)."""

    __slots__ = ("_graph", "_ptr", "__weakref__")
    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __init__(self, graph: Graph, ptr):
        self._graph = graph
        self._ptr = ptr

    @property
    def _h(self):
        self._graph._h  # raises once the graph is closed
        return self._ptr

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def tensor(self) -> "TensorValue":
        return self

    @property
    def dtype(self) -> DType:
        d = c_int32()
        check(lib.max_value_dtype(self._h, byref(d)))
        return DType(d.value)

    @property
    def rank(self) -> int:
        r = c_int32()
        check(lib.max_value_rank(self._h, byref(r)))
        return r.value

    @property
    def shape(self) -> list:
        """The dims: ints where static, canonical strs ("batch * 2") where symbolic."""
        h = self._h
        dims = []
        for i in range(self.rank):
            size, expr = c_int64(), c_char_p()
            check(lib.max_value_dim(h, i, byref(size), byref(expr)))
            dims.append(size.value if size.value >= 0 else expr.value.decode())
        return dims

    @property
    def device(self) -> DeviceRef:
        k, i = c_int32(), c_int32()
        check(lib.max_value_device(self._h, byref(k), byref(i)))
        return DeviceRef("cpu" if k.value == 0 else "gpu", i.value)

    @property
    def type(self) -> TensorType:
        return TensorType(self.dtype, self.shape, self.device)

    def type_string(self) -> str:
        s = c_char_p()
        check(lib.max_value_type_string(self._h, byref(s)))
        return s.value.decode()

    def __repr__(self):
        try:
            return f"TensorValue({self.type_string()})"
        except _errors.MaxError:
            return "TensorValue(<closed graph>)"

    def __bool__(self):
        raise TypeError("a graph TensorValue has no truth value (it is symbolic)")

    __hash__ = object.__hash__

    # ---- methods --------------------------------------------------------------------------

    def reshape(self, shape) -> "TensorValue":
        return ops.reshape(self, shape)

    def transpose(self, dim_1: int, dim_2: int) -> "TensorValue":
        return ops.transpose(self, dim_1, dim_2)

    @property
    def T(self) -> "TensorValue":
        return ops.transpose(self, -1, -2)

    def permute(self, dims) -> "TensorValue":
        return ops.permute(self, dims)

    def cast(self, dtype) -> "TensorValue":
        return ops.cast(self, dtype)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "TensorValue":
        return ops.flatten(self, start_dim=start_dim, end_dim=end_dim)

    def broadcast_to(self, shape) -> "TensorValue":
        return ops.broadcast_to(self, shape)

    def rebind(self, shape, message: str = "") -> "TensorValue":
        return ops.rebind(self, shape, message=message)

    def argmax(self, axis: int = -1) -> "TensorValue":
        return ops.argmax(self, axis=axis)

    def max(self, axis: int = -1) -> "TensorValue":
        return ops.max(self, axis=axis)

    def min(self, axis: int = -1) -> "TensorValue":
        return ops.min(self, axis=axis)

    def mean(self, axis: int = -1) -> "TensorValue":
        return ops.mean(self, axis=axis)

    def sum(self, axis: int = -1) -> "TensorValue":
        return ops.sum(self, axis=axis)

    def var(self, axis: int = -1) -> "TensorValue":
        """Population variance along `axis` (no Bessel correction, as MAX), kept as size 1."""
        centered = self - ops.mean(self, axis=axis)
        return ops.mean(centered * centered, axis=axis)

    def stdev(self, axis: int = -1) -> "TensorValue":
        """Population standard deviation along `axis` (sqrt of var), kept as size 1."""
        return ops.sqrt(self.var(axis=axis))

    # ---- operators --------------------------------------------------------------------------

    def __add__(self, o): return ops.add(self, o)
    def __radd__(self, o): return ops.add(o, self)
    def __sub__(self, o): return ops.sub(self, o)
    def __rsub__(self, o): return ops.sub(o, self)
    def __mul__(self, o): return ops.mul(self, o)
    def __rmul__(self, o): return ops.mul(o, self)
    def __truediv__(self, o): return ops.div(self, o)
    def __rtruediv__(self, o): return ops.div(o, self)
    def __mod__(self, o): return ops.mod(self, o)
    def __rmod__(self, o): return ops.mod(o, self)
    def __pow__(self, o): return ops.pow(self, o)
    def __rpow__(self, o): return ops.pow(o, self)
    def __matmul__(self, o): return ops.matmul(self, o)
    def __rmatmul__(self, o): return ops.matmul(o, self)
    def __neg__(self): return ops.negate(self)
    def __abs__(self): return ops.abs(self)
    def __invert__(self): return ops.logical_not(self)
    def __and__(self, o): return ops.logical_and(self, o)
    def __rand__(self, o): return ops.logical_and(o, self)
    def __or__(self, o): return ops.logical_or(self, o)
    def __ror__(self, o): return ops.logical_or(o, self)
    def __xor__(self, o): return ops.logical_xor(self, o)
    def __rxor__(self, o): return ops.logical_xor(o, self)
    def __eq__(self, o): return ops.equal(self, o)
    def __ne__(self, o): return ops.not_equal(self, o)
    def __gt__(self, o): return ops.greater(self, o)
    def __ge__(self, o): return ops.greater_equal(self, o)
    def __lt__(self, o): return ops.less(self, o)
    def __le__(self, o): return ops.less_equal(self, o)

    def __getitem__(self, index) -> "TensorValue":
        return _slice(self, index)


# ---- op plumbing -----------------------------------------------------------------------------


def _add_constant(graph: Graph, tensor: Tensor, device) -> TensorValue:
    """The graph's constant holding a copy of `tensor`, placed on `device` (None: the host)."""
    out = c_void_p()
    place = DeviceRef.from_device(device) if device is not None else None
    if place is None or place.is_cpu() and place.id == 0:
        check(lib.max_graph_add_constant(graph._h, tensor._h, byref(out)))
    elif "max_graph_add_constant_on" in missing_placement:
        raise _errors.MaxRuntimeError(f"{library_path} predates ABI 1.5: it places constants on the "
                                      f"host only, not on {place}", _errors.UNIMPLEMENTED)
    else:
        check(lib.max_graph_add_constant_on(graph._h, tensor._h, place._kind, place.id, byref(out)))
    return TensorValue(graph, out.value)


def _constant(graph: Graph, value, dtype=None, device=None) -> TensorValue:
    """A constant holding a copy of `value` (array-like) on `device` (None: the host); dtype
    converts it first."""
    if isinstance(value, Tensor):
        v = _add_constant(graph, value, device)
        return v if dtype is None or as_dtype(dtype) == v.dtype else ops.cast(v, dtype)
    target = as_dtype(dtype) if dtype is not None else None
    if target is not None and target not in (DType.bfloat16,) and _has_numpy(target):
        arr = np.asarray(value, dtype=target.to_numpy())
    else:
        arr = np.asarray(value)
        if arr.dtype == np.float64 and not isinstance(value, np.ndarray):
            arr = arr.astype(np.float32)
        if target is not None:  # no numpy dtype: build float32 (or as is) and cast in-graph
            arr = arr.astype(np.float32) if arr.dtype.kind in "fiub" else arr
    t = Tensor.from_numpy(arr)
    try:
        v = _add_constant(graph, t, device)
    finally:
        t.close()
    if target is not None and v.dtype != target:
        v = ops.cast(v, target)
    return v


def _has_numpy(dt: DType) -> bool:
    try:
        dt.to_numpy()
        return True
    except ValueError:
        return False


def _scalar_dtype(value, like: Optional[DType]) -> DType:
    if like is not None:
        return like
    if isinstance(value, (bool, np.bool_)):
        return DType.bool
    if isinstance(value, (int, np.integer)):
        return DType.int64
    return DType.float32


def _is_tensorish(v) -> bool:
    return isinstance(v, (TensorValue, Weight, Tensor, np.ndarray))


def _as_value(graph: Graph, v, like: Optional[DType], device=None) -> TensorValue:
    """`v` as a value of `graph`; a scalar or array becomes a constant on `device` (the other
    operands' device: a graph does not span devices)."""
    if isinstance(v, TensorValue):
        if v._graph is graph:
            return v
        scope = getattr(graph, "_scope", None)
        if scope is not None and scope.encloses(v._graph):
            return scope.capture(v)  # a control-flow branch using a value from outside
        raise _errors.MaxValueError("the value belongs to another graph",
                                    _errors.INVALID_ARGUMENT)
    if isinstance(v, Weight):
        return graph.add_weight(v)
    if isinstance(v, Tensor):
        return _constant(graph, v, device=device)
    if isinstance(v, (bool, int, float, np.generic)) and not isinstance(v, np.ndarray):
        return _constant(graph, v, _scalar_dtype(v, like), device)
    if isinstance(v, (np.ndarray, list, tuple)):
        if isinstance(v, np.ndarray):
            return _constant(graph, v, device=device)
        return _constant(graph, v, like, device)
    raise TypeError(f"cannot use {type(v).__name__} as a graph value")


def _find_graph(values) -> Graph:
    """The graph an op on `values` goes to: their graph, or the graph being built when that
    is a subgraph (a cond branch, a loop body) nested in theirs, which then captures them."""
    stack = _stack()
    current = stack[-1] if stack else None
    for v in values:
        if isinstance(v, TensorValue):
            scope = getattr(current, "_scope", None)
            if scope is not None and v._graph is not current and scope.encloses(v._graph):
                return current
            return v._graph
    return Graph.current


def _set_attr(attrs, name: str, kind: int, value, graph: Graph, op: str):
    n = name.encode()
    try:
        if kind == ATTR_INT:
            st = lib.max_attrs_set_int(attrs, n, operator.index(value))
        elif kind == ATTR_FLOAT:
            st = lib.max_attrs_set_float(attrs, n, float(value))
        elif kind == ATTR_BOOL:
            st = lib.max_attrs_set_bool(attrs, n, 1 if value else 0)
        elif kind == ATTR_STRING:
            if isinstance(value, QuantizationEncoding):
                value = value.name
            elif isinstance(value, enum.Enum) and isinstance(value.value, str):
                value = value.value
            if not isinstance(value, str):
                raise TypeError("expected a str")
            st = lib.max_attrs_set_string(attrs, n, value.encode())
        elif kind == ATTR_DTYPE:
            st = lib.max_attrs_set_dtype(attrs, n, as_dtype(value).value)
        elif kind == ATTR_INTS:
            vals = [operator.index(value)] if not isinstance(value, (list, tuple, np.ndarray)) \
                else [operator.index(x) for x in value]
            arr = (c_int64 * max(len(vals), 1))(*vals)
            st = lib.max_attrs_set_ints(attrs, n, arr, len(vals))
        elif kind == ATTR_FLOATS:
            vals = [float(value)] if not isinstance(value, (list, tuple, np.ndarray)) \
                else [float(x) for x in value]
            arr = (c_double * max(len(vals), 1))(*vals)
            st = lib.max_attrs_set_floats(attrs, n, arr, len(vals))
        elif kind == ATTR_DIMS:
            vals = [value] if isinstance(value, (int, str)) else list(value)
            arr, cnt = _dims_struct(vals)
            st = lib.max_attrs_set_dims(attrs, n, arr, cnt)
        elif kind == ATTR_GRAPH:
            idx = graph.add_subgraph(value) if isinstance(value, Graph) else operator.index(value)
            st = lib.max_attrs_set_graph(attrs, n, idx)
        elif kind == ATTR_DEVICE:
            d = DeviceRef.from_device(value)
            st = lib.max_attrs_set_device(attrs, n, d._kind, d.id)
        else:
            raise TypeError(f"unknown attribute kind {kind}")
    except (TypeError, ValueError) as e:
        if isinstance(e, _errors.MaxError):
            raise
        raise _errors.MaxValueError(
            f"op '{op}': attribute '{name}' ({_ATTR_KIND_NAMES[kind]}) cannot take {value!r}: {e}",
            _errors.INVALID_ARGUMENT) from None
    check(st, prefix=f"op '{op}': ")


_ARITY_MARKS = {INPUT_OPTIONAL: "=None", INPUT_VARIADIC: "[]", INPUT_ANY: "[]=[]"}


class OpSpec:
    """One registry op: its inputs (name, arity) and attributes (name, kind, presence)."""

    def __init__(self, name, version, inputs, attrs):
        self.name, self.version, self.inputs, self.attrs = name, version, inputs, attrs

    def signature(self) -> str:
        ins = [n + _ARITY_MARKS.get(a, "") for n, a in self.inputs]
        ats = [f"{n}: {_ATTR_KIND_NAMES[k]}" + ("" if p == ATTR_REQUIRED else "=...")
               for n, k, p in self.attrs]
        return f"{self.name}({', '.join(ins + ats)})"

    def __repr__(self):
        return f"OpSpec({self.signature()})"


def _read_registry() -> dict:
    n = c_size_t()
    check(lib.max_op_count(byref(n)))
    specs = {}
    for i in range(n.value):
        nm, ver = c_char_p(), c_int32()
        check(lib.max_op_at(i, byref(nm), byref(ver)))
        name = nm.value.decode()
        if name in specs and specs[name].version >= ver.value:
            continue
        bname = name.encode()
        ni, na = c_size_t(), c_size_t()
        check(lib.max_op_num_inputs(bname, 0, byref(ni)))
        inputs = []
        for j in range(ni.value):
            s, a = c_char_p(), c_int32()
            check(lib.max_op_input(bname, 0, j, byref(s), byref(a)))
            inputs.append((s.value.decode(), a.value))
        check(lib.max_op_num_attrs(bname, 0, byref(na)))
        attrs = []
        for j in range(na.value):
            s, k, p = c_char_p(), c_int32(), c_int32()
            check(lib.max_op_attr(bname, 0, j, byref(s), byref(k), byref(p)))
            attrs.append((s.value.decode(), k.value, p.value))
        specs[name] = OpSpec(name, ver.value, inputs, attrs)
    return specs


REGISTRY = _read_registry()
_LIST_RESULT_OPS = {"split", "chunk"}


def add_op(name: str, inputs: Sequence, attrs: Optional[dict] = None, version: int = 0,
           graph: Optional[Graph] = None):
    """Adds registry op `name` on flat `inputs` with `attrs` ({name: value}, converted by the
    registry's kinds) and returns its result value (a list for several results)."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise _errors.MaxNotFoundError(f"no op named '{name}' in the registry",
                                       _errors.NOT_FOUND)
    attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
    graph = graph or _find_graph(inputs)
    like = None
    place = None
    for v in inputs:
        if isinstance(v, (TensorValue, Weight)):
            dt = v.dtype
            if like is None or (like == DType.bool and dt != DType.bool):
                like = dt
            place = place or v.device
    vals = [_as_value(graph, v, like, place) for v in inputs]
    kinds = {n: k for n, k, _ in spec.attrs}
    ah = c_void_p()
    check(lib.max_attrs_create(byref(ah)))
    try:
        for k, v in attrs.items():
            if k not in kinds:
                raise _errors.MaxValueError(
                    f"op '{name}' has no attribute '{k}' (it has: "
                    f"{', '.join(kinds) or 'none'})", _errors.INVALID_ARGUMENT)
            _set_attr(ah.value, k, kinds[k], v, graph, name)
        arr = (c_void_p * max(len(vals), 1))(*[v._ptr for v in vals])
        cap = 8
        while True:
            outs = (c_void_p * cap)()
            count = c_size_t()
            st = lib.max_graph_add_op(graph._h, name.encode(), version, arr, len(vals), ah.value,
                                      outs, cap, byref(count))
            if st and lib.max_status_code(st) == _errors.OUT_OF_RANGE and count.value > cap:
                lib.max_status_release(st)
                cap = count.value
                continue
            check(st)
            break
    finally:
        lib.max_attrs_release(ah.value)
    res = [TensorValue(graph, outs[i]) for i in range(count.value)]
    if name in _LIST_RESULT_OPS or len(res) != 1:
        return res
    return res[0]


def _make_op(spec: OpSpec):
    attr_names = [a[0] for a in spec.attrs]

    def op(*args, **kwargs):
        args = list(args)
        flat = []
        for iname, arity in spec.inputs:
            if iname in kwargs:
                v = kwargs.pop(iname)
            elif arity == INPUT_OPTIONAL:
                v = args.pop(0) if args and _is_tensorish(args[0]) else None
            elif arity == INPUT_ANY:
                # Zero or more: a sequence when one comes next, else none (attrs follow).
                v = args.pop(0) if args and isinstance(args[0], (list, tuple)) else ()
            elif args:
                v = args.pop(0)
            else:
                raise TypeError(f"{spec.signature()}: missing input '{iname}'")
            if arity in (INPUT_VARIADIC, INPUT_ANY):
                if _is_tensorish(v) or isinstance(v, (int, float)):
                    raise TypeError(f"{spec.name}: input '{iname}' takes a sequence of values")
                flat.extend(v)
            elif v is not None:
                flat.append(v)
        attrs = {}
        free = [a for a in attr_names if a not in kwargs]
        if len(args) > len(free):
            raise TypeError(f"{spec.signature()}: too many positional arguments")
        attrs.update(zip(free, args))
        for k, v in kwargs.items():
            if k not in attr_names:
                raise TypeError(f"{spec.signature()}: unexpected argument '{k}'")
            attrs[k] = v
        return add_op(spec.name, flat, attrs, version=spec.version)

    op.__name__ = op.__qualname__ = spec.name
    op.__doc__ = f"Registry op {spec.signature()} (generated from libmax_c's op registry)."
    op.__signature__ = _op_signature(spec)
    op.spec = spec
    return op


def _op_signature(spec: OpSpec) -> inspect.Signature:
    """The signature op(*args, **kwargs) accepts, for inspect and help(): the inputs, then
    the attributes; None stands for an optional input left out or the registry's default."""
    params = []
    for name, arity in spec.inputs:
        default = {INPUT_OPTIONAL: None, INPUT_ANY: ()}.get(arity, inspect.Parameter.empty)
        params.append((name, default))
    for name, _, presence in spec.attrs:
        default = inspect.Parameter.empty if presence == ATTR_REQUIRED else None
        params.append((name, default))
    out, seen_default, keyword_only = [], False, False
    for name, default in params:
        # A required attribute after an optional one can only be given by keyword.
        keyword_only |= seen_default and default is inspect.Parameter.empty
        seen_default |= default is not inspect.Parameter.empty
        kind = (inspect.Parameter.KEYWORD_ONLY if keyword_only
                else inspect.Parameter.POSITIONAL_OR_KEYWORD)
        out.append(inspect.Parameter(name, kind, default=default))
    return inspect.Signature(out)


# ---- slicing ---------------------------------------------------------------------------------


def _bound(b):
    if b is None:
        return OPEN
    return _dim_value(b)


def _slice(x: TensorValue, index) -> TensorValue:
    if not isinstance(index, tuple):
        index = (index,)
    rank, shape = x.rank, x.shape
    if sum(1 for it in index if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consuming = sum(1 for it in index if it is not None and it is not Ellipsis)
    if consuming > rank:
        raise IndexError(f"too many indices: {consuming} for a value of rank {rank}")
    starts, stops, steps, out_dims, squeeze, new_axes = [], [], [], [], [], []
    axis = out_pos = 0
    for it in index:
        if it is None:
            new_axes.append(out_pos)
            out_pos += 1
        elif it is Ellipsis:
            for _ in range(rank - consuming):
                starts.append(OPEN), stops.append(OPEN), steps.append(1), out_dims.append(None)
                axis += 1
                out_pos += 1
        elif isinstance(it, slice) or (isinstance(it, tuple) and len(it) == 2
                                       and isinstance(it[0], slice)):
            sl, od = (it, None) if isinstance(it, slice) else it
            step = 1 if sl.step is None else operator.index(sl.step)
            starts.append(_bound(sl.start)), stops.append(_bound(sl.stop)), steps.append(step)
            out_dims.append(od)
            axis += 1
            out_pos += 1
        elif isinstance(it, TensorValue):
            raise TypeError("indexing with a TensorValue is not supported: use ops.gather")
        else:
            try:
                i = operator.index(it)
            except TypeError:
                raise TypeError(f"invalid index {it!r}: use ints, slices, None or ...") from None
            if isinstance(it, bool):
                raise TypeError("bool indices are not supported")
            starts.append(i), stops.append(OPEN if i == -1 else i + 1), steps.append(1)
            out_dims.append(None)
            squeeze.append(axis)
            axis += 1
    attrs = {"starts": starts, "stops": stops, "steps": steps, "squeeze_axes": squeeze,
             "new_axes": new_axes}
    if any(d is not None for d in out_dims):
        full = []
        for ax, (s, e, st, d) in enumerate(zip(starts, stops, steps, out_dims)):
            if d is None:
                if s == OPEN and e == OPEN and st == 1:
                    d = shape[ax]
                elif isinstance(shape[ax], int) and all(isinstance(b, int) for b in (s, e)):
                    sl = slice(None if s == OPEN else s, None if e == OPEN else e, st)
                    d = len(range(*sl.indices(shape[ax])))
                else:
                    raise ValueError(f"axis {ax}: give the output dim of a symbolic slice as "
                                     "(slice, dim)")
            full.append(d)
        attrs["out_dims"] = full
    return add_op("slice_tensor", [x], attrs)


# ---- the ops module ---------------------------------------------------------------------------

ops = types.ModuleType(__name__ + ".ops", "Graph ops, one per libmax_c registry op (generated), "
                       "plus MAX-shaped conveniences.")
for _name, _spec in REGISTRY.items():
    setattr(ops, _name, _make_op(_spec))


def _ops_constant(value, dtype=None, device=None):
    """A constant from an array-like or scalar (MAX's ops.constant(value, dtype, device))."""
    return _constant(Graph.current, value, dtype, device)


def _ops_top_k(input, k, axis=-1):
    """MAX's top_k(input, k, axis=-1): (values, indices)."""
    return tuple(add_op("top_k", [input], {"k": k, "axis": axis}))


def _ops_broadcast_to(x, shape=None, out_dims=None):
    if _is_tensorish(shape):
        return add_op("broadcast_to", [x, shape], {"out_dims": out_dims})
    return add_op("broadcast_to", [x], {"shape": shape, "out_dims": out_dims})


_raw_slice_tensor = ops.slice_tensor


def _ops_slice_tensor(x, indices=None, **attrs):
    """MAX's slice_tensor(x, indices) with numpy-style indices; with keyword attributes
    (starts=..., stops=...), the registry op itself."""
    if indices is None:
        return _raw_slice_tensor(x, **attrs)
    return _slice(x, tuple(indices) if isinstance(indices, list) else indices)


_CONV2D_MAX_ORDER = ("stride", "dilation", "padding", "groups", "bias", "input_layout",
                     "filter_layout")
_CONV2D_REGISTRY_ORDER = ("bias", "stride", "dilation", "padding", "groups", "input_layout",
                          "filter_layout")


def _ops_conv2d(x, filter, *args, **kwargs):
    """MAX's conv2d(x, filter, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0),
    groups=1, bias=None, input_layout=NHWC, filter_layout=RSCF): x NHWC, filter RSCF
    (H, W, Cin/groups, Cout), bias (Cout,), padding (top, bottom, left, right).

    The registry's order, conv2d(x, filter, bias, stride, ...), is accepted too: a tensor is
    never a stride, so a tensor third argument is the bias."""
    order = _CONV2D_REGISTRY_ORDER if args and _is_tensorish(args[0]) else _CONV2D_MAX_ORDER
    if len(args) > len(order):
        raise TypeError(f"conv2d takes at most {len(order) + 2} positional arguments")
    for name, value in zip(order, args):
        if name in kwargs:
            raise TypeError(f"conv2d: got multiple values for argument '{name}'")
        kwargs[name] = value
    unknown = set(kwargs) - set(order)
    if unknown:
        raise TypeError(f"conv2d: unexpected argument(s) {', '.join(sorted(unknown))}")
    bias = kwargs.pop("bias", None)
    for key in ("input_layout", "filter_layout"):
        kwargs[key] = _layout_name(kwargs.get(key))
    return add_op("conv2d", [x, filter] if bias is None else [x, filter, bias], kwargs)


_ops_conv2d.__signature__ = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d) for n, d in (
        ("x", inspect.Parameter.empty), ("filter", inspect.Parameter.empty),
        ("stride", (1, 1)), ("dilation", (1, 1)), ("padding", (0, 0, 0, 0)), ("groups", 1),
        ("bias", None), ("input_layout", "NHWC"), ("filter_layout", "RSCF"))])


def _layout_name(layout):
    # MAX passes ConvInputLayout / FilterLayout enums whose values are the layout's name.
    return getattr(layout, "value", layout)


def _ops_concat(original_vals, axis: int = 0):
    """MAX's concat(original_vals, axis=0): joins values of one dtype and rank along axis."""
    return add_op("concat", list(original_vals), {"axis": axis})


def _ops_repeat_interleave(x, repeats, axis=None, out_dim=None):
    """MAX's repeat_interleave(x, repeats, axis=None, out_dim=None): repeats is an int (every
    element that many times) or an integer tensor of per-element counts (then out_dim names
    the result's length along axis); axis=None flattens x first."""
    if isinstance(repeats, (list, tuple)):
        repeats = np.asarray(repeats, dtype=np.int64)
    if _is_tensorish(repeats):
        return add_op("repeat_interleave", [x, repeats], {"axis": axis, "out_dim": out_dim})
    return add_op("repeat_interleave", [x], {"repeats": repeats, "axis": axis,
                                             "out_dim": out_dim})


def _ops_constant_external(name: str, type: TensorType) -> TensorValue:
    """MAX's constant_external(name, type): an external weight of that type, bound by name
    when the model is loaded (the same name and type is the same weight)."""
    return add_op("constant_external", [], {"name": name, "dtype": type.dtype,
                                            "shape": type.shape, "device": type.device},
                  graph=Graph.current)


def _range_length(start, stop, step):
    try:
        return len(np.arange(start, stop, step))
    except (ValueError, ZeroDivisionError):
        return None  # let the engine report the bad step


def _ops_range(start, stop, step=1, out_dim=None, *, dtype=None, device=None):
    """MAX's range(start, stop, step=1, out_dim=None, *, dtype, device): [start, stop) by
    step. Python scalars become constants of `dtype` (by default int64 for ints, else
    float32) and fix the length; with tensor bounds, out_dim names the length."""
    bounds = (start, stop, step)
    scalars = [not isinstance(v, (TensorValue, Weight, Tensor, np.ndarray)) for v in bounds]
    if dtype is None:
        like = next((v.dtype for v in bounds if isinstance(v, (TensorValue, Weight))), None)
        ints = all(isinstance(v, (int, np.integer)) for v, s in zip(bounds, scalars) if s)
        dtype = like or (DType.int64 if ints else DType.float32)
    if out_dim is None and all(scalars):
        out_dim = _range_length(start, stop, step)
    graph = _find_graph(bounds)
    values = [_constant(graph, v, dtype) if s else v for v, s in zip(bounds, scalars)]
    return add_op("range", values, {"out_dim": out_dim}, graph=graph)


def _bind_args(op: str, names: Sequence[str], args, kwargs) -> dict:
    """{parameter: argument} for a call with `args` in the order of `names`, then `kwargs`."""
    if len(args) > len(names):
        raise TypeError(f"{op} takes at most {len(names)} positional arguments")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{op}: unexpected argument '{key}'")
        if key in bound:
            raise TypeError(f"{op}: got multiple values for argument '{key}'")
        bound[key] = value
    return bound


def _ops_qmatmul(*args, **kwargs) -> TensorValue:
    """MAX's qmatmul(encoding, config, lhs, *rhs): lhs @ dequantize(rhs).T without
    dequantizing, for lhs float32 [..., K] and rhs uint8 [N, row_bytes], pre-transposed (one
    encoded row of K elements per output column, as GGUF stores a linear layer's weight).
    `encoding` is a QuantizationEncoding or its name; `config` (GPTQ) must be None, and the
    block encodings take a single rhs. The registry's order, qmatmul(lhs, rhs, encoding), is
    accepted too: a tensor is never an encoding."""
    if args and _is_tensorish(args[0]):
        bound = _bind_args("qmatmul", ("lhs", "rhs", "encoding"), args, kwargs)
    else:
        if len(args) > 4:
            raise TypeError("qmatmul: the block encodings take one rhs tensor, not auxiliary ones")
        bound = _bind_args("qmatmul", ("encoding", "config", "lhs", "rhs"), args, kwargs)
    if bound.get("config") is not None:
        raise _errors.MaxValueError("qmatmul: config (a GPTQ QuantizationConfig) is not "
                                    "supported; the block encodings need none",
                                    _errors.INVALID_ARGUMENT)
    missing = [k for k in ("encoding", "lhs", "rhs") if bound.get(k) is None]
    if missing:
        raise TypeError(f"qmatmul: missing {', '.join(missing)}")
    return add_op("qmatmul", [bound["lhs"], bound["rhs"]],
                  {"encoding": encoding_name(bound["encoding"])})


def _ops_dequantize(*args, **kwargs) -> TensorValue:
    """MAX's dequantize(encoding, quantized): uint8 [..., row_bytes] blocks -> float32
    [..., k]. The registry's order, dequantize(quantized, encoding), is accepted too."""
    registry_order = bool(args) and _is_tensorish(args[0])
    names = ("quantized", "encoding") if registry_order else ("encoding", "quantized")
    bound = _bind_args("dequantize", names, args, kwargs)
    missing = [k for k in ("encoding", "quantized") if bound.get(k) is None]
    if missing:
        raise TypeError(f"dequantize: missing {', '.join(missing)}")
    return add_op("dequantize", [bound["quantized"]],
                  {"encoding": encoding_name(bound["encoding"])})


def _positional(*names, var=None) -> inspect.Signature:
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    if var:
        params.append(inspect.Parameter(var, inspect.Parameter.VAR_POSITIONAL))
    return inspect.Signature(params)


_ops_qmatmul.__signature__ = _positional("encoding", "config", "lhs", var="rhs")
_ops_dequantize.__signature__ = _positional("encoding", "quantized")


def _ops_weight(weight: Weight) -> TensorValue:
    return Graph.current.add_weight(weight)


ops.constant = _ops_constant
ops.concat = _ops_concat
ops.conv2d = _ops_conv2d
ops.repeat_interleave = _ops_repeat_interleave
ops.constant_external = _ops_constant_external
ops.range = _ops_range
ops.top_k = _ops_top_k
ops.broadcast_to = _ops_broadcast_to
ops.slice_tensor = _ops_slice_tensor
ops.qmatmul = _ops_qmatmul
ops.dequantize = _ops_dequantize
ops.add_op = add_op
ops.REGISTRY = REGISTRY
ops.DeviceRef = DeviceRef
ops.TensorType = TensorType
ops.TensorValue = TensorValue
sys.modules[ops.__name__] = ops

Value = TensorValue

__all__ = ["DeviceKind", "DeviceRef", "TensorType", "Weight", "Graph", "TensorValue", "Value",
           "ops", "OpSpec", "REGISTRY", "add_op"]

# cond, while_loop and call (MAX's control flow) build subgraphs with this module's pieces.
from . import _control_flow  # noqa: E402  (needs the names above)

_control_flow.install(ops)
