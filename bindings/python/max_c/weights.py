"""max_c.weights: safetensors and GGUF files as a registry of named tensors (MAX's
max.graph.weights).

    weights = load_weights(["model.safetensors"])      # or SafetensorWeights / GGUFWeights
    x = graph.add_weight(weights.encoder.layer[0].attention.query.weight.allocate())
    model = session.load(graph, weights_registry=weights)

Files are mapped, not read: a tensor whose bytes are aligned for its dtype is a read-only view
of the file, which stays mapped as long as any such view lives. A quantized GGUF tensor is
uint8 [..., row_bytes] with its QuantizationEncoding, as MAX allocates it. Attribute and index
access build dotted names (`weights.layers[0].w` is "layers.0.w"), as MAX's Weights do.
"""
import enum
import os
from ctypes import POINTER, byref, c_char_p, c_int32, c_int64, c_size_t, c_void_p
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

from . import _errors
from ._errors import check
from ._lib import lib, missing_weights
from .driver import Tensor, _Handle
from .dtype import DType
from .graph import Weight
from .quantization import QuantizationEncoding

# The ABI's MAX_QUANT_* values.
_ENCODING_CODES = {QuantizationEncoding.Q4_0: 1, QuantizationEncoding.Q4_K: 2,
                   QuantizationEncoding.Q5_K: 3, QuantizationEncoding.Q6_K: 4,
                   QuantizationEncoding.Q8_0: 5}
_ENCODINGS = {code: e for e, code in _ENCODING_CODES.items()}


class WeightsFormat(str, enum.Enum):
    gguf = "gguf"
    safetensors = "safetensors"


def weights_format(weight_paths: List[Union[str, os.PathLike]]) -> WeightsFormat:
    """The one format of `weight_paths`, from their extensions. ValueError for an empty list,
    mixed formats or an extension we do not read."""
    if not weight_paths:
        raise ValueError("weights_format: no weight paths given")
    formats = set()
    for p in weight_paths:
        name = os.fspath(p).lower()
        if name.endswith(".gguf"):
            formats.add(WeightsFormat.gguf)
        elif name.endswith(".safetensors") or name.endswith(".safetensors.index.json"):
            formats.add(WeightsFormat.safetensors)
        else:
            raise ValueError(f"weights_format: {os.fspath(p)!r} is neither .safetensors nor .gguf")
    if len(formats) > 1:
        raise ValueError("weights_format: the paths mix formats: " + ", ".join(sorted(formats)))
    return formats.pop()


class WeightData(NamedTuple):
    """One weight's tensor and what the file says about it."""

    data: Tensor
    name: str
    dtype: DType
    shape: List[int]
    quantization_encoding: Optional[QuantizationEncoding] = None


class Weights(_Handle):
    """A registry of named tensors (max_weights_t). Fill it with files and tensors, then bind
    models from it; once filled it may be read from many threads."""

    _kind = "weights"
    _release = lib.max_weights_release if not missing_weights else None

    def __init__(self, paths: Iterable[Union[str, os.PathLike]] = (), *, prefix: str = ""):
        if missing_weights:
            raise _errors.MaxRuntimeError("this libmax_c has no weights API (ABI 1.3): missing "
                                          + ", ".join(missing_weights), _errors.UNIMPLEMENTED)
        out = c_void_p()
        check(lib.max_weights_create(byref(out)))
        self._adopt(out.value)
        self._prefix = prefix
        for p in paths:
            self.add_file(p)

    # ---- filling ---------------------------------------------------------------------------

    def add_file(self, path: Union[str, os.PathLike]) -> None:
        """Adds every tensor of a .safetensors, .gguf or .safetensors.index.json file, or none
        when anything fails (MaxRuntimeError with the file, tensor and offset)."""
        check(lib.max_weights_add_file(self._h, os.fsencode(path)))

    def add(self, name: str, array, encoding: Optional[Union[QuantizationEncoding, str]] = None) -> None:
        """Adds a tensor (a driver Tensor, or anything with __dlpack__ such as a numpy array)
        under `name`, by reference: do not write to it while models use it."""
        tensor = array if isinstance(array, Tensor) else Tensor.from_dlpack(array)
        code = 0 if encoding is None else _ENCODING_CODES[QuantizationEncoding.from_name(encoding)]
        check(lib.max_weights_add_tensor(self._h, name.encode(), tensor._h, code))

    # ---- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        n = c_size_t()
        check(lib.max_weights_count(self._h, byref(n)))
        return n.value

    def names(self) -> List[str]:
        """Every name, in the order the tensors were added."""
        out = c_char_p()
        names = []
        for i in range(len(self)):
            check(lib.max_weights_name(self._h, i, byref(out)))
            names.append(out.value.decode())
        return names

    def __contains__(self, name: str) -> bool:
        try:
            self.info(name)
        except KeyError:
            return False
        return True

    def info(self, name: str) -> Tuple[DType, List[int], Optional[QuantizationEncoding]]:
        """(dtype, stored shape, encoding) without reading the bytes; KeyError when absent."""
        dtype, rank, encoding = c_int32(), c_int32(), c_int32()
        dims = POINTER(c_int64)()
        status = lib.max_weights_info(self._h, name.encode(), byref(dtype), byref(rank),
                                      byref(dims), byref(encoding))
        _raise_key_error_for_not_found(status, name)
        return DType(dtype.value), [dims[i] for i in range(rank.value)], _ENCODINGS.get(encoding.value)

    def tensor(self, name: str) -> Tensor:
        """The weight as a read-only tensor (a view of the file where it can be); KeyError
        when absent."""
        out = c_void_p()
        _raise_key_error_for_not_found(lib.max_weights_tensor(self._h, name.encode(), byref(out)), name)
        return Tensor._wrap(out.value)

    @property
    def allocated_weights(self) -> Dict[str, Tensor]:
        """Every tensor by name: what MAX passes as weights_registry. A Weights object may be
        passed there directly, which binds without building this dict."""
        return {n: self.tensor(n) for n in self.names()}

    def save_gguf(self, path: Union[str, os.PathLike], name: Optional[str] = None) -> None:
        """Writes every tensor, in order, as one GGUF v3 file (quantized ones with their
        encoding): how weights are converted for GGUF readers."""
        check(lib.max_weights_save_gguf(self._h, os.fsencode(path), name.encode() if name else None))

    # ---- MAX's hierarchical accessor ---------------------------------------------------------

    @property
    def name(self) -> str:
        return self._prefix

    def _child(self, part: str) -> "Weights":
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view._prefix = f"{self._prefix}.{part}" if self._prefix else part
        return view

    def __getattr__(self, attr: str) -> "Weights":
        if attr.startswith("_"):
            raise AttributeError(attr)
        return self._child(attr)

    def __getitem__(self, index) -> "Weights":
        return self._child(str(index))

    def exists(self) -> bool:
        return self._prefix in self

    def items(self) -> Iterator[Tuple[str, "Weights"]]:
        """The weights under this prefix, with names relative to it."""
        lead = self._prefix + "." if self._prefix else ""
        for n in self.names():
            if n.startswith(lead):
                view = self._child("")
                view._prefix = n
                yield n[len(lead):], view

    def data(self) -> WeightData:
        dtype, shape, encoding = self.info(self._prefix)
        return WeightData(self.tensor(self._prefix), self._prefix, dtype, shape, encoding)

    def allocate(self, dtype: Optional[DType] = None, shape=None,
                 quantization_encoding: Optional[QuantizationEncoding] = None, device=None) -> Weight:
        """A graph Weight for this name with the file's dtype, shape and encoding; ValueError
        when a given dtype, shape or encoding differs from the file's (we do not convert)."""
        file_dtype, file_shape, file_encoding = self.info(self._prefix)
        for what, given, have in (("dtype", dtype, file_dtype), ("shape", shape and list(shape), file_shape),
                                  ("quantization_encoding", quantization_encoding, file_encoding)):
            if given is not None and given != have:
                raise ValueError(f"weight {self._prefix!r} is stored with {what} {have}, not {given}")
        kwargs = {"quantization_encoding": file_encoding} if file_encoding else {}
        return Weight(self._prefix, file_dtype, file_shape, device, **kwargs)

    def __repr__(self):
        if self.closed:
            return f"{type(self).__name__}(<closed>)"
        return f"{type(self).__name__}({len(self)} tensors, prefix={self._prefix!r})"


def _raise_key_error_for_not_found(status, name: str) -> None:
    """check(), with NOT_FOUND as the KeyError MAX raises for a missing weight."""
    try:
        check(status)
    except _errors.MaxNotFoundError as e:
        raise KeyError(f"weight {name!r}: {e}") from None


def quantize(array, encoding: Union[QuantizationEncoding, str]) -> Tensor:
    """float32 [..., k] (a Tensor or any DLPack array) as a new uint8 [..., row_bytes] tensor of
    `encoding`, every block's scales fitted by least squares: the bytes qmatmul reads. A
    conversion step, not fast."""
    tensor = array if isinstance(array, Tensor) else Tensor.from_dlpack(array)
    code = _ENCODING_CODES[QuantizationEncoding.from_name(encoding)]
    out = c_void_p()
    check(lib.max_tensor_quantize(tensor._h, code, byref(out)))
    return Tensor._wrap(out.value)


class SafetensorWeights(Weights):
    """Weights from one or more .safetensors files (or a sharded checkpoint's index file)."""

    def __init__(self, filepaths: Iterable[Union[str, os.PathLike]], *, prefix: str = ""):
        super().__init__(filepaths, prefix=prefix)


class GGUFWeights(Weights):
    """Weights from a .gguf file; quantized tensors are uint8 with their encoding."""

    def __init__(self, source: Union[str, os.PathLike], *, prefix: str = ""):
        super().__init__([source], prefix=prefix)


def load_weights(paths: List[Union[str, os.PathLike]]) -> Weights:
    """The weights of `paths`, of one format (see weights_format)."""
    fmt = weights_format(paths)
    return GGUFWeights(paths[0]) if fmt is WeightsFormat.gguf and len(paths) == 1 else Weights(paths)
