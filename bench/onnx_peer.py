"""One peer of the ONNX bench (max_c, onnxruntime or torch) on one .onnx file, as a worker
process that bench/onnx_bench.py drives. Each peer runs in a process of its own: an idle
runtime's spinning threads would otherwise take cores from the one being timed.

    python bench/onnx_peer.py PEER MODEL.onnx INPUTS.npz OUTPUTS.npz --threads T

It loads and compiles the model (timed), runs it once (timed: the first run builds what is
built per shape) and --warmup more times, saves the outputs to OUTPUTS.npz for the driver to
compare, answers one JSON line, then obeys commands on stdin, one JSON line each:
    run SECONDS MIN_ITERS   time iterations until both are reached -> {"times_ms": [...]}
    quit                    -> {"peak_mb": ...} and exit
Peak memory is the resident set's high-water mark above the resident set before loading.
Errors answer {"error": "..."}. The answers go to the original stdout; everything else that
writes to stdout (a native library's messages) is sent to stderr.
"""
import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _vm_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak() -> None:
    """Sets VmHWM back to the current resident set (Linux >= 4.0; else it keeps the peak
    of the imports, which only overstates)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


# ---- the peers -------------------------------------------------------------------------------


def load_max_c(path, threads):
    import max_c
    from max_c.engine import InferenceSession
    model = InferenceSession(num_threads=threads).load(str(path))
    names = [s.name for s in model.input_metadata]
    outputs = [s.name for s in model.output_metadata]

    def run(feeds):
        return [t.to_numpy() for t in model.execute(*[feeds[n] for n in names])]
    return run, outputs, max_c.__version__


def load_onnxruntime(path, threads):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    return (lambda feeds: session.run(None, feeds)), outputs, ort.__version__


def load_torch(path, threads):
    import torch
    from onnx_torch import TorchOnnxModel
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    model = TorchOnnxModel(path)
    return model, model.output_names, torch.__version__


PEERS = {"max_c": load_max_c, "onnxruntime": load_onnxruntime, "torch": load_torch}
IMPORTS = {"max_c": "max_c.engine", "onnxruntime": "onnxruntime", "torch": "torch"}


# ---- the worker ------------------------------------------------------------------------------


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - t0) * 1e3


def serve(args, answer):
    __import__(IMPORTS[args.peer])  # before the baseline: the library is not the model
    feeds = dict(np.load(args.inputs))
    baseline_kb = _vm_kb("VmRSS")
    reset_peak()
    (run, names, version), load_ms = timed(lambda: PEERS[args.peer](args.model, args.threads))
    outputs, first_ms = timed(lambda: run(feeds))
    np.savez(args.outputs, **{f"out{i}": np.asarray(o) for i, o in enumerate(outputs)})
    for _ in range(args.warmup):
        run(feeds)
    answer({"load_ms": load_ms, "first_run_ms": first_ms, "outputs": names, "version": version})
    for line in sys.stdin:
        command = line.split()
        if command[:1] == ["run"]:
            seconds, min_iters = float(command[1]), int(command[2])
            times, t_end = [], time.perf_counter() + seconds
            while len(times) < min_iters or time.perf_counter() < t_end:
                times.append(timed(lambda: run(feeds))[1])
            answer({"times_ms": times})
        elif command[:1] == ["quit"]:
            answer({"peak_mb": (_vm_kb("VmHWM") - baseline_kb) / 1024,
                    "rss_mb": (_vm_kb("VmRSS") - baseline_kb) / 1024})
            return
        else:
            answer({"error": f"unknown command {line.strip()!r}"})


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("peer", choices=sorted(PEERS))
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("outputs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # native libraries' prints must not mix with the answers

    def answer(obj):
        channel.write(json.dumps(obj) + "\n")
        channel.flush()
    try:
        serve(args, answer)
    except BaseException as e:  # noqa: BLE001 - every failure is the driver's to report
        traceback.print_exc()
        answer({"error": f"{type(e).__name__}: {e}".strip()})
        sys.exit(1)


if __name__ == "__main__":
    main()
