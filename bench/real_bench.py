"""The real-model bench (`bench/run.sh real`): max_c against ONNX Runtime on the corpus of
bench/real_corpus.py, every model as it ships, at each of its batch-1 input shapes (the VAD:
one streaming call of 64 + 512 samples, its state at zero) and each thread count.

The machinery is the ONNX bench's (bench/onnx_bench.py): each engine in a worker process of
its own (bench/onnx_peer.py), loaded one after the other, timed in alternating rounds, with
its load + compile time, peak memory above the process before loading, and its outputs
compared with ONNX Runtime's. One row per model x shape x threads goes to
build-bench/real/real_models.json (rewritten after each row, so an interrupted run keeps what
it measured): model, shape, threads, max_c_ms, ort_ms (medians), ratio (max_c / ORT),
max_c_load_ms, ort_load_ms, max_c_peak_mb, ort_peak_mb, max_abs_diff, and max_c_error where
max_c cannot load or run the model (ONNX Runtime is still timed; the row has no ratio). The
table is printed as rows finish, then the geometric mean of the ratio per thread count over
the rows max_c ran.

    PYTHONPATH=bindings/python MAX_C_LIBRARY=build-bench/libmax_c.so \\
        python bench/real_bench.py [--models ppocr_v4_det,light_resnet50] [--threads 1,2] \\
            [--budget 3] [--out DIR]

Not a test: it fails (status 1) only when max_c ran a model and disagreed with ONNX Runtime
beyond the model's tolerance, or when nothing could run.
"""
import argparse
import datetime
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import onnx_bench  # noqa: E402
import onnx_report  # noqa: E402
import real_corpus  # noqa: E402

OURS, REFERENCE = "max_c", "onnxruntime"
COLUMNS = (f"{'model':<24} {'shape':<12} {'t':>2} {'max_c ms':>9} {'ORT ms':>9} {'ratio':>6} "
           f"{'load ms':>15} {'peak MB':>13} {'max|diff|':>9}  note")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(real_corpus.MODELS),
                        help="comma-separated, of: " + ", ".join(real_corpus.MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of timed runs per row, both engines together")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-iters", type=int, default=5, help="per engine, however long")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--out", default=str(HERE.parent / "build-bench" / "real"))
    args = parser.parse_args()
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in real_corpus.MODELS]
    if unknown:
        sys.exit(f"real_bench: unknown model(s) {', '.join(unknown)}; known: "
                 f"{', '.join(real_corpus.MODELS)}")
    args.models = [real_corpus.MODELS[n] for n in names]
    args.threads = [int(t) for t in args.threads.split(",")]
    # What onnx_bench's start_peers and time_rounds read: the CPU, both engines timed.
    args.device, args.reference_only = "cpu", False
    return args


def measure(args, model, shape, threads):
    """{peer: result} of one row, from onnx_bench's workers."""
    path = model.path()
    with tempfile.TemporaryDirectory(prefix="max_c-real-bench-") as tmp:
        work = Path(tmp)
        inputs_path = work / "inputs.npz"
        np.savez(inputs_path, **shape.feeds(0))
        workers, results = onnx_bench.start_peers(args, [OURS, REFERENCE], path, inputs_path,
                                                  work, threads)
        onnx_bench.time_rounds(args, workers, results)
        onnx_bench.compare_outputs(results, work)
    return results


def row(model, shape, threads, results) -> dict:
    ours, ref = results.get(OURS, {}), results.get(REFERENCE, {})
    r = {"model": model.name, "source": model.source, "shape": shape.name, "threads": threads,
         "max_c_ms": ours.get("median_ms"), "ort_ms": ref.get("median_ms"), "ratio": None,
         "max_c_load_ms": ours.get("load_ms"), "ort_load_ms": ref.get("load_ms"),
         "max_c_peak_mb": ours.get("peak_mb"), "ort_peak_mb": ref.get("peak_mb"),
         "max_c_first_run_ms": ours.get("first_run_ms"), "ort_first_run_ms": ref.get("first_run_ms"),
         "max_abs_diff": ours.get("max_abs_diff"), "rtol": model.rtol, "atol": model.atol,
         "load_average_1min": os.getloadavg()[0]}
    if not ours.get("ok"):
        r["max_c_error"] = ours.get("error", "not run")
    if not ref.get("ok"):
        r["ort_error"] = ref.get("error", "not run")
    if r["max_c_ms"] is not None and r["ort_ms"] is not None:
        r["ratio"] = r["max_c_ms"] / r["ort_ms"]
    if ours.get("mismatch"):
        r["mismatch"] = ours["mismatch"]
    elif r["max_abs_diff"] is not None:
        # The test's tolerance, taken at the largest output: a bench-side sanity check only.
        r["agrees"] = r["max_abs_diff"] <= model.atol + model.rtol * ref.get("max_abs_output", 0.0)
    return r


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def print_row(r):
    load = f"{_fmt(r['max_c_load_ms'], '.0f')}/{_fmt(r['ort_load_ms'], '.0f')}"
    peak = f"{_fmt(r['max_c_peak_mb'], '.0f')}/{_fmt(r['ort_peak_mb'], '.0f')}"
    notes = []
    if "max_c_error" in r:
        notes.append("max_c: " + onnx_report._one_line(r["max_c_error"], 110))
    if "ort_error" in r:
        notes.append("ORT: " + onnx_report._one_line(r["ort_error"], 110))
    if r.get("mismatch") or r.get("agrees") is False:
        notes.append("MISMATCH " + (r.get("mismatch") or ""))
    print(f"{r['model']:<24} {r['shape']:<12} {r['threads']:>2} {_fmt(r['max_c_ms'], '9.2f'):>9} "
          f"{_fmt(r['ort_ms'], '9.2f'):>9} {_fmt(r['ratio'], '6.2f'):>6} {load:>15} {peak:>13} "
          f"{_fmt(r['max_abs_diff'], '.2e'):>9}  {'; '.join(notes)}", flush=True)


def geomean_ratios(rows) -> dict:
    """{threads: (geometric mean of max_c / ORT, rows)} over the rows max_c ran."""
    out = {}
    for t in sorted({r["threads"] for r in rows}):
        ratios = [r["ratio"] for r in rows if r["threads"] == t and r["ratio"]]
        if ratios:
            out[t] = (math.exp(sum(math.log(x) for x in ratios) / len(ratios)), len(ratios))
    return out


def main():
    args = parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "real_models.json"
    data = {"started": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": onnx_report._machine(), "load_average_start": os.getloadavg(),
            "settings": {k: getattr(args, k) for k in ("threads", "budget", "rounds",
                                                       "min_iters", "warmup")},
            "rows": []}
    m = data["machine"]
    print(f"real-model bench: {m['cpu']}, {m['cores']} cores, load average "
          f"{' '.join(f'{v:.2f}' for v in data['load_average_start'])}; batch 1; median latency "
          "in ms; load and peak memory as max_c/ORT")
    print(COLUMNS, flush=True)
    for model in args.models:
        for shape in [s for s in model.shapes if s.batch == 1]:
            for threads in args.threads:
                r = row(model, shape, threads, measure(args, model, shape, threads))
                data["rows"].append(r)
                print_row(r)
                data["load_average_end"] = os.getloadavg()
                json_path.write_text(json.dumps(data, indent=1))
    rows = data["rows"]
    data["geomean_ratio"] = {str(t): {"ratio": g, "rows": n} for t, (g, n) in geomean_ratios(rows).items()}
    json_path.write_text(json.dumps(data, indent=1))
    print(f"\nresults: {json_path}")
    failed = sorted({r["model"] for r in rows if "max_c_error" in r})
    for t, (g, n) in geomean_ratios(rows).items():
        ran = len({r["model"] for r in rows if r["threads"] == t and r["ratio"]})
        print(f"geometric mean max_c / ORT at {t} thread(s): {g:.2f} over {n} rows ({ran} models)")
    if failed:
        print(f"max_c cannot run {len(failed)} model(s) yet: {', '.join(failed)}")
    bad = [r for r in rows if r.get("mismatch") or r.get("agrees") is False]
    for r in bad:
        print(f"PROBLEM: {r['model']} {r['shape']} t{r['threads']}: max_c disagrees with ONNX "
              f"Runtime: {r.get('mismatch') or r['max_abs_diff']}")
    ran_any = any(r["ort_ms"] is not None for r in rows)
    return 1 if bad or not ran_any else 0


if __name__ == "__main__":
    sys.exit(main())
