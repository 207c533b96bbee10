"""max_c.weights: safetensors files (written here by an independent writer) through the
library's registry, bound into models by name, and hostile files refused cleanly."""
import json
import os
import struct

import numpy as np
import pytest

import max_c
from max_c import MaxRuntimeError
from max_c.dtype import DType
from max_c.engine import InferenceSession
from max_c.graph import Graph, TensorType, ops
from max_c.weights import (GGUFWeights, SafetensorWeights, Weights, WeightsFormat, load_weights,
                           weights_format)

_ST_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.float16): "F16",
              np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int8): "I8",
              np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL"}


def write_safetensors(path, tensors: dict, metadata=None):
    """The format, by its spec: u64 header length, JSON header, 8-byte aligned data."""
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": _ST_DTYPES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    return path


@pytest.fixture
def tensors():
    rng = np.random.default_rng(0)
    return {
        "encoder.layers.0.w": rng.standard_normal((4, 3)).astype(np.float32),
        "encoder.layers.0.b": rng.standard_normal(3).astype(np.float32),
        "encoder.layers.1.w": rng.standard_normal((3, 2)).astype(np.float32),
        "ids": np.arange(5, dtype=np.int64),
        "half": rng.standard_normal((2, 2)).astype(np.float16),
        "double": rng.standard_normal(3),
        "flags": np.array([True, False]),
        "bytes": np.arange(7, dtype=np.uint8),
    }


def test_every_tensor_reads_back_with_its_dtype_and_shape(tmp_path, tensors):
    w = SafetensorWeights([write_safetensors(tmp_path / "m.safetensors", tensors)])
    assert w.names() == list(tensors)
    assert len(w) == len(tensors) and "ids" in w and "nope" not in w
    for name, arr in tensors.items():
        dtype, shape, encoding = w.info(name)
        assert shape == list(arr.shape) and encoding is None
        got = w.tensor(name).to_numpy()
        assert got.dtype == arr.dtype
        np.testing.assert_array_equal(got, arr)


def test_hierarchical_names_and_allocate(tmp_path, tensors):
    w = load_weights([write_safetensors(tmp_path / "m.safetensors", tensors)])
    layer = w.encoder.layers[0]
    assert layer.w.name == "encoder.layers.0.w" and layer.w.exists() and not layer.nope.exists()
    assert sorted(n for n, _ in w.encoder.layers[1].items()) == ["w"]
    weight = layer.w.allocate()
    assert (weight.name, weight.dtype, weight.shape) == ("encoder.layers.0.w", DType.float32, [4, 3])
    with pytest.raises(ValueError, match="float32"):
        layer.w.allocate(dtype=DType.float64)
    data = layer.b.data()
    np.testing.assert_array_equal(data.data.to_numpy(), tensors["encoder.layers.0.b"])
    with pytest.raises(KeyError, match="missing"):
        w.tensor("missing")


def test_a_model_binds_and_reloads_from_a_registry(tmp_path, tensors):
    g = Graph("mlp", input_types=[TensorType(DType.float32, ["batch", 4])])
    with g:
        x = g.inputs[0]
        h = ops.relu(x @ g.add_weight("encoder.layers.0.w", DType.float32, [4, 3])
                     + g.add_weight("encoder.layers.0.b", DType.float32, [3]))
        g.output(h @ g.add_weight("encoder.layers.1.w", DType.float32, [3, 2]))
    w = SafetensorWeights([write_safetensors(tmp_path / "m.safetensors", tensors)])
    model = InferenceSession(num_threads=1).load(g, weights_registry=w)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    t = tensors
    want = np.maximum(x @ t["encoder.layers.0.w"] + t["encoder.layers.0.b"], 0) @ t["encoder.layers.1.w"]
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), want, rtol=1e-5, atol=1e-6)

    # A reload takes the declared weights the registry has; the others stay.
    new = Weights()
    new.add("encoder.layers.1.w", np.ones((3, 2), np.float32))
    model.reload(new)
    want2 = np.maximum(x @ t["encoder.layers.0.w"] + t["encoder.layers.0.b"], 0) @ np.ones((3, 2))
    np.testing.assert_allclose(model.execute(x)[0].to_numpy(), want2, rtol=1e-5, atol=1e-5)

    # A registry lacking a declared weight is NOT_FOUND naming it.
    partial = Weights()
    partial.add("encoder.layers.0.w", t["encoder.layers.0.w"])
    with pytest.raises(max_c.MaxNotFoundError, match="encoder.layers.0.b"):
        InferenceSession(num_threads=1).load(g, weights_registry=partial)


def test_sharded_checkpoint_through_its_index(tmp_path, tensors):
    names = list(tensors)
    first = {n: tensors[n] for n in names[:3]}
    second = {n: tensors[n] for n in names[3:]}
    write_safetensors(tmp_path / "model-00001-of-00002.safetensors", first)
    write_safetensors(tmp_path / "model-00002-of-00002.safetensors", second)
    index = {"metadata": {}, "weight_map": {**{n: "model-00001-of-00002.safetensors" for n in first},
                                            **{n: "model-00002-of-00002.safetensors" for n in second}}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    w = SafetensorWeights([tmp_path / "model.safetensors.index.json"])
    assert sorted(w.names()) == sorted(names)
    np.testing.assert_array_equal(w.tensor("ids").to_numpy(), tensors["ids"])


def test_a_shard_symlinked_out_of_the_index_directory_is_refused(tmp_path, tensors):
    (tmp_path / "model").mkdir()
    write_safetensors(tmp_path / "elsewhere.safetensors", tensors)
    (tmp_path / "model" / "shard.safetensors").symlink_to(tmp_path / "elsewhere.safetensors")
    index = tmp_path / "model" / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {n: "shard.safetensors" for n in tensors}}))
    with pytest.raises(max_c.MaxValueError, match="resolves outside the index's directory"):
        SafetensorWeights([index])


def test_a_weights_file_truncated_under_a_model_is_data_loss_not_sigbus(tmp_path):
    # The model reads v in place from the mapping; truncating the file would make that read
    # SIGBUS (the process dies, pytest's faulthandler with it). The guard answers it instead.
    v = np.arange(4096, dtype=np.float32)
    path = write_safetensors(tmp_path / "shrinks.safetensors", {"v": v})
    g = Graph("add_v", input_types=[TensorType(DType.float32, [4096])])
    with g:
        g.output(g.inputs[0] + g.add_weight("v", DType.float32, [4096]))
    model = InferenceSession(num_threads=1).load(g, weights_registry=SafetensorWeights([path]))
    x = np.ones(4096, np.float32)
    np.testing.assert_array_equal(model.execute(x)[0].to_numpy(), v + 1)
    os.truncate(path, 0)
    with pytest.raises(MaxRuntimeError, match="shrinks.safetensors") as err:
        model.execute(x)
    assert err.value.code_name == "DATA_LOSS"
    fresh = Weights()
    fresh.add("v", v)
    model.reload(fresh)
    np.testing.assert_array_equal(model.execute(x)[0].to_numpy(), v + 1)


def test_corrupt_and_truncated_files_fail_cleanly(tmp_path, tensors):
    good = write_safetensors(tmp_path / "good.safetensors", tensors).read_bytes()
    for cut in (0, 4, 8, 20, len(good) // 2, len(good) - 1):
        bad = tmp_path / f"cut{cut}.safetensors"
        bad.write_bytes(good[:cut])
        w = Weights()
        with pytest.raises(MaxRuntimeError, match=f"cut{cut}.safetensors") as err:
            w.add_file(bad)
        assert err.value.code_name in ("DATA_LOSS", "INVALID_ARGUMENT")
        assert len(w) == 0, "a failing file adds nothing"
    lying = bytearray(good)
    lying[8:8 + 16] = json.dumps({"x": {"dtype": "F32", "shape": [1000000],
                                        "data_offsets": [0, 4000000]}}).encode()[:16]
    with pytest.raises(MaxRuntimeError):
        Weights([_write(tmp_path / "lying.safetensors", bytes(lying))])
    with pytest.raises(max_c.MaxNotFoundError, match="absent.safetensors"):
        Weights([tmp_path / "absent.safetensors"])


def _write(path, data):
    path.write_bytes(data)
    return path


def test_registry_refuses_duplicates_and_formats_are_told_by_extension(tmp_path, tensors):
    w = Weights()
    w.add("a", np.zeros(3, np.float32))
    with pytest.raises(MaxRuntimeError, match="'a'"):
        w.add("a", np.zeros(3, np.float32))
    assert weights_format(["x.gguf"]) is WeightsFormat.gguf
    assert weights_format(["a.safetensors", "b.safetensors"]) is WeightsFormat.safetensors
    for bad in ([], ["x.bin"], ["a.gguf", "b.safetensors"]):
        with pytest.raises(ValueError):
            weights_format(bad)
    assert GGUFWeights.__mro__[1] is Weights


def test_quantize_save_gguf_and_run_qmatmul_from_the_file(tmp_path):
    """A user's conversion: float weights quantized, written as GGUF with a float bias, read
    back as uint8 with their encoding, and multiplied without dequantizing in memory."""
    from max_c.quantization import QuantizationEncoding
    from max_c.weights import quantize
    rng = np.random.default_rng(5)
    w = rng.standard_normal((48, 256)).astype(np.float32)  # [N, K], as qmatmul takes it
    bias = rng.standard_normal(48).astype(np.float32)
    out = Weights()
    for enc in ("q8_0", "q4_k"):
        q = quantize(w, enc)
        e = QuantizationEncoding.from_name(enc)
        assert q.dtype == DType.uint8 and list(q.shape) == [48, 256 // e.elements_per_block * e.block_size]
        out.add(f"w.{enc}", q, encoding=enc)
    out.add("bias", bias)
    path = tmp_path / "converted.gguf"
    out.save_gguf(path, name="test")
    back = GGUFWeights(path)
    assert back.names() == ["w.q8_0", "w.q4_k", "bias"]
    x = rng.standard_normal((3, 256)).astype(np.float32)
    for enc, tol in (("q8_0", 0.02), ("q4_k", 0.15)):
        name = f"w.{enc}"
        dtype, shape, encoding = back.info(name)
        assert dtype == DType.uint8 and encoding == QuantizationEncoding.from_name(enc)
        g = Graph("q", input_types=[TensorType(DType.float32, ["batch", 256])])
        with g:
            weight = g.add_weight(getattr(back.w, enc).allocate())
            g.output(ops.qmatmul(enc, None, g.inputs[0], weight))
        model = InferenceSession(num_threads=1).load(g, weights_registry=back)
        got = model.execute(x)[0].to_numpy()
        want = x @ w.T
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert rel < tol, f"{enc}: relative error {rel:.4f}"
    np.testing.assert_array_equal(back.tensor("bias").to_numpy(), bias)
