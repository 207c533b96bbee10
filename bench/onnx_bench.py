"""The ONNX bench: max_c against ONNX Runtime (and PyTorch CPU where torch is installed) on
the same generated .onnx files (bench/onnx_models.py): the MLP, MiniLM-L6 at seq 32 and 128,
BERT-base at seq 128, a GPT-2-small decoder stack (prefill 128) and ResNet-50, at each batch
size and thread count given.

For each case every peer runs in a worker process of its own (bench/onnx_peer.py), loaded
one after the other so load times are not shared. Timed rounds then alternate between the
workers (A B, then B A, ...) so a load from others on the machine falls on all alike. Each
case reports, per peer, the median, p10 and p90 latency, load + compile time, the first
run, peak memory above the process before loading, the largest |difference| of the outputs
against ONNX Runtime's, and max_c's latency over the peer's. A peer that fails to load or
run is reported with its error; the other cases go on. Results go to a JSON file and a PNG
chart as the run goes.

    PYTHONPATH=bindings/python MAX_C_LIBRARY=build-bench/libmax_c.so \\
        python bench/onnx_bench.py [--cases minilm-s128,bert-s128] [--batches 1,8] \\
            [--threads 1,2] [--peers max_c,onnxruntime,torch] [--budget 10] [--out DIR] \\
            [--device cpu|gpu]

--device gpu (float32) runs max_c and PyTorch on gpu:0 instead (bench/onnx_peer.py says how
each is placed and synchronized) and reports max_c's latency over PyTorch's. ONNX Runtime is
timed there only where onnxruntime-gpu's CUDAExecutionProvider is available; otherwise its
CPU run, untimed, gives the reference outputs the others are compared with. The CPU's
targets do not apply on the GPU. Without an accelerator, --device gpu exits with status 2
and a message that starts "no accelerator:".

Not a test: it fails only when it cannot run at all (nonzero exit when some max_c case
failed or disagreed with ONNX Runtime).
"""
import argparse
import importlib.util
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import onnx_models  # noqa: E402
import onnx_report  # noqa: E402
from onnx_worker import PeerError, Worker  # noqa: E402

REFERENCE = "onnxruntime"
LOAD_TIMEOUT_S = 900  # BERT-base or GPT-2 at batch 8 on one thread, on a busy machine


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(onnx_models.CASES),
                        help="comma-separated, of: " + ", ".join(onnx_models.CASES))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", default=None,
                        help="default 1,2 on the CPU; 2 on the GPU (the host's share there)")
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                        help="where max_c and torch run (float32); gpu needs an accelerator")
    parser.add_argument("--peers", default="max_c,onnxruntime,torch",
                        help="torch is skipped, with a note, when it is not installed")
    parser.add_argument("--budget", type=float, default=10.0,
                        help="seconds of timed runs per case, all peers together")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-iters", type=int, default=5, help="per peer, however long")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--pause", type=float, default=0.05,
                        help="seconds between rounds, for the last peer's spinning threads to sleep")
    parser.add_argument("--cache", default=str(onnx_models.DEFAULT_CACHE))
    parser.add_argument("--out", default=str(HERE.parent / "build-bench" / "onnx-bench"))
    parser.add_argument("--no-chart", action="store_true")
    args = parser.parse_args()
    args.cases = _names(args.cases, onnx_models.CASES, "case")
    args.batches = [int(b) for b in args.batches.split(",")]
    if args.threads is None:
        args.threads = "2" if args.device == "gpu" else "1,2"
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.device == "gpu":
        require_accelerator()
    args.peers = _available_peers(_names(args.peers, ["max_c", "onnxruntime", "torch"], "peer"))
    args.reference_only = False
    if args.device == "gpu" and not _onnxruntime_has_cuda():
        args.peers = [p for p in args.peers if p != REFERENCE]
        args.reference_only = True
    return args


def require_accelerator():
    """Exits with status 2 and a message starting "no accelerator:" unless max_c sees one."""
    try:
        from max_c.driver import accelerator_count
        count = accelerator_count()
    except Exception as e:  # noqa: BLE001 - a library that cannot load finds no GPU either
        _no_accelerator(f"max_c could not be loaded to look for one ({type(e).__name__}: {e})")
    if count == 0:
        _no_accelerator("max_c sees none (accelerator_count() is 0: no GPU, or no CUDA driver "
                        "libcuda.so.1 to reach it; MAX_C_CUDA_LIBRARY names another path); "
                        "--device gpu runs on a machine with a GPU")


def _no_accelerator(why):
    print(f"onnx_bench: no accelerator: {why}", file=sys.stderr)
    sys.exit(2)


def _onnxruntime_has_cuda():
    """Whether ONNX Runtime can be timed on the GPU (onnxruntime-gpu's CUDA provider); says
    why not when it cannot."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        sys.exit(f"onnx_bench: onnxruntime gives the reference outputs and cannot be imported: {e}")
    providers = ort.get_available_providers()
    if "CUDAExecutionProvider" in providers:
        return True
    print(f"onnx_bench: onnxruntime {ort.__version__} has no CUDAExecutionProvider (providers: "
          f"{', '.join(providers)}; onnxruntime-gpu has it): ONNX Runtime is not timed on the "
          "GPU; its CPU run, untimed, gives the reference outputs")
    return False


def _names(text, known, what):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"onnx_bench: unknown {what}(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def _available_peers(peers):
    if "torch" in peers and importlib.util.find_spec("torch") is None:
        print("onnx_bench: torch is not installed: the PyTorch peer is skipped")
        peers = [p for p in peers if p != "torch"]
    if REFERENCE not in peers:
        sys.exit("onnx_bench: onnxruntime is the reference the outputs are compared with: keep it")
    return peers


# ---- one case --------------------------------------------------------------------------------


def start_peers(args, peers, model_path, inputs_path, work, threads):
    """{peer: Worker} of the peers that loaded, {peer: result} with the load figures or the
    error of each. Loaded one at a time, so no load competes with another."""
    workers, results = {}, {}
    if args.reference_only:
        results[REFERENCE] = reference_outputs(model_path, inputs_path, work)
    for peer in peers:
        w = Worker(peer, model_path, inputs_path, work / f"{peer}.npz", threads, args.warmup,
                   device=args.device)
        try:
            ready = w.read(LOAD_TIMEOUT_S)
        except PeerError as e:
            w.close()
            results[peer] = {"ok": False, "error": str(e)}
            continue
        workers[peer] = w
        results[peer] = {"ok": True, "version": ready["version"], "load_ms": ready["load_ms"],
                         "first_run_ms": ready["first_run_ms"], "output_names": ready["outputs"],
                         "device": ready.get("device", "cpu"), "note": ready.get("note", "")}
    return workers, results


def reference_outputs(model_path, inputs_path, work):
    """ONNX Runtime's outputs from one untimed CPU run on every core, where it cannot be timed
    on the GPU: the reference the GPU peers' outputs are compared with."""
    w = Worker(REFERENCE, model_path, inputs_path, work / f"{REFERENCE}.npz",
               os.cpu_count() or 1, 0, device="cpu")
    try:
        ready = w.read(LOAD_TIMEOUT_S)
        done = w.ask("quit", 60)
    except PeerError as e:
        return {"ok": False, "error": str(e)}
    finally:
        w.close()
    return {"ok": True, "reference_only": True, "device": "cpu", "version": ready["version"],
            "load_ms": ready["load_ms"], "first_run_ms": ready["first_run_ms"],
            "output_names": ready["outputs"], "peak_mb": done["peak_mb"],
            "note": "CPU, untimed: the reference outputs only"}


def time_rounds(args, workers, results):
    """Alternating timed rounds; a peer that fails mid-way keeps its error, the others go on."""
    times = {p: [] for p in workers}
    per_round = args.budget / (args.rounds * max(len(workers), 1))
    min_per_round = math.ceil(args.min_iters / args.rounds)
    for r in range(args.rounds):
        order = list(workers) if r % 2 == 0 else list(reversed(workers))
        for peer in order:
            if not results[peer]["ok"]:
                continue
            try:
                answer = workers[peer].ask(f"run {per_round} {min_per_round}",
                                           LOAD_TIMEOUT_S + per_round)
                times[peer] += answer["times_ms"]
            except PeerError as e:
                results[peer] = {"ok": False, "error": str(e)}
            time.sleep(args.pause)
    for peer, w in workers.items():
        if results[peer]["ok"]:
            try:
                results[peer].update(w.ask("quit", 60))
            except PeerError as e:
                results[peer] = {"ok": False, "error": str(e)}
            else:
                results[peer].update(_latency_stats(times[peer]))
        w.close()


def _latency_stats(times):
    p10, median, p90 = np.percentile(times, [10, 50, 90])
    return {"median_ms": float(median), "p10_ms": float(p10), "p90_ms": float(p90),
            "mean_ms": float(np.mean(times)), "iterations": len(times)}


def compare_outputs(results, work):
    """max |difference| of each peer's outputs against ONNX Runtime's, and the largest |value|
    of ONNX Runtime's outputs for scale."""
    if not results.get(REFERENCE, {}).get("ok"):
        return
    ref = np.load(work / f"{REFERENCE}.npz")
    ref_arrays = [ref[k] for k in sorted(ref.files, key=lambda k: int(k[3:]))]
    results[REFERENCE]["max_abs_output"] = float(max(np.abs(a).max() for a in ref_arrays))
    for peer, res in results.items():
        if peer == REFERENCE or not res.get("ok"):
            continue
        ours = np.load(work / f"{peer}.npz")
        arrays = [ours[k] for k in sorted(ours.files, key=lambda k: int(k[3:]))]
        if [a.shape for a in arrays] != [a.shape for a in ref_arrays]:
            res["mismatch"] = (f"output shapes {[a.shape for a in arrays]}, ONNX Runtime's "
                               f"{[a.shape for a in ref_arrays]}")
            continue
        diffs = [np.abs(a.astype(np.float64) - b).max() for a, b in zip(arrays, ref_arrays)]
        res["max_abs_diff"] = float(max(diffs))


def run_case(args, case, batch, threads, model_path, meta):
    peers = args.peers
    with tempfile.TemporaryDirectory(prefix="max_c-onnx-bench-") as tmp:
        work = Path(tmp)
        inputs_path = work / "inputs.npz"
        np.savez(inputs_path, **case.inputs(batch))
        workers, results = start_peers(args, peers, model_path, inputs_path, work, threads)
        time_rounds(args, workers, results)
        compare_outputs(results, work)
    return onnx_report.case_result(case, batch, threads, meta, results, args.device)


# ---- the run ---------------------------------------------------------------------------------


def main():
    args = parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = onnx_report.Report(out_dir, args)
    report.header()
    for name in args.cases:
        case = onnx_models.CASES[name]
        path, meta = onnx_models.ensure(case.model, args.cache)
        for batch in args.batches:
            for threads in args.threads:
                report.add(run_case(args, case, batch, threads, path, meta))
    report.finish(chart=not args.no_chart)
    return 1 if report.max_c_problems() else 0


if __name__ == "__main__":
    sys.exit(main())
