"""The real-model corpus: ONNX models as their projects ship them, never edited, each with the
input shapes it is run at and the inputs for them. Both bindings/python/tests/real_models
(max_c against ONNX Runtime, every shape) and `bench/run.sh real` (bench/real_bench.py) read
the corpus from here.

Where the files come from:
  - the wheels pinned in scripts/requirements/models.txt (rapidocr-onnxruntime: PP-OCRv4 text
    detection and recognition and the mobile direction classifier; nudenet: YOLOv8n at 320;
    silero-vad: six exports of the voice activity detector), whose .onnx files
    scripts/fetch_models.sh unpacks into corpus_dir() (setup.sh runs it);
  - the ONNX model zoo's "light" CNNs that the onnx package in .venv ships for its backend
    tests (onnx/backend/test/data/light: weights made by ConstantOfShape, one input, the
    expected output beside each model), read where the package is installed.

Inputs are fixed-seed and shaped like what each model sees in use: a page of text-like strokes
for the OCR detector, a line of them for the recognizer and the classifier (normalized as
RapidOCR does, to [-1, 1]), a picture of shapes for YOLO ([0, 1]), and an audio-like signal
at 16 kHz for the VAD, streamed in chunks of 512 new samples after the 64 samples of context
that silero-vad's own wrapper puts before each (576 in all), its state fed back call to call.
"""
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "scripts" / "requirements" / "models.txt"


class CorpusMissing(RuntimeError):
    pass


def corpus_dir() -> Path:
    """The fetched corpus: $MAX_C_MODELS_DIR, else the folder scripts/lib.sh's models_dir
    names (the cache, under the lock's hash). CorpusMissing, saying how to fetch it, when it
    is not complete."""
    env = os.environ.get("MAX_C_MODELS_DIR")
    if env:
        path = Path(env)
    else:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        path = cache / "max_c" / "models" / hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    if not (path / ".complete").is_file():
        raise CorpusMissing(f"the model corpus is not at {path} (no .complete stamp): run "
                            "bash scripts/fetch_models.sh (scripts/setup.sh runs it)")
    return path


def light_dir() -> Path:
    """The onnx package's light model-zoo files, where .venv installed it."""
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "light"


# ---- inputs ----------------------------------------------------------------------------------

CONTEXT = 64  # samples of the previous chunk that silero-vad puts before each chunk
CHUNK = 512  # new samples per call at 16 kHz
SAMPLE_RATE = 16000


def page(h: int, w: int, seed: int) -> np.ndarray:
    """(h, w, 3) in [0, 1]: rows of dark "words" of thin vertical strokes on white paper."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 0.95, np.float32)
    line = max(8, h // 10)
    for top in range(line // 2, h - line, line * 3 // 2):
        x = int(rng.integers(2, max(3, w // 8)))
        while x < w - 8:
            end = min(x + int(rng.integers(w // 16 + 4, w // 4 + 8)), w - 4)
            for cx in range(x, end, 3):
                first = top + int(rng.integers(0, line // 3 + 1))
                last = top + line - int(rng.integers(0, line // 4 + 1))
                img[first:last, cx:cx + 2] = rng.uniform(0.0, 0.25)
            x = end + int(rng.integers(6, 16))
    return img


def text_line(h: int, w: int, seed: int) -> np.ndarray:
    """(h, w, 3): one line of a page, as a recognizer's crop holds it."""
    return page(h * 10 // 8, w, seed)[h // 8:h // 8 + h]


def picture(h: int, w: int, seed: int) -> np.ndarray:
    """(h, w, 3) in [0, 1]: smooth colour waves with a few solid ellipses over them."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32) / max(h, w)
    img = np.stack([0.5 + 0.3 * np.sin(2 * np.pi * (f * x + g * y) + p)
                    for f, g, p in rng.uniform(0.5, 3, (3, 3))], -1)
    for _ in range(6):
        cy, cx = rng.uniform(0, 1, 2) * [h / max(h, w), w / max(h, w)]
        ry, rx = rng.uniform(0.05, 0.25, 2)
        img[((y - cy) / ry) ** 2 + ((x - cx) / rx) ** 2 < 1] = rng.uniform(0, 1, 3)
    return img.astype(np.float32)


def nchw(img: np.ndarray, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    return np.ascontiguousarray(((img - mean) / std).transpose(2, 0, 1)[None], np.float32)


def audio(rows: int, chunks: int, seed: int) -> np.ndarray:
    """(rows, CONTEXT + chunks * CHUNK) float32 at 16 kHz, like speech: voiced syllables (a pitch
    with its harmonics, switched on and off) over a little noise, in [-0.5, 0.5]."""
    rng = np.random.default_rng(seed)
    n = CONTEXT + chunks * CHUNK
    t = np.arange(n) / SAMPLE_RATE
    out = []
    for _ in range(rows):
        pitch = rng.uniform(100, 220)
        voiced = sum(np.sin(2 * np.pi * k * pitch * t + rng.uniform(0, 6)) / k for k in range(1, 6))
        envelope = np.clip(np.sin(2 * np.pi * rng.uniform(3, 5) * t + rng.uniform(0, 6)), 0, None)
        out.append(0.25 * envelope * voiced / 2.3 + 0.01 * rng.standard_normal(n))
    return np.clip(np.stack(out), -0.5, 0.5).astype(np.float32)


# ---- the corpus ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One input shape of a model: feeds(step) gives every input of call `step` (0 .. steps-1);
    from the second call on, the model's `carry` replaces the state inputs with the outputs of
    the call before. batch: images, or streams, or chunks of one stream per call (the bench
    times the batch-1 shapes)."""
    name: str
    feeds: Callable[[int], Dict[str, np.ndarray]]
    steps: int = 1
    batch: int = 1


@dataclass(frozen=True)
class RealModel:
    name: str
    source: str  # where it ships: "<wheel>==<version>" or "onnx==<version> (light zoo)"
    path: Callable[[], Path]
    shapes: List[Shape]
    rtol: float
    atol: float  # outputs agree when |max_c - ORT| <= atol + rtol * |ORT|, elementwise
    carry: Dict[str, str] = field(default_factory=dict)  # output name -> input name, call to call
    expected_output: Optional[Callable[[], List[np.ndarray]]] = None  # shipped test data


def _wheel_file(dist: str, member: str) -> Callable[[], Path]:
    return lambda: corpus_dir() / dist / member


def _image_shape(h, w, make, seed, mean=0.0, std=1.0, name="x"):
    return Shape(f"{h}x{w}", lambda step: {name: nchw(make(h, w, seed), mean, std)})


OCR = "rapidocr_onnxruntime/models/"


def _ocr_models():
    det = RealModel("ppocr_v4_det", "rapidocr-onnxruntime==1.4.4",
                    _wheel_file("rapidocr_onnxruntime", OCR + "ch_PP-OCRv4_det_infer.onnx"),
                    [_image_shape(s, s, page, 1, 0.5, 0.5) for s in (320, 256)],
                    rtol=1e-3, atol=1e-3)  # a probability heatmap after ~100 convolutions
    rec = RealModel("ppocr_v4_rec", "rapidocr-onnxruntime==1.4.4",
                    _wheel_file("rapidocr_onnxruntime", OCR + "ch_PP-OCRv4_rec_infer.onnx"),
                    [_image_shape(48, w, text_line, 3, 0.5, 0.5) for w in (160, 320)],
                    rtol=1e-3, atol=1e-4)  # softmax over 6625 characters per column
    cls = RealModel("ppocr_mobile_v2_cls", "rapidocr-onnxruntime==1.4.4",
                    _wheel_file("rapidocr_onnxruntime", OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                    [_image_shape(48, w, text_line, 4, 0.5, 0.5) for w in (192, 96)],
                    rtol=1e-3, atol=1e-4)  # softmax over 2 directions
    return [det, rec, cls]


def _yolo():
    return RealModel("yolov8n_320_nudenet", "nudenet==3.4.2", _wheel_file("nudenet", "nudenet/320n.onnx"),
                     [_image_shape(s, s, picture, 2, name="images") for s in (320, 256)],
                     rtol=1e-3, atol=1e-3)  # boxes in pixels (up to ~400) and class scores


def _vad_shape(name, rows, steps, inputs, state, seq_rows=False):
    """Streaming feeds of one silero export: `rows` signals of `steps` chunks; state inputs
    start at zero. seq_rows: the export takes (rows, 576) chunks one after the other of one
    stream (its "sequence" input) instead of a batch of streams."""
    signal = audio(1 if seq_rows else rows, steps * rows if seq_rows else steps, seed=5)
    if seq_rows:  # consecutive chunks of one stream, each with the context before it
        width = CONTEXT + CHUNK

        def chunk(step):
            starts = [(step * rows + r) * CHUNK for r in range(rows)]
            return np.stack([signal[0, s:s + width] for s in starts])
    else:
        def chunk(step):
            return signal[:, step * CHUNK:step * CHUNK + CONTEXT + CHUNK]

    def feeds(step):
        f = {"input": np.ascontiguousarray(chunk(step))}
        for input_name, dims in state.items():
            f[input_name] = np.zeros([rows if d == "rows" else d for d in dims], np.float32)
        if "sr" in inputs:
            f["sr"] = np.array(SAMPLE_RATE, np.int64)
        return f
    return Shape(name, feeds, steps, batch=rows)


SILERO_STEPS = 10


def _silero_models():
    state = {"state": (2, "rows", 128)}
    variants = [  # file, inputs, batch sizes (its batch is symbolic, except OpenVINO's)
        ("silero_vad.onnx", ("input", "state", "sr"), (1, 2)),
        ("silero_vad_16k_op15.onnx", ("input", "state", "sr"), (1, 2)),
        ("silero_vad_op18_ifless.onnx", ("input", "state", "sr"), (1, 2)),
        ("silero_vad_half.onnx", ("input", "state"), (1, 2)),
        ("silero_vad_openvino_16k.onnx", ("input", "state"), (1,)),
    ]
    models = []
    for file, inputs, batches in variants:
        half = "half" in file  # computes in float16 inside: its outputs differ by float16's steps
        models.append(RealModel(
            file[:-5], "silero-vad==6.2.3", _wheel_file("silero_vad", "silero_vad/data/" + file),
            [_vad_shape(f"b{b}x{CONTEXT}+{CHUNK}", b, SILERO_STEPS, inputs, state) for b in batches],
            rtol=1e-2 if half else 1e-3, atol=2e-3 if half else 1e-4, carry={"stateN": "state"}))
    # The sequence export: an LSTM state (h, c) of one stream, one or three chunks a call.
    models.append(RealModel(
        "silero_vad_16k_sequence", "silero-vad==6.2.3",
        _wheel_file("silero_vad", "silero_vad/data/silero_vad_16k_sequence.onnx"),
        [_vad_shape(f"s{n}x{CONTEXT}+{CHUNK}", n, SILERO_STEPS, ("input",),
                    {"h": (1, 1, 128), "c": (1, 1, 128)}, seq_rows=True) for n in (1, 3)],
        rtol=1e-3, atol=1e-4, carry={"hn": "h", "cn": "c"}))
    return models


LIGHT = ["alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
         "squeezenet", "vgg19", "zfnet512"]
_LIGHT_FILES = {"alexnet": "bvlc_alexnet"}


def _light(name: str) -> RealModel:
    stem = "light_" + _LIGHT_FILES.get(name, name)

    def path():
        return light_dir() / f"{stem}.onnx"

    def feeds(step):
        """The input the onnx backend test runner makes for these files: arange(n) / n in the
        input's shape (onnx/backend/test/runner: generate_dummy_data)."""
        graph = onnx.load(str(path()), load_external_data=False).graph
        weights = {w.name for w in graph.initializer}
        first = next(i for i in graph.input if i.name not in weights)
        dims = [d.dim_value for d in first.type.tensor_type.shape.dim]
        n = int(np.prod(dims))
        return {first.name: (np.arange(n).reshape(dims) / n).astype(np.float32)}

    def expected():
        return [numpy_helper.to_array(onnx.load_tensor(str(light_dir() / f"{stem}_output_0.pb")))]

    return RealModel(f"light_{name}", f"onnx=={onnx.__version__} (light zoo)", path,
                     [Shape("b1x3x224x224", feeds)], rtol=1e-3, atol=1e-6,
                     expected_output=expected)


def models() -> List[RealModel]:
    return _ocr_models() + [_yolo()] + _silero_models() + [_light(n) for n in LIGHT]


MODELS = {m.name: m for m in models()}
