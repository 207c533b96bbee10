"""max_c.quantization: the block-quantized encodings (MAX's max.graph.quantization).

A quantized tensor is uint8 [..., row_bytes]: every row of `k` elements is k /
elements_per_block blocks of block_size bytes, in GGML's layouts (as GGUF stores them). The
graph ops `ops.dequantize(encoding, quantized)` and `ops.qmatmul(encoding, config, lhs, rhs)`
take a QuantizationEncoding or its name ("q4_k", any case).
"""
import enum
from typing import NamedTuple, Union


class BlockParameters(NamedTuple):
    """The shape of one block: how many elements it encodes and in how many bytes."""

    elements_per_block: int
    block_size: int


# (elements per block, bytes per block): GGML's block layouts.
_BLOCKS = {
    "Q4_0": BlockParameters(32, 18),
    "Q4_K": BlockParameters(256, 144),
    "Q5_K": BlockParameters(256, 176),
    "Q6_K": BlockParameters(256, 210),
    "Q8_0": BlockParameters(32, 34),
}


class QuantizationEncoding(enum.Enum):
    """A block-quantized encoding. MAX's members plus Q8_0 (which GGUF files use and MAX's
    docstrings mention); GPTQ is not supported."""

    Q4_0 = "Q4_0"
    Q4_K = "Q4_K"
    Q5_K = "Q5_K"
    Q6_K = "Q6_K"
    Q8_0 = "Q8_0"

    @property
    def name(self) -> str:
        """The lower-case name, as the graph ops' "encoding" attribute takes it: "q4_k"."""
        return self._name_.lower()

    @property
    def block_parameters(self) -> BlockParameters:
        return _BLOCKS[self.value]

    @property
    def block_size(self) -> int:
        """Bytes of one encoded block."""
        return self.block_parameters.block_size

    @property
    def elements_per_block(self) -> int:
        return self.block_parameters.elements_per_block

    @property
    def is_gguf(self) -> bool:
        """Whether GGUF files store tensors in this encoding (all of max_c's do)."""
        return True

    def row_bytes(self, k: int) -> int:
        """Bytes of one encoded row of `k` elements (a multiple of elements_per_block)."""
        if k % self.elements_per_block:
            raise ValueError(f"a {self.name} row needs a multiple of {self.elements_per_block} "
                             f"elements, got {k}")
        return k // self.elements_per_block * self.block_size

    @classmethod
    def from_name(cls, name: Union[str, "QuantizationEncoding"]) -> "QuantizationEncoding":
        """The encoding called `name` ("q4_k", "Q4_K"); ValueError naming the valid ones."""
        if isinstance(name, cls):
            return name
        try:
            return cls(str(name).upper())
        except ValueError:
            valid = ", ".join(e.name for e in cls)
            raise ValueError(f"{name!r} is not a quantization encoding (valid: {valid})") from None


def encoding_name(encoding: Union[str, QuantizationEncoding]) -> str:
    """The "encoding" attribute for a QuantizationEncoding or a name; other strings pass
    through unchanged, so that the library's message names the bad one."""
    if isinstance(encoding, QuantizationEncoding):
        return encoding.name
    if isinstance(encoding, str):
        return encoding
    raise TypeError(f"expected a QuantizationEncoding or its name, got {encoding!r}")


__all__ = ["BlockParameters", "QuantizationEncoding", "encoding_name"]
