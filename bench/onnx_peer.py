"""One peer of the ONNX bench (max_c, onnxruntime or torch) on one .onnx file, as a worker
process that bench/onnx_bench.py drives. Each peer runs in a process of its own: an idle
runtime's spinning threads would otherwise take cores from the one being timed.

    python bench/onnx_peer.py PEER MODEL.onnx INPUTS.npz OUTPUTS.npz --threads T [--device gpu]

It loads and compiles the model (timed), runs it once (timed: the first run builds what is
built per shape) and --warmup more times, saves the outputs to OUTPUTS.npz for the driver to
compare, answers one JSON line, then obeys commands on stdin, one JSON line each:
    run SECONDS MIN_ITERS   time iterations until both are reached -> {"times_ms": [...]}
    clients N SECONDS       N threads call the model at once, each as fast as it can, for
                            SECONDS -> {"times_ms": [every call's latency], "calls": ...,
                            "seconds": wall time from the common start to the last return}
    quit                    -> {"peak_mb": ...} and exit
Peak memory is the resident set's high-water mark above the resident set before loading.
Errors answer {"error": "..."}. The answers go to the original stdout; everything else that
writes to stdout (a native library's messages) is sent to stderr.

With --device gpu (float32 only), the model's weights and the inputs are put on gpu:0 once,
when loading; a timed run is the model's run up to a device synchronize, its outputs left on
the device (they are read back once, untimed, for the driver's comparison):
  max_c        an InferenceSession over the CPU and the accelerator, the .onnx file loaded
               with device=the accelerator (the importer's model moved there whole), inputs
               Tensor.from_numpy(...).to(gpu); Model.execute returns when the outputs hold
               their values, and the run ends with the accelerator's synchronize() all the same.
  torch        bench/onnx_torch.py on torch.device("cuda"), TF32 off (float32 throughout, as
               max_c's matmuls), torch.cuda.synchronize() after each run.
  onnxruntime  the CUDAExecutionProvider, inputs and outputs bound on the device (IOBinding);
               the driver uses it only where onnxruntime-gpu provides it.
Peak memory is the host's resident set in either case (device memory is not counted).
"""
import argparse
import json
import os
import sys
import threading
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


class Loaded:
    """A loaded peer: run() is what is timed (on a GPU it ends with a device synchronize);
    to_numpy(run's result) gives the outputs as numpy arrays, untimed."""

    def __init__(self, run, outputs, version, to_numpy=None, note=""):
        self.run = run
        self.outputs = outputs
        self.version = version
        self.to_numpy = to_numpy or (lambda result: result)
        self.note = note


def load_max_c(path, threads, device, feeds):
    import max_c
    from max_c.engine import InferenceSession
    if device == "gpu":
        return _load_max_c_gpu(path, threads, feeds)
    model = InferenceSession(num_threads=threads).load(str(path))
    names = [s.name for s in model.input_metadata]
    outputs = [s.name for s in model.output_metadata]

    def run():
        return [t.to_numpy() for t in model.execute(*[feeds[n] for n in names])]
    return Loaded(run, outputs, max_c.__version__)


def _load_max_c_gpu(path, threads, feeds):
    import max_c
    from max_c.driver import CPU, Accelerator, Tensor
    from max_c.engine import InferenceSession
    session = InferenceSession(devices=[CPU(), Accelerator()], num_threads=threads)
    accelerator = session.devices[1]
    model = session.load(str(path), device=accelerator)
    names = [s.name for s in model.input_metadata]
    outputs = [s.name for s in model.output_metadata]
    device_inputs = [Tensor.from_numpy(np.ascontiguousarray(feeds[n])).to(accelerator)
                     for n in names]
    accelerator.synchronize()

    def run():
        result = model.execute(*device_inputs)
        accelerator.synchronize()
        return result

    def to_numpy(result):
        return [t.to(CPU()).to_numpy() for t in result]
    return Loaded(run, outputs, max_c.__version__, to_numpy)


def load_onnxruntime(path, threads, device, feeds):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    providers = ["CPUExecutionProvider"]
    if device == "gpu":
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise RuntimeError("this onnxruntime has no CUDAExecutionProvider (providers: "
                               + ", ".join(ort.get_available_providers()) + ")")
        providers = [("CUDAExecutionProvider", {"device_id": 0,
                                                "use_tf32": 0}), "CPUExecutionProvider"]
    session = ort.InferenceSession(str(path), options, providers=providers)
    outputs = [o.name for o in session.get_outputs()]
    if device != "gpu":
        return Loaded(lambda: session.run(None, feeds), outputs, ort.__version__)
    binding = session.io_binding()
    for name, array in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(
            np.ascontiguousarray(array), "cuda", 0))
    for name in outputs:
        binding.bind_output(name, "cuda", 0)

    def run():
        session.run_with_iobinding(binding)  # returns once the CUDA stream is synchronized
        return binding
    return Loaded(run, outputs, ort.__version__, lambda b: b.copy_outputs_to_cpu(),
                  "CUDAExecutionProvider, IOBinding")


def load_torch(path, threads, device, feeds):
    import torch
    from onnx_torch import TorchOnnxModel
    if device == "gpu" and not torch.cuda.is_available():
        raise RuntimeError(f"torch {torch.__version__} sees no CUDA device (CUDA build: "
                           f"{torch.version.cuda})")
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    if device != "gpu":
        model = TorchOnnxModel(path)
        return Loaded(lambda: model(feeds), model.output_names, torch.__version__)
    # float32 as max_c computes it: no TF32 rounding in matmuls or convolutions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = TorchOnnxModel(path, device=torch.device("cuda"))
    inputs = model.device_inputs(feeds)
    torch.cuda.synchronize()

    def run():
        result = model.run(inputs)
        torch.cuda.synchronize()
        return result
    return Loaded(run, model.output_names, torch.__version__, model.outputs_to_numpy,
                  f"eager on {torch.cuda.get_device_name()}")


PEERS = {"max_c": load_max_c, "onnxruntime": load_onnxruntime, "torch": load_torch}
IMPORTS = {"max_c": "max_c.engine", "onnxruntime": "onnxruntime", "torch": "torch"}


# ---- the worker ------------------------------------------------------------------------------


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - t0) * 1e3


def run_clients(run, clients: int, seconds: float) -> dict:
    """Calls run() from `clients` threads at once until `seconds` have passed: a server's
    request threads sharing one loaded model. Both runtimes release the GIL while they
    compute, so the threads overlap where the runtime lets them."""
    start = threading.Barrier(clients + 1)
    times = [[] for _ in range(clients)]
    errors = []

    def client(mine):
        start.wait()
        try:
            while not mine or time.perf_counter() < t_end:  # each client calls at least once
                mine.append(timed(run)[1])
        except BaseException as e:  # noqa: BLE001 - reported, not raised in a thread
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=client, args=(times[i],)) for i in range(clients)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    t_end = t0 + seconds
    start.wait()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} of {clients} clients failed: {errors[0]}")
    all_times = [t for mine in times for t in mine]
    return {"times_ms": all_times, "calls": len(all_times),
            "seconds": time.perf_counter() - t0}


def serve(args, answer):
    __import__(IMPORTS[args.peer])  # before the baseline: the library is not the model
    feeds = dict(np.load(args.inputs))
    baseline_kb = _vm_kb("VmRSS")
    reset_peak()
    loaded, load_ms = timed(lambda: PEERS[args.peer](args.model, args.threads, args.device, feeds))
    run = loaded.run
    result, first_ms = timed(run)
    outputs = loaded.to_numpy(result)
    np.savez(args.outputs, **{f"out{i}": np.asarray(o) for i, o in enumerate(outputs)})
    del result, outputs
    for _ in range(args.warmup):
        run()
    answer({"load_ms": load_ms, "first_run_ms": first_ms, "outputs": loaded.outputs,
            "version": loaded.version, "device": args.device, "note": loaded.note})
    for line in sys.stdin:
        command = line.split()
        if command[:1] == ["run"]:
            seconds, min_iters = float(command[1]), int(command[2])
            times, t_end = [], time.perf_counter() + seconds
            while len(times) < min_iters or time.perf_counter() < t_end:
                times.append(timed(run)[1])
            answer({"times_ms": times})
        elif command[:1] == ["clients"]:
            answer(run_clients(run, int(command[1]), float(command[2])))
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
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
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
