"""A small ONNX graph builder that writes what torch.onnx.export (TorchScript exporter, opset
17) writes for the same PyTorch code: scalars and shape pieces as Constant nodes, weights as
initializers, linear layers as MatMul on a pre-transposed [in, out] weight then Add(bias, ·),
view() as Shape/Gather/Unsqueeze/Concat feeding Reshape. Both engines get such graphs from
users, so the bench measures the graphs they will really see, shape plumbing included.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # the opset-17 era: older than any runtime in use, so every one reads it


class OnnxBuilder:
    def __init__(self, name: str):
        self.name = name
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._count = {}

    def _fresh(self, stem: str) -> str:
        n = self._count.get(stem, 0)
        self._count[stem] = n + 1
        return f"/{stem}_{n}_output_0"

    # ---- values ------------------------------------------------------------------------------

    def input(self, name: str, elem_type, dims) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, dims))
        return name

    def output(self, value: str, name: str, elem_type, dims) -> None:
        """Names the graph output `name` by renaming what produces `value` (the exporter
        adds no Identity)."""
        for node in self.nodes:
            for i, o in enumerate(node.output):
                if o == value:
                    node.output[i] = name
            for i, v in enumerate(node.input):
                if v == value:
                    node.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, dims))

    def weight(self, name: str, array: np.ndarray) -> str:
        if array.dtype == np.float64:  # a float64 scalar in the init math: the bench is float32
            raise TypeError(f"weight {name} is float64")
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value, dtype=np.float32) -> str:
        """A Constant node holding `value` (a scalar stays rank 0, as torch exports it)."""
        array = np.asarray(value, dtype=dtype)
        out = self._fresh("Constant")
        self.nodes.append(helper.make_node("Constant", [], [out],
                                           value=numpy_helper.from_array(array)))
        return out

    def ints(self, values) -> str:
        return self.const(list(values), np.int64)

    # ---- nodes -------------------------------------------------------------------------------

    def op(self, op_type: str, *inputs, out=None, n_out=1, **attrs):
        outs = [out] if out else [self._fresh(op_type) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=f"/{op_type}_{len(self.nodes)}", **attrs))
        return outs[0] if n_out == 1 else outs

    def dim(self, x: str, axis: int) -> str:
        """x.size(axis) as torch exports it: Shape -> Gather(scalar index), rank 0."""
        return self.op("Gather", self.op("Shape", x), self.const(axis, np.int64), axis=0)

    def shape_of(self, x: str, leading: int, *tail) -> str:
        """The shape tensor for x.view(x.size(0), ..., x.size(leading - 1), *tail)."""
        parts = [self.op("Unsqueeze", self.dim(x, a), self.ints([0])) for a in range(leading)]
        parts += [self.ints([t]) for t in tail]
        return self.op("Concat", *parts, axis=0)

    # ---- layers ------------------------------------------------------------------------------

    def linear(self, x: str, prefix: str, weight_in_out: np.ndarray, bias: np.ndarray) -> str:
        """torch's Linear on a 3-D input: MatMul by the constant-folded [in, out] transpose,
        then Add with the bias first (the exporter's operand order)."""
        w = self.weight(prefix + ".weight", weight_in_out)
        b = self.weight(prefix + ".bias", bias)
        return self.op("Add", b, self.op("MatMul", x, w))

    def layer_norm(self, x: str, prefix: str, gamma, beta, eps: float) -> str:
        return self.op("LayerNormalization", x, self.weight(prefix + ".weight", gamma),
                       self.weight(prefix + ".bias", beta), axis=-1, epsilon=eps)

    def gelu_erf(self, x: str) -> str:
        """x * 0.5 * (1 + erf(x / sqrt 2)), node for node as BERT's exported GELU."""
        erf = self.op("Erf", self.op("Div", x, self.const(np.sqrt(2.0))))
        return self.op("Mul", self.op("Mul", x, self.op("Add", erf, self.const(1.0))),
                       self.const(0.5))

    def gelu_tanh(self, x: str) -> str:
        """GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
        half_x = self.op("Mul", x, self.const(0.5))
        cube = self.op("Pow", x, self.const(3.0))
        inner = self.op("Add", x, self.op("Mul", self.const(0.044715), cube))
        t = self.op("Tanh", self.op("Mul", self.const(np.sqrt(2.0 / np.pi)), inner))
        return self.op("Mul", half_x, self.op("Add", self.const(1.0), t))

    def split_heads(self, x: str, heads: int, head_dim: int, perm) -> str:
        """[b, s, heads * d] -> view(b, s, heads, d) -> permute(perm)."""
        return self.op("Transpose", self.op("Reshape", x, self.shape_of(x, 2, heads, head_dim)),
                       perm=list(perm))

    def merge_heads(self, x: str, hidden: int) -> str:
        """[b, heads, s, d] -> permute(0, 2, 1, 3) -> view(b, s, hidden)."""
        t = self.op("Transpose", x, perm=[0, 2, 1, 3])
        return self.op("Reshape", t, self.shape_of(t, 2, hidden))

    # ---- the model ---------------------------------------------------------------------------

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                                  self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  ir_version=IR_VERSION, producer_name="max_c bench")
        onnx.checker.check_model(model, full_check=False)
        return model


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
