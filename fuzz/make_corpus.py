#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target under fuzz/corpus/<target>/ (committed; rerun
after changing this file):

    MAX_C_LIBRARY=build/libmax_c.so PYTHONPATH=bindings/python .venv/bin/python fuzz/make_corpus.py

Small valid files (each under 4 KiB), one feature each, so that the fuzzers start from inputs
that get past every decoder: ONNX models built with the `onnx` package (the operators whose
import, compile and kernels the issue found fragile: Conv, EyeLike, Einsum, OneHot, Pad, Loop,
Expand, ...), MAXG graphs built through the Python binding, safetensors and GGUF files written
byte by byte here (independently of the library's writers), and byte recipes for the graph
builder. Deterministic: the same files every run.
"""
import json
import os
import random
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent / "corpus"
MAX_BYTES = 4096


def write(target, name, data):
    assert len(data) < MAX_BYTES, f"{target}/{name}: {len(data)} bytes"
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


# ---- ONNX ---------------------------------------------------------------------------------

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array, raw=True):
    t = numpy_helper.from_array(np.asarray(array), name)
    if not raw:  # the typed repeated fields instead of raw_data
        t = helper.make_tensor(name, helper.np_dtype_to_tensor_dtype(np.asarray(array).dtype),
                               np.asarray(array).shape, np.asarray(array).flatten().tolist())
    return t


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    return m.SerializeToString()


def onnx_models():
    r = np.arange
    x4 = [vi("x", F, [1, 1, 4, 4])]
    y = [vi("y", F, None)]
    n = helper.make_node
    yield "conv", model([n("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[1, 1])], x4, y,
                        [init("w", r(9, dtype=np.float32).reshape(1, 1, 3, 3)), init("b", np.ones(1, np.float32))])
    yield "conv_typed_data", model([n("Conv", ["x", "w"], ["y"], kernel_shape=[2, 2], dilations=[1, 1], group=1)],
                                   x4, y, [init("w", np.ones((2, 1, 2, 2), np.float32), raw=False)])
    yield "conv_transpose", model([n("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])], x4, y,
                                  [init("w", np.ones((1, 1, 2, 2), np.float32))])
    yield "pool", model([n("MaxPool", ["x"], ["t"], kernel_shape=[2, 2], strides=[2, 2]),
                         n("AveragePool", ["t"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 0])], x4, y)
    yield "batchnorm", model([n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)], x4, y,
                             [init(k, np.ones(1, np.float32)) for k in "sbmv"])
    xy = [vi("a", F, ["n", 3]), vi("b", F, [3, 2])]
    yield "matmul_add_relu", model([n("MatMul", ["a", "b"], ["t"]), n("Add", ["t", "c"], ["u"]),
                                    n("Relu", ["u"], ["y"])], xy, y, [init("c", np.ones(2, np.float32))])
    yield "gemm", model([n("Gemm", ["a", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
                        [vi("a", F, [2, 3])], y, [init("w", np.ones((4, 3), np.float32)),
                                                  init("c", np.zeros(4, np.float32))])
    yield "reshape_transpose", model([n("Reshape", ["x", "s"], ["t"]), n("Transpose", ["t"], ["y"], perm=[1, 0])],
                                     x4, y, [init("s", np.array([4, 4], np.int64))])
    yield "expand", model([n("Expand", ["a", "s"], ["y"])], [vi("a", F, [3, 1])], y,
                          [init("s", np.array([2, 3, 4], np.int64))])
    yield "gather", model([n("Gather", ["a", "i"], ["y"], axis=1)], [vi("a", F, [2, 3])], y,
                          [init("i", np.array([[0, 2], [1, -1]], np.int64))])
    yield "gather_elements", model([n("GatherElements", ["a", "i"], ["y"], axis=0)], [vi("a", F, [2, 2])], y,
                                   [init("i", np.array([[0, 1], [1, 0]], np.int64))])
    yield "slice", model([n("Slice", ["a", "s", "e", "ax", "st"], ["y"])], [vi("a", F, [4, 5])], y,
                         [init("s", np.array([1, 0], np.int64)), init("e", np.array([3, 5], np.int64)),
                          init("ax", np.array([0, 1], np.int64)), init("st", np.array([1, 2], np.int64))])
    yield "concat_split", model([n("Concat", ["a", "a"], ["t"], axis=1), n("Split", ["t", "sp"], ["y", "z"], axis=1)],
                                [vi("a", F, [2, 3])], [vi("y", F, None), vi("z", F, None)],
                                [init("sp", np.array([2, 4], np.int64))])
    yield "softmax_layernorm", model([n("Softmax", ["a"], ["t"], axis=-1),
                                      n("LayerNormalization", ["t", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
                                     [vi("a", F, [2, 4])], y, [init("g", np.ones(4, np.float32)),
                                                               init("b", np.zeros(4, np.float32))])
    yield "reduce", model([n("ReduceSum", ["a", "ax"], ["t"], keepdims=1), n("ReduceMean", ["t"], ["y"], axes=[0])],
                          [vi("a", F, [2, 3, 4])], y, [init("ax", np.array([1], np.int64))])
    yield "eyelike", model([n("EyeLike", ["a"], ["y"], k=1, dtype=F)], [vi("a", F, [3, 4])], y)
    yield "einsum", model([n("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")], xy, y)
    yield "onehot", model([n("OneHot", ["i", "d", "v"], ["y"], axis=-1)], [vi("i", I64, [3])], y,
                          [init("d", np.array(4, np.int64)), init("v", np.array([0, 1], np.float32))])
    yield "pad", model([n("Pad", ["a", "p", "c"], ["y"], mode="constant")], [vi("a", F, [2, 2])], y,
                       [init("p", np.array([1, 0, 1, 2], np.int64)), init("c", np.array(0.5, np.float32))])
    yield "pad_reflect", model([n("Pad", ["a", "p"], ["y"], mode="reflect")], [vi("a", F, [3, 3])], y,
                               [init("p", np.array([1, 1, 1, 1], np.int64))])
    body = helper.make_graph(
        [n("Add", ["v", "one"], ["v2"]), n("Identity", ["c"], ["c2"])], "body",
        [vi("i", I64, []), vi("c", TensorProto.BOOL, []), vi("v", F, [2])],
        [vi("c2", TensorProto.BOOL, []), vi("v2", F, [2])],
        [init("one", np.ones(2, np.float32))])
    yield "loop", model([n("Loop", ["m", "cond", "a"], ["y"], body=body)], [vi("a", F, [2])], y,
                        [init("m", np.array(3, np.int64)), init("cond", np.array(True))])
    then_g = helper.make_graph([n("Neg", ["a"], ["t"])], "then", [], [vi("t", F, [2])])
    else_g = helper.make_graph([n("Abs", ["a"], ["e"])], "else", [], [vi("e", F, [2])])
    yield "if", model([n("If", ["p"], ["y"], then_branch=then_g, else_branch=else_g)],
                      [vi("p", TensorProto.BOOL, []), vi("a", F, [2])], y)
    yield "cast_where", model([n("Cast", ["a"], ["t"], to=TensorProto.INT32), n("Equal", ["t", "z"], ["c"]),
                               n("Where", ["c", "a", "b"], ["y"])], [vi("a", F, [4]), vi("b", F, [4])], y,
                              [init("z", np.zeros(1, np.int32))])
    yield "tile_range", model([n("Tile", ["a", "r"], ["y"]), n("Range", ["s", "l", "d"], ["z"])],
                              [vi("a", F, [2, 2])], [vi("y", F, None), vi("z", I64, None)],
                              [init("r", np.array([2, 1], np.int64)), init("s", np.array(0, np.int64)),
                               init("l", np.array(5, np.int64)), init("d", np.array(2, np.int64))])
    yield "constant_of_shape", model([n("ConstantOfShape", ["s"], ["y"], value=init("v", np.array([2.0], np.float32)))],
                                     [], y, [init("s", np.array([2, 3], np.int64))])
    yield "constant_unsqueeze", model([n("Constant", [], ["c"], value=init("v", r(6, dtype=np.float32).reshape(2, 3))),
                                       n("Unsqueeze", ["c", "ax"], ["t"]), n("Squeeze", ["t", "ax"], ["y"])],
                                      [], y, [init("ax", np.array([0], np.int64))])
    yield "topk_cumsum", model([n("TopK", ["a", "k"], ["v", "i"], axis=-1), n("CumSum", ["v", "ax"], ["y"])],
                               [vi("a", F, [2, 5])], y, [init("k", np.array([3], np.int64)),
                                                         init("ax", np.array(1, np.int64))])
    yield "resize", model([n("Resize", ["x", "", "sc"], ["y"], mode="nearest")], x4, y,
                          [init("sc", np.array([1, 1, 2, 2], np.float32))], opset=13)
    yield "clip_opset11", model([n("Clip", ["a", "lo", "hi"], ["y"])], [vi("a", F, [3])], y,
                                [init("lo", np.array(0, np.float32)), init("hi", np.array(1, np.float32))], opset=11)
    yield "squeeze_opset7", model([n("Unsqueeze", ["a"], ["t"], axes=[0]), n("Squeeze", ["t"], ["y"], axes=[0])],
                                  [vi("a", F, [3])], y, opset=7)
    yield "gru", model([n("GRU", ["a", "w", "r"], ["y"], hidden_size=2)], [vi("a", F, [2, 1, 3])], y,
                       [init("w", np.ones((1, 6, 3), np.float32) * 0.1), init("r", np.ones((1, 6, 2), np.float32) * 0.1)])
    yield "scatter_nd", model([n("ScatterND", ["a", "i", "u"], ["y"])], [vi("a", F, [4, 2])], y,
                              [init("i", np.array([[1], [3]], np.int64)), init("u", np.ones((2, 2), np.float32))])
    yield "int_matmul_shape", model([n("Shape", ["a"], ["s"]), n("Cast", ["s"], ["f"], to=F), n("Mul", ["f", "f"], ["y"])],
                                    [vi("a", F, ["n", 3])], y)


# ---- MAXG (through the Python binding) ---------------------------------------------------

def maxg_graphs():
    from max_c.dtype import DType
    from max_c.graph import Graph, TensorType, Weight, add_op, ops
    f32 = DType.float32

    def graph(name, types, body):
        with Graph(name, input_types=[TensorType(f32, t) for t in types]) as g:
            body(g, *g.inputs)
        return g.serialize()

    def mlp(g, x):
        w = g.add_weight(Weight("w", f32, [4, 3]))
        g.output(ops.softmax(ops.relu(x @ w + ops.constant(np.ones(3, np.float32)))))

    yield "mlp", graph("mlp", [["batch", 4]], mlp)
    yield "conv2d", graph("conv", [[1, 5, 5, 2]], lambda g, x: g.output(
        add_op("conv2d", [x, ops.constant(np.ones((3, 3, 2, 4), np.float32))], {"padding": [1, 1, 1, 1]})))
    yield "shape_ops", graph("shapes", [[2, 6]], lambda g, x: g.output(
        add_op("transpose", [add_op("reshape", [x], {"shape": [3, 4]})], {"axis_1": 0, "axis_2": 1})))
    yield "broadcast_gather", graph("bg", [[3, 1]], lambda g, x: g.output(add_op("gather", [
        add_op("broadcast_to", [x], {"shape": [2, 3, 4]}), ops.constant(np.array([0, 1], np.int64))], {"axis": 1})))
    yield "constant_fold", graph("fold", [[4]], lambda g, x: g.output(
        x + ops.constant(np.arange(4, dtype=np.float32)) * ops.constant(np.full(4, 2.0, np.float32))))
    yield "reductions", graph("red", [[2, 5]], lambda g, x: g.output(
        add_op("cumsum", [x], {"axis": 1}), add_op("argmax", [x], {"axis": -1})))
    yield "slice_cast", graph("sl", [[4, 4]], lambda g, x: g.output(add_op("cast", [add_op(
        "slice_tensor", [x], {"starts": [1, 0], "stops": [3, 4], "steps": [1, 2]})], {"dtype": DType.int32})))


# ---- safetensors ----------------------------------------------------------------------------

def safetensors_file(tensors, metadata=None):
    header, data = {}, b""
    for name, (code, shape, payload) in tensors.items():
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_files():
    f32 = np.arange(6, dtype=np.float32).tobytes()
    yield "f32", safetensors_file({"w": ("F32", [2, 3], f32)}, {"format": "pt"})
    yield "mixed", safetensors_file({"a": ("F16", [2], np.ones(2, np.float16).tobytes()),
                                     "b": ("BF16", [1, 2], b"\x80\x3f\x00\x40"),
                                     "c": ("I64", [], struct.pack("<q", -7)),
                                     "d": ("U8", [0, 4], b""), "e": ("BOOL", [3], b"\x01\x00\x01")})
    yield "f8_i32_f64", safetensors_file({"q": ("F8_E4M3", [4], b"\x38\x40\x00\xb8"),
                                          "r": ("I32", [2], struct.pack("<ii", 1, -1)),
                                          "s": ("F64", [1], struct.pack("<d", 0.5))})
    yield "empty", safetensors_file({})
    yield "index_like_metadata", safetensors_file({"x": ("F32", [1], f32[:4])}, {"k": "v", "total_size": "4"})


# ---- GGUF (version 3) -----------------------------------------------------------------------

def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, v):
    if kind == "u32": return struct.pack("<II", 4, v)
    if kind == "i8": return struct.pack("<Ib", 1, v)
    if kind == "f32": return struct.pack("<If", 6, v)
    if kind == "bool": return struct.pack("<IB", 7, v)
    if kind == "str": return struct.pack("<I", 8) + gguf_string(v)
    if kind == "u64": return struct.pack("<IQ", 10, v)
    if kind == "arr_i32": return struct.pack("<IIQ", 9, 5, len(v)) + b"".join(struct.pack("<i", x) for x in v)
    if kind == "arr_str": return struct.pack("<IIQ", 9, 8, len(v)) + b"".join(gguf_string(x) for x in v)
    raise ValueError(kind)


def gguf_file(kvs, tensors, alignment=32, version=3):
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, kind, v in kvs:
        out += gguf_string(key) + gguf_value(kind, v)
    data, infos = b"", b""
    for name, ne, ggml_type, payload in tensors:
        data += b"\0" * (-len(data) % alignment)
        infos += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        infos += struct.pack("<IQ", ggml_type, len(data))
        data += payload
    out += infos
    out += b"\0" * (-len(out) % alignment)
    return out + data


def gguf_files():
    f32 = np.arange(8, dtype=np.float32).tobytes()
    q8_0 = struct.pack("<e", 0.5) + bytes(range(32))  # one Q8_0 block: f16 scale + 32 int8
    q4_0 = struct.pack("<e", 0.25) + bytes(range(16))  # one Q4_0 block: f16 scale + 16 bytes
    kvs = [("general.architecture", "str", "llama"), ("general.name", "str", "fuzz"),
           ("llama.block_count", "u32", 1), ("llama.rope.freq_base", "f32", 10000.0),
           ("tokenizer.ggml.tokens", "arr_str", ["a", "b"]), ("x.ids", "arr_i32", [1, -1]),
           ("x.flag", "bool", 1), ("x.small", "i8", -3), ("x.big", "u64", 1 << 40)]
    yield "f32_f16", gguf_file(kvs, [("w", [4, 2], 0, f32), ("h", [2], 1, np.ones(2, np.float16).tobytes())])
    yield "q8_0_q4_0", gguf_file(kvs[:2], [("q8", [32], 8, q8_0), ("q4", [32], 2, q4_0)])
    yield "aligned_64", gguf_file([("general.alignment", "u32", 64)], [("w", [2, 2, 2], 0, f32)], alignment=64)
    yield "version2", gguf_file(kvs[:1], [("w", [8], 0, f32)], version=2)
    yield "metadata_only", gguf_file(kvs, [])


# ---- the graph builder: byte recipes ----------------------------------------------------------

def builder_recipes():
    rng = random.Random(26)
    for i in range(24):
        yield f"recipe_{i:02d}", bytes(rng.randrange(256) for _ in range(16 + 8 * i))


def main():
    for name, data in onnx_models():
        for target in ("onnx_bytes", "onnx_structured", "onnx_execute"):
            write(target, name + ".onnx", data)
    for name, data in safetensors_files():
        write("safetensors", name + ".safetensors", data)
    for name, data in gguf_files():
        write("gguf", name + ".gguf", data)
    for name, data in builder_recipes():
        write("graph_builder", name, data)
    if not os.environ.get("MAX_C_LIBRARY"):
        sys.exit("MAX_C_LIBRARY is not set: the MAXG seeds are written through the Python binding")
    for name, data in maxg_graphs():
        write("maxg", name + ".maxg", data)
    for folder in sorted(ROOT.iterdir()):
        print(f"{folder.name}: {len(list(folder.iterdir()))} seeds")


if __name__ == "__main__":
    main()
