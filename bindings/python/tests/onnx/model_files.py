"""Small ONNX files built for a test: value infos, initializers, and a graph saved under
pytest's tmp_path. Shared by the test files of this folder that build their own models."""
import numpy as np
import onnx
from onnx import helper, numpy_helper


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(tmp_path, name, nodes, inputs, outputs, initializers=(), opset=17, ir_version=None):
    """Writes the graph as tmp_path/<name>.onnx (default opset 17) and returns the path as a
    str. ir_version pins the file's IR version where ONNX Runtime needs an older one than the
    onnx package writes."""
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        model.ir_version = ir_version
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return str(path)
