"""The contention bench (`bench/run.sh contention`): max_c beside ONNX Runtime when the machine
is not theirs alone, every figure a ratio taken in the same run.

For each model, both engines load at `--threads` (default 2) in worker processes of their own
(bench/onnx_peer.py, the ONNX bench's machinery) and are timed in alternating rounds under
three conditions:
  quiet     nothing else runs: median latency of one caller;
  noisy     two busy-loop processes (started and stopped here) compete for the cores: median
            latency of one caller, and each engine's slowdown from quiet to noisy;
  clients   N client threads (--clients, default 1,2,4,8) call execute on one loaded model at
            once, as a server's request threads do: throughput (calls/s) and p99 latency.
The models: the MLP, MiniLM-L6 at sequence 128 and ResNet-50 of the ONNX bench (generated into
its cache), and two CNNs of the real-model corpus as they ship (PP-OCR's direction classifier
and SqueezeNet of the onnx package's light zoo). One JSON object per model goes to
build-bench/contention/contention.json, rewritten after each model. The issue's targets are
marked in the table: quiet and noisy latency ratio max_c / ORT <= 1.0, max_c's noisy slowdown
no worse than ORT's, throughput >= ORT's and p99 <= ORT's at every client count.

    PYTHONPATH=bindings/python MAX_C_LIBRARY=build-bench/libmax_c.so \\
        python bench/contention_bench.py [--models mlp,resnet50] [--threads 2] \\
            [--clients 1,2,4,8] [--budget 4] [--out DIR]

Not a test: it fails only when a model cannot run in either engine.
"""
import argparse
import contextlib
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import onnx_bench  # noqa: E402
import onnx_models  # noqa: E402
import real_corpus  # noqa: E402
from onnx_worker import PeerError  # noqa: E402

OURS, REFERENCE = "max_c", "onnxruntime"
PEERS = [OURS, REFERENCE]
GENERATED = ["mlp", "minilm-s128", "resnet50"]
REAL = ["ppocr_mobile_v2_cls", "light_squeezenet"]
NEIGHBOURS = 2
BUSY_LOOP = "while True: pass"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(GENERATED + REAL),
                        help="comma-separated, of the ONNX bench's cases and the real corpus")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--budget", type=float, default=4.0,
                        help="seconds of timed runs per condition, both engines together")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--min-iters", type=int, default=5, help="per engine and condition")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cache", default=str(onnx_models.DEFAULT_CACHE))
    parser.add_argument("--out", default=str(HERE.parent / "build-bench" / "contention"))
    args = parser.parse_args()
    args.models = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in args.models if n not in onnx_models.CASES and n not in real_corpus.MODELS]
    if unknown:
        sys.exit(f"contention_bench: unknown model(s) {', '.join(unknown)}; known: "
                 f"{', '.join(list(onnx_models.CASES) + list(real_corpus.MODELS))}")
    args.clients = [int(c) for c in args.clients.split(",")]
    args.device, args.reference_only = "cpu", False  # what onnx_bench.start_peers reads
    return args


def model_and_feeds(name, cache):
    """(path of the .onnx file, {input: array}) of a batch-1 call."""
    if name in onnx_models.CASES:
        case = onnx_models.CASES[name]
        path, _ = onnx_models.ensure(case.model, cache)
        return path, case.inputs(1)
    model = real_corpus.MODELS[name]
    return model.path(), model.shapes[0].feeds(0)


@contextlib.contextmanager
def noisy_neighbours(count):
    """`count` processes that spin on a core each until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]
    try:
        time.sleep(0.5)  # let the scheduler see them as CPU-bound
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def alternate(args, workers, command, seconds):
    """{peer: [answers]} of `command` sent in alternating rounds (the order flips each round, so
    neither engine always runs right after the other)."""
    answers = {p: [] for p in workers}
    for r in range(args.rounds):
        order = PEERS if r % 2 == 0 else list(reversed(PEERS))
        for peer in order:
            answers[peer].append(workers[peer].ask(command, onnx_bench.LOAD_TIMEOUT_S + seconds))
    return answers


def latency(args, workers):
    """{peer: median ms} of one caller."""
    per_round = args.budget / (args.rounds * len(PEERS))
    min_iters = -(-args.min_iters // args.rounds)
    answers = alternate(args, workers, f"run {per_round} {min_iters}", per_round)
    return {p: float(np.median([t for a in answers[p] for t in a["times_ms"]])) for p in answers}


def throughput(args, workers, clients):
    """{peer: (calls per second, p99 ms)} with `clients` threads calling at once."""
    per_round = args.budget / (args.rounds * len(PEERS))
    answers = alternate(args, workers, f"clients {clients} {per_round}", per_round)
    figures = {}
    for peer, rounds in answers.items():
        times = [t for a in rounds for t in a["times_ms"]]
        calls = sum(a["calls"] for a in rounds)
        seconds = sum(a["seconds"] for a in rounds)
        figures[peer] = (calls / seconds, float(np.percentile(times, 99)))
    return figures


def measure(args, name):
    path, feeds = model_and_feeds(name, args.cache)
    row = {"model": name, "threads": args.threads}
    with tempfile.TemporaryDirectory(prefix="max_c-contention-") as tmp:
        work = Path(tmp)
        inputs_path = work / "inputs.npz"
        np.savez(inputs_path, **feeds)
        workers, loaded = onnx_bench.start_peers(args, PEERS, path, inputs_path, work, args.threads)
        try:
            failed = {p: r["error"] for p, r in loaded.items() if not r["ok"]}
            if failed:
                row["error"] = "; ".join(f"{p}: {e}" for p, e in failed.items())
                return row
            row["versions"] = {p: loaded[p]["version"] for p in PEERS}
            quiet = latency(args, workers)
            with noisy_neighbours(NEIGHBOURS):
                noisy = latency(args, workers)
            row["quiet"] = _pair(quiet)
            row["noisy"] = _pair(noisy)
            row["noisy"]["max_c_slowdown"] = noisy[OURS] / quiet[OURS]
            row["noisy"]["ort_slowdown"] = noisy[REFERENCE] / quiet[REFERENCE]
            row["clients"] = []
            for clients in args.clients:
                figures = throughput(args, workers, clients)
                (ours_qps, ours_p99), (ref_qps, ref_p99) = figures[OURS], figures[REFERENCE]
                row["clients"].append({
                    "clients": clients, "max_c_calls_s": ours_qps, "ort_calls_s": ref_qps,
                    "throughput_ratio": ours_qps / ref_qps, "max_c_p99_ms": ours_p99,
                    "ort_p99_ms": ref_p99, "p99_ratio": ours_p99 / ref_p99})
        except PeerError as e:
            row["error"] = str(e)
        finally:
            for w in workers.values():
                w.close()
    return row


def _pair(figures):
    return {"max_c_ms": figures[OURS], "ort_ms": figures[REFERENCE],
            "ratio": figures[OURS] / figures[REFERENCE]}


def _mark(ok):
    return " " if ok else "*"


def print_row(row):
    if "error" in row:
        print(f"{row['model']:<20} error: {row['error']}", flush=True)
        return
    q, n = row["quiet"], row["noisy"]
    print(f"{row['model']:<20} quiet {q['max_c_ms']:8.2f} / {q['ort_ms']:8.2f} ms = "
          f"{q['ratio']:5.2f}{_mark(q['ratio'] <= 1.0)}  noisy {n['max_c_ms']:8.2f} / "
          f"{n['ort_ms']:8.2f} ms = {n['ratio']:5.2f}{_mark(n['ratio'] <= 1.0)}  slowdown "
          f"{n['max_c_slowdown']:5.2f} vs {n['ort_slowdown']:5.2f}"
          f"{_mark(n['max_c_slowdown'] <= n['ort_slowdown'])}", flush=True)
    for c in row["clients"]:
        print(f"{'':<20} {c['clients']:>2} clients  {c['max_c_calls_s']:9.1f} / "
              f"{c['ort_calls_s']:9.1f} calls/s = {c['throughput_ratio']:5.2f}"
              f"{_mark(c['throughput_ratio'] >= 1.0)}  p99 {c['max_c_p99_ms']:8.2f} / "
              f"{c['ort_p99_ms']:8.2f} ms = {c['p99_ratio']:5.2f}{_mark(c['p99_ratio'] <= 1.0)}",
              flush=True)


def main():
    args = parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "threads": args.threads, "neighbours": NEIGHBOURS, "rows": []}
    print(f"max_c / ONNX Runtime at {args.threads} threads (figures max_c / ORT; * misses the "
          f"issue's target)", flush=True)
    for name in args.models:
        row = measure(args, name)
        report["rows"].append(row)
        print_row(row)
        (out / "contention.json").write_text(json.dumps(report, indent=1))
    ran = [r for r in report["rows"] if "error" not in r]
    if ran:
        for key in ("quiet", "noisy"):
            geomean = float(np.exp(np.mean([np.log(r[key]["ratio"]) for r in ran])))
            print(f"geomean {key} latency ratio: {geomean:.2f}")
    print(f"wrote {out / 'contention.json'}")
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())
