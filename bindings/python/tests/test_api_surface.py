"""max_c's Python API has MAX's public names (spec/max_api_inventory.md §1-§6) with MAX's
argument names, for everything libmax_c supports; and every registry op has a numpy
conformance test in tests/ops.

A signature in the tables is the inventory's, without self: "a, b" must be accepted in that
order (extra parameters of ours must have defaults), "*" marks keyword-only parameters,
"*args"/"**kwargs" var parameters; None means a property or attribute. Names of the inventory
that libmax_c cannot support (streams, Mojo extensions, buffers, quantized and distributed
ops, ...) are listed in UNSUPPORTED, so every name is accounted for.
"""
import glob
import inspect
import os
import re

import pytest

from max_c import driver, engine, graph, quantization
from max_c.dtype import DType
from max_c.graph import ops
from max_c.quantization import QuantizationEncoding

DTYPE_MEMBERS = {
    "bool": 1, "int8": 135, "uint8": 134, "int16": 137, "uint16": 136, "int32": 139,
    "uint32": 138, "int64": 141, "uint64": 140, "float4_e2m1fn": 64, "float8_e4m3fn": 75,
    "float8_e4m3fnuz": 76, "float8_e5m2": 77, "float8_e5m2fnuz": 78, "float16": 79,
    "bfloat16": 80, "float32": 81, "float64": 82,
    # max_c's own: the 2- and 4-bit integers, numbered by MAX's scheme for integers
    "uint2": 130, "int2": 131, "uint4": 132, "int4": 133,
    # newer than the inventory's seed: upstream MAX's number
    "float8_e8m0fnu": 73,
}

# §1 - §4: (object, member) -> signature
SURFACE = {
    # §1 max.dtype
    (DType, "align"): None, (DType, "size_in_bits"): None, (DType, "size_in_bytes"): None,
    (DType, "is_float"): "", (DType, "is_float8"): "", (DType, "is_half"): "",
    (DType, "is_integral"): "", (DType, "is_signed_integral"): "",
    (DType, "is_unsigned_integral"): "", (DType, "to_numpy"): "", (DType, "from_numpy"): "dtype",
    # §2 max.driver
    (driver, "accelerator_count"): "",
    (driver, "CPU"): "id", (driver, "Accelerator"): "id, device_memory_limit",
    (driver.Device, "api"): None, (driver.Device, "id"): None, (driver.Device, "is_host"): None,
    (driver.Device, "label"): None, (driver.Device, "synchronize"): "",
    (driver, "Tensor"): "dtype, shape, device, pinned",
    (driver.Tensor, "contiguous"): "", (driver.Tensor, "copy"): "device",
    (driver.Tensor, "device"): None, (driver.Tensor, "dtype"): None,
    (driver.Tensor, "shape"): None, (driver.Tensor, "rank"): None,
    (driver.Tensor, "element_size"): None, (driver.Tensor, "num_elements"): None,
    (driver.Tensor, "from_dlpack"): "array, *, copy", (driver.Tensor, "from_numpy"): "arr",
    (driver.Tensor, "inplace_copy_from"): "src", (driver.Tensor, "is_contiguous"): None,
    (driver.Tensor, "is_host"): None, (driver.Tensor, "item"): "",
    (driver.Tensor, "scalar"): "value, dtype, device", (driver.Tensor, "zeros"): "shape, dtype, device",
    (driver.Tensor, "to"): "device", (driver.Tensor, "to_numpy"): "",
    (driver.Tensor, "view"): "dtype, shape",
    (driver.Tensor, "__dlpack__"): "*, stream, max_version, dl_device, copy",
    (driver.Tensor, "__dlpack_device__"): "",
    # §3 max.engine
    (engine, "InferenceSession"): "devices, num_threads, *, custom_extensions",
    (engine.InferenceSession, "devices"): None,
    (engine.InferenceSession, "load"):
        "model, *, custom_extensions, custom_ops_path, weights_registry",
    (engine.Model, "execute"): "*args", (engine.Model, "__call__"): "*args, **kwargs",
    (engine.Model, "input_metadata"): None, (engine.Model, "output_metadata"): None,
    (engine.Model, "reload"): "weights_registry", (engine.Model, "devices"): None,
    (engine.Model, "input_devices"): None, (engine.Model, "output_devices"): None,
    (engine.Model, "capture"): "graph_keys, *inputs", (engine.Model, "replay"): "graph_keys, *inputs",
    (engine.Model, "debug_verify_replay"): "graph_keys, *inputs",
    (engine.TensorSpec, "dtype"): None, (engine.TensorSpec, "name"): None,
    (engine.TensorSpec, "shape"): None,
    # §4 max.graph
    (graph, "Graph"): "name, forward, input_types, path, *args",
    (graph.Graph, "add_weight"): "weight, force_initial_weight_on_host",
    (graph.Graph, "add_subgraph"): "name, forward, input_types, path",
    (graph.Graph, "inputs"): None, (graph.Graph, "output"): "*outputs",
    (graph.Graph, "output_types"): None,
    (graph, "TensorValue"): None, (graph, "Value"): None,
    (graph.TensorValue, "T"): None, (graph.TensorValue, "argmax"): "axis",
    (graph.TensorValue, "broadcast_to"): "shape", (graph.TensorValue, "cast"): "dtype",
    (graph.TensorValue, "device"): None, (graph.TensorValue, "dtype"): None,
    (graph.TensorValue, "flatten"): "start_dim, end_dim", (graph.TensorValue, "max"): "axis",
    (graph.TensorValue, "min"): "axis", (graph.TensorValue, "mean"): "axis",
    (graph.TensorValue, "stdev"): "axis", (graph.TensorValue, "var"): "axis",
    (graph.TensorValue, "permute"): "dims", (graph.TensorValue, "rank"): None,
    (graph.TensorValue, "rebind"): "shape, message", (graph.TensorValue, "reshape"): "shape",
    (graph.TensorValue, "shape"): None, (graph.TensorValue, "transpose"): "dim_1, dim_2",
    (graph.TensorValue, "type"): None, (graph.TensorValue, "tensor"): None,
    (graph, "Weight"): "name, dtype, shape, device",
    (graph, "TensorType"): "dtype, shape, device",
    (graph, "DeviceRef"): "device_type, id",
    (graph.DeviceRef, "CPU"): "id", (graph.DeviceRef, "GPU"): "id",
    (graph.DeviceRef, "device_type"): None, (graph.DeviceRef, "id"): None,
    (graph.DeviceRef, "from_device"): "device", (graph.DeviceRef, "to_device"): "",
    (graph.DeviceRef, "is_cpu"): "", (graph.DeviceRef, "is_gpu"): "",
    (graph, "DeviceKind"): None, (graph.DeviceKind, "from_string"): "txt",
    (ops, "DeviceRef"): None, (ops, "TensorType"): None,
    # §6 max.graph.quantization
    (quantization, "BlockParameters"): "elements_per_block, block_size",
    (quantization, "QuantizationEncoding"): None,
    (QuantizationEncoding, "block_parameters"): None, (QuantizationEncoding, "block_size"): None,
    (QuantizationEncoding, "elements_per_block"): None, (QuantizationEncoding, "is_gguf"): None,
    (QuantizationEncoding, "name"): None,
}

# §5 max.graph.ops: name -> signature, for the ops libmax_c has.
OPS = {
    **{name: "x" for name in (
        "abs", "acos", "atanh", "cos", "erf", "exp", "floor", "log", "log1p", "negate", "relu",
        "round", "rsqrt", "sigmoid", "silu", "sin", "sqrt", "tanh", "trunc", "logical_not",
        "is_inf", "is_nan", "as_interleaved_complex")},
    "gelu": "x, approximate",
    **{name: "lhs, rhs" for name in (
        "add", "sub", "mul", "div", "mod", "pow", "equal", "not_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "matmul", "outer")},
    "max": "x, y, axis", "min": "x, y, axis",
    "where": "condition, x, y",
    "argmax": "x, axis", "argmin": "x, axis", "mean": "x, axis", "sum": "x, axis",
    "cumsum": "x, axis, exclusive, reverse", "argsort": "x, ascending",
    "top_k": "input, k, axis",
    "softmax": "value, axis", "logsoftmax": "value, axis",
    "layer_norm": "input, gamma, beta, epsilon",
    "band_part": "x, num_lower, num_upper, exclude",
    "conv2d": "x, filter, stride, dilation, padding, groups, bias, input_layout, filter_layout",
    "avg_pool2d": "input, kernel_size, stride, dilation, padding, ceil_mode, count_boundary",
    "max_pool2d": "input, kernel_size, stride, dilation, padding, ceil_mode",
    "reshape": "x, shape", "flatten": "x, start_dim, end_dim", "squeeze": "x, axis",
    "unsqueeze": "x, axis", "transpose": "x, axis_1, axis_2", "permute": "x, dims",
    "broadcast_to": "x, shape, out_dims", "concat": "original_vals, axis",
    "stack": "values, axis", "split": "x, split_sizes, axis", "chunk": "x, chunks, axis",
    "tile": "x, repeats", "repeat_interleave": "x, repeats, axis, out_dim",
    "pad": "input, paddings, mode, value", "rebind": "x, shape, message",
    "shape_to_tensor": "shape", "cast": "x, dtype",
    "slice_tensor": "x, indices", "gather": "input, indices, axis",
    "gather_nd": "input, indices, batch_dims", "scatter": "input, updates, indices, axis",
    "scatter_nd": "input, updates, indices",
    "constant": "value, dtype, device", "constant_external": "name, type",
    "range": "start, stop, step, out_dim, *, dtype, device",
    "qmatmul": "encoding, config, lhs, *rhs", "dequantize": "encoding, quantized",
    "cond": "pred, out_types, then_fn, else_fn",
    "while_loop": "initial_values, predicate, body",
    "call": "graph, *args, *, prefix",
}

# Inventory names libmax_c has no support for (no C entry point or op); kept as a record so
# that a name moving into libmax_c also moves into the tables above.
UNSUPPORTED = {
    "DType": "to_torch from_torch (no torch dependency)",
    "driver": "accelerator_api accelerator_architecture_name devices_exist load_devices "
              "scan_available_devices DeviceSpec DeviceStream; Device.architecture_name "
              "can_access default_stream is_compatible stats; Tensor.stream pinned mmap",
    "engine": "gpu_profiling set_mojo_* set_split_k_reduction_precision use_old_top_k_kernel "
              "Model.kernel_summaries signature MojoValue",
    "graph": "BufferType BufferValue Dim/Shape classes KernelLibrary always_ready_chain "
             "device_chains add_subgraph(custom_extensions=, devices=) TensorValue.print to",
    "quantization": "QuantizationEncoding.GPTQ QuantizationConfig (GPTQ); qmatmul(config=) "
                    "and auxiliary rhs tensors",
    "ops": "conv2d_transpose conv3d fold resize irfft hann_window "
           "transfer_to assert_same_device masked_scatter nonzero buffer_* custom inplace_custom "
           "allgather print; rebind(layout=); cond/while_loop on buffers",
}


def _parse(spec: str):
    """[(name, kind)] from "a, b, *, c" / "*args" / "**kwargs"."""
    params, keyword_only = [], False
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part == "*":
            keyword_only = True
        elif part.startswith("**"):
            params.append((part[2:], inspect.Parameter.VAR_KEYWORD))
        elif part.startswith("*"):
            params.append((part[1:], inspect.Parameter.VAR_POSITIONAL))
        else:
            params.append((part, inspect.Parameter.KEYWORD_ONLY if keyword_only
                           else inspect.Parameter.POSITIONAL_OR_KEYWORD))
    return params


def _signature_problems(fn, spec: str) -> list:
    """What keeps `fn` from taking the calls MAX's signature `spec` allows."""
    ours = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    by_name = {p.name: p for p in ours}
    problems = []
    for name, kind in _parse(spec):
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            if not any(p.kind == kind for p in ours):
                problems.append(f"no {'*' if kind == inspect.Parameter.VAR_POSITIONAL else '**'}"
                                f"{name}")
            continue
        p = by_name.get(name)
        if p is None:
            problems.append(f"no parameter '{name}'")
        elif kind == inspect.Parameter.KEYWORD_ONLY and p.kind != kind:
            problems.append(f"'{name}' is not keyword-only")
    # MAX's positional parameters in MAX's order (a name MAX takes positionally must sit at
    # the same position here).
    positional = [n for n, k in _parse(spec) if k == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    ours_positional = [p.name for p in ours if p.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if ours_positional[:len(positional)] != positional and not problems:
        problems.append(f"positional order is ({', '.join(ours_positional)}), MAX's is "
                        f"({', '.join(positional)})")
    named = {n for n, _ in _parse(spec)}
    for p in ours:
        if p.name not in named and p.default is inspect.Parameter.empty and p.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            problems.append(f"extra required parameter '{p.name}'")
    return problems


def _label(owner, member) -> str:
    return f"{getattr(owner, '__name__', owner)}.{member}"


def test_dtype_members_have_max_values():
    wrong = {n: getattr(DType, n, None) for n, v in DTYPE_MEMBERS.items()
             if getattr(getattr(DType, n, None), "value", None) != v}
    assert not wrong, wrong


@pytest.mark.parametrize("owner, member", list(SURFACE), ids=[_label(*k) for k in SURFACE])
def test_public_name_has_max_signature(owner, member):
    spec = SURFACE[(owner, member)]
    attr = inspect.getattr_static(owner, member, None)
    assert attr is not None or member in dir(owner), f"{_label(owner, member)} is missing"
    if spec is None:
        return
    fn = getattr(owner, member)
    assert callable(fn), f"{_label(owner, member)} is not callable"
    problems = _signature_problems(fn, spec)
    assert not problems, f"{_label(owner, member)}{inspect.signature(fn)} vs MAX's ({spec}): " \
                         + "; ".join(problems)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_max_signature(name):
    fn = getattr(ops, name, None)
    assert fn is not None, f"ops.{name} is missing"
    problems = _signature_problems(fn, OPS[name])
    assert not problems, f"ops.{name}{inspect.signature(fn)} vs MAX's ({OPS[name]}): " \
                         + "; ".join(problems)


def test_every_registry_op_is_in_ops():
    missing = sorted(n for n in graph.REGISTRY if not callable(getattr(ops, n, None)))
    assert not missing, f"registry ops without an ops function: {missing}"


def test_every_registry_op_has_a_conformance_test():
    # A test exercises an op by naming it: ops.<name> (called, or put in a table of ops) or
    # add_op("<name>", ...).
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
    source = "".join(open(f).read() for f in sorted(glob.glob(os.path.join(here, "test_*.py"))))
    used = set(re.findall(r"\bops\.([A-Za-z_]\w*)\b", source))
    used |= set(re.findall(r"add_op\(\s*[\"'](\w+)[\"']", source))
    missing = sorted(set(graph.REGISTRY) - used)
    assert not missing, f"registry ops no test in tests/ops exercises: {missing}"
