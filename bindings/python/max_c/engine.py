"""max_c.engine: compiling and running graphs (MAX's max.engine).

    session = InferenceSession()
    model = session.load(graph, weights_registry={"w": w})
    out = model.execute(x)[0].to_numpy()

InferenceSession wraps a max_context (the devices and the thread team), Model a max_model
(a compiled model with its weights bound). Models are thread-safe: many Python threads may
execute one model at once (ctypes releases the GIL during the call).
"""
import ctypes
import numbers
import os
from ctypes import POINTER, byref, c_char_p, c_int32, c_int64, c_size_t, c_uint64, c_void_p
from typing import Iterable, List, Mapping, Optional, Sequence

import numpy as np

from . import _errors
from ._errors import check
from ._lib import (lib, max_compile_options_t, max_context_options_t, max_run_options_t, missing_engine,
                   missing_graphs, missing_run_options)
from .driver import Device, Tensor, _borrow_numpy, _Handle, _int_out
from .dtype import DType
from .graph import Graph


def _require_engine():
    # The driver and graph modules load without the engine symbols; the engine cannot.
    if missing_engine:
        raise _errors.MaxRuntimeError(
            f"the loaded libmax_c lacks the engine (ABI 1.2) symbols {', '.join(missing_engine)}",
            _errors.UNIMPLEMENTED)


# ---- TensorSpec ------------------------------------------------------------------------------


class TensorSpec:
    """The name, dtype, shape and device of a model input, output or weight (MAX's TensorSpec).

    shape is a list with an int per static dim and None per symbolic (dynamic) dim, as in MAX;
    dim_names holds the symbol's text ("batch", "seq + 1") at those axes and None elsewhere.
    """

    __slots__ = ("name", "dtype", "shape", "dim_names", "device")

    def __init__(self, shape: Sequence[Optional[int]], dtype: DType, name: str,
                 device: Optional[Device] = None, dim_names: Optional[Sequence] = None):
        self.shape = list(shape)
        self.dtype = dtype
        self.name = name
        self.device = device
        self.dim_names = list(dim_names) if dim_names is not None else [None] * len(self.shape)

    @classmethod
    def _read(cls, spec_ptr) -> "TensorSpec":
        """Copies a max_tensor_spec_t into Python values (the caller releases the handle)."""
        name, dtype, rank = c_char_p(), c_int32(), c_size_t()
        check(lib.max_tensor_spec_name(spec_ptr, byref(name)))
        check(lib.max_tensor_spec_dtype(spec_ptr, byref(dtype)))
        check(lib.max_tensor_spec_rank(spec_ptr, byref(rank)))
        shape, names = [], []
        for axis in range(rank.value):
            dim, text = c_int64(), c_char_p()
            check(lib.max_tensor_spec_dim(spec_ptr, axis, byref(dim), byref(text)))
            symbolic = dim.value < 0
            shape.append(None if symbolic else dim.value)
            names.append(text.value.decode() if symbolic and text.value else None)
        dev = c_void_p()
        check(lib.max_tensor_spec_device(spec_ptr, byref(dev)))
        return cls(shape, DType(dtype.value), name.value.decode(), Device._wrap(dev.value), names)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def dims(self) -> list:
        """The shape as max_c.graph writes it: ints, and the symbol text where symbolic."""
        return [n if d is None else d for d, n in zip(self.shape, self.dim_names)]

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (
            self.name, self.dtype, self.shape, self.dim_names) == (
            other.name, other.dtype, other.shape, other.dim_names)

    __hash__ = None

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"


def _read_specs(compiled_ptr, count_fn, get_fn) -> List[TensorSpec]:
    n = c_size_t()
    check(count_fn(compiled_ptr, byref(n)))
    specs = []
    for i in range(n.value):
        out = c_void_p()
        check(get_fn(compiled_ptr, i, byref(out)))
        try:
            specs.append(TensorSpec._read(out.value))
        finally:
            lib.max_tensor_spec_release(out.value)
    return specs


# ---- argument conversion ---------------------------------------------------------------------


def _scalar_array(value, spec: Optional[TensorSpec]) -> np.ndarray:
    if spec is not None:
        try:
            return np.asarray(value, dtype=spec.dtype.to_numpy())
        except ValueError:
            pass  # no numpy dtype (bfloat16, float8): let the engine report the mismatch
    return np.asarray(value)


class _Args:
    """Input or weight tensors as a C array of handles; releases the ones it made when done.

    driver.Tensors pass as they are; numpy arrays are borrowed without a copy when contiguous
    (as raw handles: no Tensor wrapper for a tensor that lives one call); other DLPack
    producers (torch, jax, ...) are imported through DLPack; Python and numpy scalars become
    rank-0 tensors of the spec's dtype (MAX's int | float | bool | generic)."""

    def __init__(self):
        self.ptrs = []
        self._temps = []  # handles we own
        self._imports = []  # Tensors we made from DLPack producers

    def add(self, value, spec: Optional[TensorSpec], what: str, check_dtype=False) -> None:
        """Converts `value`; with check_dtype, a dtype other than spec's raises TypeError."""
        try:
            h = self._handle(value, spec, what)
        except _errors.MaxError as e:
            raise type(e)(f"{what}: {e.message}", e.code) from None
        self.ptrs.append(h)
        if check_dtype and spec is not None:
            _check_dtype(h, spec, what)

    def _handle(self, value, spec, what):
        if isinstance(value, Tensor):
            return value._h
        if isinstance(value, (bool, numbers.Number, np.generic)):
            value = _scalar_array(value, spec)
        if isinstance(value, np.ndarray):
            h = _borrow_numpy(value)
            self._temps.append(h)
            return h
        if hasattr(value, "__dlpack__"):
            t = Tensor.from_dlpack(value)
            self._imports.append(t)
            return t._h
        raise TypeError(f"{what}: cannot take a value of type {type(value).__name__} (give a "
                        "driver.Tensor, a numpy array, a DLPack-capable array or a scalar)")

    def __len__(self):
        return len(self.ptrs)

    def handles(self):
        return (c_void_p * max(len(self.ptrs), 1))(*self.ptrs)

    def close(self) -> None:
        # The engine retains what it keeps (weights, outputs that alias an input); our
        # references can go now rather than at the next garbage collection.
        for h in self._temps:
            lib.max_tensor_release(h)
        for t in self._imports:
            t.close()
        self._temps, self._imports = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _check_dtype(handle, spec: TensorSpec, what: str) -> None:
    # MAX raises TypeError for an input of the wrong dtype; libmax_c reports it as
    # INVALID_ARGUMENT like any other bad input, so the binding checks the dtype first and
    # leaves everything else (count, rank, dims, symbols) to the C check.
    got = DType(_int_out(lib.max_tensor_dtype, handle))
    if got != spec.dtype:
        raise _errors.dtype_mismatch(what, got, spec.dtype)


def _names_array(names: Sequence[str]):
    return (c_char_p * max(len(names), 1))(*[n.encode() for n in names])


def _tensor_list(list_ptr) -> List[Tensor]:
    try:
        n = c_size_t()
        check(lib.max_tensor_list_size(list_ptr, byref(n)))
        out = []
        for i in range(n.value):
            t = c_void_p()
            check(lib.max_tensor_list_get(list_ptr, i, byref(t)))
            out.append(Tensor._wrap(t.value))
        return out
    finally:
        lib.max_tensor_list_release(list_ptr)


def _is_registry(value) -> bool:
    """A max_c.weights.Weights (imported late: the weights API is ABI 1.3)."""
    from .weights import Weights
    return isinstance(value, Weights)


def _weights_args(weights_registry: Optional[Mapping], specs: List[TensorSpec]):
    """(names array, _Args) for a registry {name: array}; names are checked by the engine."""
    registry = dict(weights_registry or {})
    by_name = {s.name: s for s in specs}
    names = [str(k) for k in registry]
    args = _Args()
    try:
        for name, value in zip(names, registry.values()):
            args.add(value, by_name.get(name), f"weight '{name}'", check_dtype=True)
    except BaseException:
        args.close()
        raise
    return _names_array(names), args, len(args)


# ---- Model -----------------------------------------------------------------------------------


class RunOptions:
    """Limits for Model.execute calls, as onnxruntime's RunOptions: `timeout` in seconds
    (None, the default: no limit), counted from each call's start, and `terminate`, which
    any thread may set to True to stop every call running under these options (and refuse
    new ones until it is set back to False). Checked before every step of the model and
    every iteration of a loop (ONNX Loop and Scan), so a model whose loop would run for ever
    can be stopped. One RunOptions may serve many calls and threads."""

    def __init__(self, timeout: Optional[float] = None, terminate: bool = False):
        self._flag = c_int32(0)  # the cancel flag the library polls; lives as long as self
        self.timeout = timeout
        self.terminate = terminate

    @property
    def timeout(self) -> Optional[float]:
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: Optional[float]) -> None:
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
                raise TypeError(f"RunOptions.timeout must be a number of seconds or None, not {seconds!r}")
            if not seconds > 0:
                raise ValueError(f"RunOptions.timeout must be positive, not {seconds!r}")
        self._timeout = None if seconds is None else float(seconds)

    @property
    def terminate(self) -> bool:
        return bool(self._flag.value)

    @terminate.setter
    def terminate(self, value: bool) -> None:
        # One aligned int32 store, which the library reads atomically between steps.
        self._flag.value = 1 if value else 0

    def __repr__(self):
        return f"RunOptions(timeout={self._timeout!r}, terminate={self.terminate!r})"


def _run_options_struct(run_options: RunOptions) -> max_run_options_t:
    if not isinstance(run_options, RunOptions):
        raise TypeError(f"run_options must be a max_c.engine.RunOptions, not {type(run_options).__name__}")
    if missing_run_options:
        raise _errors.MaxRuntimeError("this libmax_c has no run options (ABI 1.8): missing "
                                      + ", ".join(missing_run_options), _errors.UNIMPLEMENTED)
    o = max_run_options_t()
    check(lib.max_run_options_init(byref(o), ctypes.sizeof(o)))
    if run_options.timeout is not None:
        # At least 1 us: a positive timeout never means "none".
        o.timeout_us = max(1, min(int(run_options.timeout * 1e6), 2**62))
    o.cancel_flag = ctypes.pointer(run_options._flag)
    return o


class Model(_Handle):
    """A loaded model that you can execute (MAX's max.engine.Model). Do not construct it:
    InferenceSession.load makes it."""

    _kind = "Model"
    _release = staticmethod(lib.max_model_release) if not missing_engine else None

    def __init__(self, *args, **kwargs):
        raise TypeError("Model is created by InferenceSession.load")

    @classmethod
    def _create(cls, compiled_ptr, weights_registry) -> "Model":
        self = object.__new__(cls)
        self._inputs = _read_specs(compiled_ptr, lib.max_compiled_model_num_inputs,
                                   lib.max_compiled_model_input)
        self._outputs = _read_specs(compiled_ptr, lib.max_compiled_model_num_outputs,
                                    lib.max_compiled_model_output)
        self._weights = _read_specs(compiled_ptr, lib.max_compiled_model_num_weights,
                                    lib.max_compiled_model_weight)
        self._input_index = {s.name: i for i, s in enumerate(self._inputs)}
        out = c_void_p()
        if _is_registry(weights_registry):
            check(lib.max_model_create_from_weights(compiled_ptr, weights_registry._h, byref(out)))
        else:
            names, args, n = _weights_args(weights_registry, self._weights)
            with args:
                check(lib.max_model_create(compiled_ptr, names, args.handles(), n, byref(out)))
        self._adopt(out.value)
        return self

    # ---- metadata -------------------------------------------------------------------------

    @property
    def input_metadata(self) -> List[TensorSpec]:
        """The inputs, in order, as TensorSpecs (None in shape for dynamic dims)."""
        return list(self._inputs)

    @property
    def output_metadata(self) -> List[TensorSpec]:
        """The outputs, in order, as TensorSpecs."""
        return list(self._outputs)

    @property
    def weights_metadata(self) -> List[TensorSpec]:
        """The weights the graph declares (what load and reload take by name)."""
        return list(self._weights)

    @property
    def input_devices(self) -> List[Device]:
        return [s.device for s in self._inputs]

    @property
    def output_devices(self) -> List[Device]:
        return [s.device for s in self._outputs]

    @property
    def devices(self) -> List[Device]:
        seen = []
        for d in self.input_devices + self.output_devices:
            if d not in seen:
                seen.append(d)
        return seen

    # ---- execution ------------------------------------------------------------------------

    def execute(self, *args, run_options: Optional["RunOptions"] = None) -> List[Tensor]:
        """Runs the model on positional inputs (driver.Tensor, numpy arrays or other DLPack
        arrays, and Python or numpy scalars for rank-0 inputs) and returns the outputs as
        new driver.Tensors. Inputs are only read. An input of the wrong dtype raises TypeError,
        other bad inputs (count, rank, dims) ValueError; both name the input and the model
        stays usable. With `run_options` (a RunOptions), the call stops at its timeout
        (MaxDeadlineExceededError) or once another thread sets its `terminate`
        (MaxCancelledError), naming the op it stopped before; the model stays usable."""
        h = self._h
        with self._positional(args) as inputs:
            out = c_void_p()
            if run_options is None:
                check(lib.max_model_execute(h, inputs.handles(), len(inputs), byref(out)))
            else:
                options = _run_options_struct(run_options)
                check(lib.max_model_execute_with_options(h, inputs.handles(), len(inputs), byref(options),
                                                         byref(out)))
        return _tensor_list(out.value)

    def _positional(self, args) -> "_Args":
        inputs = _Args()
        try:
            for i, value in enumerate(args):
                spec = self._inputs[i] if i < len(self._inputs) else None
                inputs.add(value, spec, _input_label(i, spec), check_dtype=True)
        except BaseException:
            inputs.close()
            raise
        return inputs

    def __call__(self, *args, **kwargs) -> List[Tensor]:
        """execute() with keyword arguments as named inputs; positional arguments fill the
        first inputs in order."""
        if not kwargs:
            return self.execute(*args)
        named = {}
        for i, value in enumerate(args):
            if i >= len(self._inputs):
                raise _errors.MaxValueError(
                    f"the model takes {len(self._inputs)} input(s), {len(args)} were given "
                    "positionally", _errors.INVALID_ARGUMENT)
            named[self._inputs[i].name] = value
        for name, value in kwargs.items():
            if name in named:
                raise TypeError(f"input '{name}' is given both by position and by name")
            named[name] = value
        return self._execute_named(named)

    def _execute_named(self, named: Mapping) -> List[Tensor]:
        h = self._h
        names = list(named)
        with _Args() as inputs:
            for name in names:
                i = self._input_index.get(name)
                spec = self._inputs[i] if i is not None else None
                inputs.add(named[name], spec, f"input '{name}'", check_dtype=True)
            out = c_void_p()
            check(lib.max_model_execute_named(h, _names_array(names), inputs.handles(),
                                              len(names), byref(out)))
        return _tensor_list(out.value)

    # ---- device graphs --------------------------------------------------------------------

    def capture(self, graph_keys, *inputs) -> List[Tensor]:
        """Runs the model on `inputs` and records the run under `graph_keys` (an int, or a
        sequence of one int per device of the model), replacing what the key held. Returns
        the outputs: every replay of the key rewrites these same tensors in place. On a GPU
        the record is a CUDA graph, replayed with one launch. A graph keeps the weights it
        was captured with."""
        return self._graph_call(lib.max_model_capture, graph_keys, inputs, with_outputs=True)

    def replay(self, graph_keys, *inputs) -> None:
        """Replays the graph of `graph_keys` on `inputs` (the shapes it was captured with),
        rewriting the outputs capture returned. RuntimeError when nothing is captured under
        the key."""
        self._graph_call(lib.max_model_replay, graph_keys, inputs)

    def debug_verify_replay(self, graph_keys, *inputs) -> None:
        """Runs the model eagerly on `inputs` and checks that it launches what the graph of
        `graph_keys` recorded, in order. RuntimeError names the first difference, or says
        that nothing is captured under the key."""
        self._graph_call(lib.max_model_debug_verify_replay, graph_keys, inputs)

    def _graph_call(self, fn, graph_keys, inputs, with_outputs=False):
        if missing_graphs:
            raise _errors.MaxRuntimeError("this libmax_c has no device graphs (ABI 1.4): missing "
                                          + ", ".join(missing_graphs), _errors.UNIMPLEMENTED)
        keys = _graph_keys(graph_keys)
        if not inputs:
            raise _errors.MaxValueError("no inputs were given: a graph is captured and replayed "
                                        "on the model's inputs", _errors.INVALID_ARGUMENT)
        h = self._h
        with self._positional(inputs) as args:
            if not with_outputs:
                check(fn(h, keys, len(keys), args.handles(), len(args)))
                return None
            out = c_void_p()
            check(fn(h, keys, len(keys), args.handles(), len(args), byref(out)))
        return _tensor_list(out.value)

    def reload(self, weights_registry: Mapping, /) -> None:
        """Replaces the named weights in place, without recompiling; the others stay. Nothing
        changes when a weight is rejected. Executions already running finish with the old
        weights."""
        h = self._h
        if _is_registry(weights_registry):
            check(lib.max_model_reload_from_weights(h, weights_registry._h))
            return
        names, args, n = _weights_args(weights_registry, self._weights)
        with args:
            check(lib.max_model_reload(h, names, args.handles(), n))

    def __repr__(self):
        if self.closed:
            return "Model(<closed>)"
        ins = ", ".join(f"{s.name}: {s.dtype.name}[{', '.join(map(str, s.dims))}]"
                        for s in self._inputs)
        return f"Model(inputs=[{ins}], outputs={len(self._outputs)})"


def _graph_keys(graph_keys):
    """graph_keys as a C array of uint64: TypeError unless an int or a sequence of ints,
    ValueError for a key outside the uint64 range."""
    def is_int(k):
        return isinstance(k, numbers.Integral) and not isinstance(k, bool)

    if is_int(graph_keys):
        keys = [graph_keys]
    elif isinstance(graph_keys, Sequence) and not isinstance(graph_keys, (str, bytes)) \
            and all(is_int(k) for k in graph_keys):
        keys = list(graph_keys)
    else:
        raise TypeError(f"graph_keys must be an int or a sequence of ints, not {graph_keys!r}")
    for k in keys:
        if not 0 <= int(k) < 1 << 64:
            raise _errors.MaxValueError(f"graph key {int(k)} is outside the uint64 range",
                                        _errors.INVALID_ARGUMENT)
    return (c_uint64 * len(keys))(*(int(k) for k in keys))


def _input_label(i: int, spec: Optional[TensorSpec]) -> str:
    return f"input {i} ('{spec.name}')" if spec is not None else f"input {i}"


# ---- InferenceSession ------------------------------------------------------------------------


class InferenceSession(_Handle):
    """Loads and runs models (MAX's max.engine.InferenceSession).

    devices: the devices to run on (default: the host CPU only). num_threads: the size of the
    thread team models run on (default: one per available core)."""

    _kind = "InferenceSession"
    _release = staticmethod(lib.max_context_release)

    def __init__(self, devices: Optional[Iterable[Device]] = None,
                 num_threads: Optional[int] = None, *, custom_extensions=None):
        _require_engine()
        if custom_extensions:
            raise _errors.MaxRuntimeError("custom extensions are not supported by max_c",
                                          _errors.UNIMPLEMENTED)
        devices = list(devices) if devices is not None else []
        opts = max_context_options_t()
        check(lib.max_context_options_init(byref(opts), ctypes.sizeof(opts)))
        handles = (c_void_p * max(len(devices), 1))(*[d._h for d in devices])
        opts.devices = ctypes.cast(handles, POINTER(c_void_p)) if devices else None
        opts.num_devices = len(devices)
        if num_threads is not None:
            opts.num_threads = int(num_threads)
        out = c_void_p()
        check(lib.max_context_create(byref(opts), byref(out)))
        self._adopt(out.value)

    @property
    def devices(self) -> List[Device]:
        """The devices models of this session run on."""
        h = self._h
        n = c_size_t()
        check(lib.max_context_num_devices(h, byref(n)))
        devs = []
        for i in range(n.value):
            d = c_void_p()
            check(lib.max_context_device(h, i, byref(d)))
            devs.append(Device._wrap(d.value))
        return devs

    @property
    def num_threads(self) -> int:
        n = c_int32()
        check(lib.max_context_num_threads(self._h, byref(n)))
        return n.value

    def load(self, model, *, custom_extensions=None, custom_ops_path=None,
             weights_registry: Optional[Mapping] = None, fuse: bool = True,
             fold_constants: bool = True, plan_cache_capacity: int = 16,
             copy_inputs_to_device: bool = False, device: Optional[Device] = None) -> Model:
        """Compiles `model` (a max_c.graph.Graph, the path of a MAXG file saved with
        Graph.save, or of an .onnx model, whose initializers come with it) and binds the
        weights in weights_registry: a max_c.weights.Weights, or {name: numpy array, Tensor or
        DLPack array}; every weight the graph declares must be given, except an ONNX model's
        own. Contiguous host arrays are used in place, not copied: do not write to them while
        the model lives.

        fuse, fold_constants and plan_cache_capacity are max_c's compile options (fusion and
        folding never change results; the plan cache keeps that many concrete shapes). With
        copy_inputs_to_device, inputs on another device than the model's (numpy arrays fed to a
        GPU model) are copied to it on each call instead of raising ValueError.

        device places a model file wholly on the host, as an ONNX model is (it carries no
        placement), on that device of this session, e.g. load("m.onnx", device=Accelerator()).
        A graph names its own devices: device is for paths only."""
        if custom_extensions or custom_ops_path:
            raise _errors.MaxRuntimeError("custom extensions are not supported by max_c",
                                          _errors.UNIMPLEMENTED)
        if device is not None and isinstance(model, Graph):
            raise _errors.MaxValueError("device= places a model file; a graph names its own devices "
                                        "(build it on DeviceRef.GPU())", _errors.INVALID_ARGUMENT)
        opts = _compile_options(fuse, fold_constants, plan_cache_capacity, copy_inputs_to_device)
        if device is not None:
            opts.file_device = device._h
        compiled = self._compile(model, opts)
        try:
            return Model._create(compiled, weights_registry)
        finally:
            lib.max_compiled_model_release(compiled)  # the model holds its own reference

    def _compile(self, model, opts):
        h = self._h
        out = c_void_p()
        if isinstance(model, Graph):
            check(lib.max_context_compile(h, model._h, byref(opts), byref(out)))
        elif isinstance(model, (str, os.PathLike)):
            check(lib.max_context_compile_file(h, os.fsencode(model), byref(opts), byref(out)))
        else:
            raise TypeError(f"load() takes a max_c.graph.Graph or a MAXG or ONNX file path, not "
                            f"{type(model).__name__}")
        return out.value

    def __repr__(self):
        if self.closed:
            return "InferenceSession(<closed>)"
        return f"InferenceSession(devices={self.devices}, num_threads={self.num_threads})"


def _compile_options(fuse: bool, fold_constants: bool, plan_cache_capacity: int,
                     copy_inputs_to_device: bool):
    opts = max_compile_options_t()
    check(lib.max_compile_options_init(byref(opts), ctypes.sizeof(opts)))
    opts.enable_fusion = 1 if fuse else 0
    opts.enable_constant_folding = 1 if fold_constants else 0
    opts.plan_cache_capacity = int(plan_cache_capacity)
    opts.copy_inputs_to_device = 1 if copy_inputs_to_device else 0
    return opts


__all__ = ["InferenceSession", "Model", "RunOptions", "TensorSpec"]
