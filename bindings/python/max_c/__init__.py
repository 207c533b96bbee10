"""max_c: Modular MAX's Python API over libmax_c's C ABI (pure ctypes).

Modules, named like MAX's: max_c.dtype (DType), max_c.driver (CPU, Accelerator, Tensor),
max_c.graph (Graph, TensorType, DeviceRef, ops), max_c.engine (InferenceSession, Model,
TensorSpec), max_c.quantization (QuantizationEncoding), max_c.weights (SafetensorWeights,
GGUFWeights, load_weights).
"""
from . import _lib
from ._errors import (MaxError, MaxIndexError, MaxNotFoundError, MaxRuntimeError, MaxTypeError,
                      MaxValueError)
from . import dtype, driver, graph, engine, quantization, weights
from .dtype import DType

__version__ = _lib.version_string()
library_path = _lib.library_path
abi_version = _lib.abi_version

__all__ = ["dtype", "driver", "graph", "engine", "quantization", "DType", "MaxError",
           "MaxValueError", "MaxTypeError", "MaxNotFoundError", "MaxIndexError", "MaxRuntimeError",
           "library_path", "abi_version"]
