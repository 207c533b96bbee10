"""A small ONNX interpreter over PyTorch (eager, inference mode): the bench's third peer where
torch is installed. It runs node by node the operators the bench's models use, the way
eager PyTorch runs the original modules (one kernel call per op, batch norm unfolded), so
its figures stand for PyTorch eager without torch.onnx's own importer (torch has none).

On the CPU by default; TorchOnnxModel(path, device=torch.device("cuda")) moves the weights
(initializers) there once, as a module's parameters and buffers are. The Constant nodes
(the exporter's Python scalars and shape pieces) and Shape's results stay on the host, as
they are Python numbers in the eager module; an op that mixes them with device tensors gets
them on the device (constants copied once, then cached). device_inputs() moves the inputs
there once and run() leaves the outputs there: the caller synchronizes (torch.cuda.synchronize)
to time a run, and outputs_to_numpy() reads them back.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

_DTYPES = {TensorProto.FLOAT: torch.float32, TensorProto.DOUBLE: torch.float64,
           TensorProto.INT64: torch.int64, TensorProto.INT32: torch.int32,
           TensorProto.BOOL: torch.bool, TensorProto.FLOAT16: torch.float16}


def _tensor(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array, copy=True))


# Inputs after the first that these ops read as host integers (shapes, axes, bounds), never as
# device data; every other input of every op is data, and goes to the device of the op.
_HOST_PARAMS = {"Reshape": 1, "Unsqueeze": 1, "Slice": 1, "Expand": 1, "Split": 1}
_HOST_OPS = {"Shape", "Range"}


def _ints(t) -> list:
    return [int(v) for v in t.reshape(-1).tolist()]


def _gather(x, index, axis=0):
    axis = axis % x.dim()
    flat = index.reshape(-1)
    flat = torch.where(flat < 0, flat + x.shape[axis], flat)
    out = x.index_select(axis, flat)
    return out.reshape(x.shape[:axis] + index.shape + x.shape[axis + 1:])


def _unsqueeze(x, axes):
    rank = x.dim() + axes.numel()
    for a in sorted(a % rank for a in _ints(axes)):
        x = x.unsqueeze(a)
    return x


def _reshape(x, shape, allowzero=0):
    dims = _ints(shape)
    if not allowzero:
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return x.reshape(dims)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = _ints(axes) if axes is not None else list(range(starts.numel()))
    steps = _ints(steps) if steps is not None else [1] * len(axes)
    index = [slice(None)] * x.dim()
    for a, s, e, st in zip(axes, _ints(starts), _ints(ends), steps):
        if st <= 0:
            raise NotImplementedError("Slice with a non-positive step")
        n = x.shape[a]
        s, e = (max(min(v + n if v < 0 else v, n), 0) for v in (s, e))
        index[a % x.dim()] = slice(s, e, st)
    return x[tuple(index)]


def _expand(x, shape):
    return x.expand(torch.broadcast_shapes(x.shape, tuple(_ints(shape))))


def _div(a, b):
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        return a / b
    return torch.div(a, b, rounding_mode="trunc")


def _conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1, **_):
    if list(pads[:2]) != list(pads[2:]):
        x = F.pad(x, (pads[1], pads[3], pads[0], pads[2]))
        pads = (0, 0, 0, 0)
    return F.conv2d(x, w, b, tuple(strides), tuple(pads[:2]), tuple(dilations), group)


def _max_pool(x, kernel_shape, strides=None, pads=(0, 0, 0, 0), ceil_mode=0, **_):
    if list(pads[:2]) != list(pads[2:]):
        raise NotImplementedError("MaxPool with uneven pads")
    return F.max_pool2d(x, tuple(kernel_shape), tuple(strides or kernel_shape), tuple(pads[:2]),
                        ceil_mode=bool(ceil_mode))


def _gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    y = alpha * ((a.T if transA else a) @ (b.T if transB else b))
    return y if c is None else y + beta * c


def _flatten(x, axis=1):
    return x.reshape(math.prod(x.shape[:axis]), -1)


_OPS = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": _div, "Pow": torch.pow, "Erf": torch.erf, "Tanh": torch.tanh, "Relu": torch.relu,
    "Identity": lambda x: x, "MatMul": torch.matmul, "Where": torch.where,
    "Shape": lambda x: torch.tensor(x.shape, dtype=torch.int64),
    "Gather": _gather, "Unsqueeze": _unsqueeze, "Reshape": _reshape, "Slice": _slice,
    "Expand": _expand, "Gemm": _gemm, "Flatten": _flatten, "Conv": _conv, "MaxPool": _max_pool,
    "Concat": lambda *xs, axis: torch.cat(xs, dim=axis),
    "Transpose": lambda x, perm: x.permute(*perm),
    "Cast": lambda x, to, **_: x.to(_DTYPES[to]),
    "Softmax": lambda x, axis=-1: torch.softmax(x, axis),
    "Split": lambda x, split, axis=0: torch.split(x, _ints(split), dim=axis),
    "Range": lambda s, e, d: torch.arange(s.item(), e.item(), d.item(), dtype=s.dtype,
                                          device=s.device),
    "LayerNormalization": lambda x, w, b, axis=-1, epsilon=1e-5, **_: F.layer_norm(
        x, x.shape[axis % x.dim():], w, b, epsilon),
    "BatchNormalization": lambda x, w, b, mean, var, epsilon=1e-5, **_: F.batch_norm(
        x, mean, var, w, b, False, 0.0, epsilon),
    "GlobalAveragePool": lambda x: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
}


class TorchOnnxModel:
    """The graph of an ONNX file, run with torch ops on `device` (default the CPU); __call__
    takes {name: numpy array} and returns the outputs as numpy arrays."""

    def __init__(self, path, device=None):
        import onnx
        self.device = torch.device(device or "cpu")
        model = onnx.load(str(path))
        graph = model.graph
        self.values = {t.name: _tensor(numpy_helper.to_array(t)).to(self.device)
                       for t in graph.initializer}
        self.nodes = []
        for node in graph.node:
            if node.op_type not in _OPS and node.op_type != "Constant":
                raise NotImplementedError(f"the torch peer has no {node.op_type}")
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            if node.op_type == "Constant":
                self.values[node.output[0]] = _tensor(numpy_helper.to_array(attrs["value"]))
                continue
            data = (() if node.op_type in _HOST_OPS
                    else range(_HOST_PARAMS.get(node.op_type, len(node.input))))
            self.nodes.append((_OPS[node.op_type], list(node.input), list(node.output), attrs,
                               frozenset(data)))
        self.input_names = [i.name for i in graph.input if i.name not in self.values]
        self.output_names = [o.name for o in graph.output]
        self._on_device = {}  # constant name -> its copy on the device

    @property
    def on_host(self) -> bool:
        return self.device.type == "cpu"

    def device_inputs(self, feeds: dict) -> dict:
        """The inputs as tensors on the model's device (a copy there, made once)."""
        return {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.device)
                for k, v in feeds.items()}

    def run(self, inputs: dict) -> list:
        """The outputs, as tensors on the model's device, for inputs from device_inputs();
        on a GPU the kernels may still be running when it returns."""
        env = dict(self.values)
        env.update(inputs)
        with torch.inference_mode():
            for fn, ins, outs, attrs, data in self.nodes:
                args = [env[i] if i else None for i in ins]
                if not self.on_host:
                    args = self._placed(ins, args, data)
                result = fn(*args, **attrs)
                if len(outs) == 1:
                    env[outs[0]] = result
                else:
                    env.update(zip(outs, result))
        return [env[name] for name in self.output_names]

    def _placed(self, names, args, data):
        """args with the host tensors in data positions moved to the device, when some
        input of the op is there already (host-only shape math stays on the host)."""
        if not any(isinstance(a, torch.Tensor) and a.device.type != "cpu" for a in args):
            return args
        placed = list(args)
        for i in data:
            a = args[i] if i < len(args) else None
            if isinstance(a, torch.Tensor) and a.device.type == "cpu":
                if names[i] in self.values:  # a constant: copied once
                    if names[i] not in self._on_device:
                        self._on_device[names[i]] = a.to(self.device)
                    placed[i] = self._on_device[names[i]]
                else:
                    placed[i] = a.to(self.device)
        return placed

    @staticmethod
    def outputs_to_numpy(outputs: list) -> list:
        return [o.cpu().numpy() if o.device.type != "cpu" else o.numpy() for o in outputs]

    def __call__(self, feeds: dict) -> list:
        if self.on_host:
            return [o.numpy() for o in self.run({k: torch.from_numpy(v) for k, v in feeds.items()})]
        return self.outputs_to_numpy(self.run(self.device_inputs(feeds)))
