"""The ONNX bench's results: one record per case (ratios, targets, agreement), the table
printed as cases finish, the JSON file rewritten after each case (an interrupted run keeps
what it measured) and the PNG chart at the end."""
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REFERENCE = "onnxruntime"
OURS = "max_c"
# Outputs agree when max |diff| <= TOLERANCE * max(1, max |ONNX Runtime's output|): float32
# engines that sum in different orders differ by ~1e-6 per op relative, far below this.
TOLERANCE = 1e-3
COLUMNS = (f"{'case':<12} {'b':>2} {'t':>2} {'peer':<12} {'median':>9} {'p10':>9} {'p90':>9} "
           f"{'load ms':>8} {'1st ms':>8} {'peak MB':>8} {'max|diff|':>9} {'max_c/peer':>10}  note")


def case_result(case, batch, threads, meta, peers, device="cpu") -> dict:
    result = {"case": case.name, "model": case.model, "seq": case.seq, "batch": batch,
              "threads": threads, "device": device, "weights": meta["weights"],
              "model_mb": meta["bytes"] / 1e6, "peers": peers, "ratio": {}, "problems": [],
              "load_average_1min": os.getloadavg()[0]}  # how noisy the machine was
    ours = peers.get(OURS, {})
    for peer, res in peers.items():
        if peer != OURS and "median_ms" in res and "median_ms" in ours:
            result["ratio"][peer] = ours["median_ms"] / res["median_ms"]
        scale = max(1.0, peers.get(REFERENCE, {}).get("max_abs_output", 1.0))
        if "max_abs_diff" in res:
            res["agrees"] = res["max_abs_diff"] <= TOLERANCE * scale
    if not ours.get("ok", True):
        result["problems"].append(f"max_c failed: {ours['error']}")
    if ours.get("mismatch") or ours.get("agrees") is False:
        result["problems"].append(
            f"max_c disagrees with ONNX Runtime: {ours.get('mismatch') or ours['max_abs_diff']}")
    # The targets are the CPU's (against ONNX Runtime on the CPU): none on the GPU yet.
    result["targets"] = ({} if device != "cpu"
                         else _targets(case, ours, result["ratio"].get(REFERENCE)))
    return result


def _targets(case, ours, ratio) -> dict:
    targets = {}
    if case.latency_target is not None:
        targets["latency_ratio"] = {"at_most": case.latency_target, "value": ratio,
                                    "met": ratio is not None and ratio <= case.latency_target}
    if case.load_target_ms is not None:
        load = ours.get("load_ms")
        targets["load_ms"] = {"at_most": case.load_target_ms, "value": load,
                              "met": load is not None and load <= case.load_target_ms}
    return targets


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def _rows(result):
    rows = []
    lead = f"{result['case']:<12} {result['batch']:>2} {result['threads']:>2}"
    for i, (peer, res) in enumerate(result["peers"].items()):
        prefix = lead if i == 0 else " " * len(lead)
        if not res.get("ok"):
            rows.append(f"{prefix} {peer:<12} FAILED: {_one_line(res['error'])}")
            continue
        if res.get("reference_only"):
            rows.append(f"{prefix} {peer:<12} {'-':>9} {'-':>9} {'-':>9} {res['load_ms']:8.1f} "
                        f"{res['first_run_ms']:8.1f} {res['peak_mb']:8.1f} {'ref':>9} "
                        f"{'-':>10}  {res['note']}")
            continue
        diff = "ref" if peer == REFERENCE else _fmt(res.get("max_abs_diff"), ".2e")
        ratio = _fmt(result["ratio"].get(peer), ".2f")
        rows.append(f"{prefix} {peer:<12} {res['median_ms']:9.2f} {res['p10_ms']:9.2f} "
                    f"{res['p90_ms']:9.2f} {res['load_ms']:8.1f} {res['first_run_ms']:8.1f} "
                    f"{res['peak_mb']:8.1f} {diff:>9} {ratio:>10}  {_note(result, peer, res)}")
    return rows


def _note(result, peer, res):
    notes = []
    if res.get("mismatch") or res.get("agrees") is False:
        notes.append("MISMATCH")
    targets = result["targets"]
    if peer == REFERENCE and "latency_ratio" in targets:
        t = targets["latency_ratio"]
        notes.append(f"target <= {t['at_most']}: {'met' if t['met'] else 'MISSED'}")
    if peer == OURS and "load_ms" in targets:
        t = targets["load_ms"]
        notes.append(f"load target <= {t['at_most']:.0f} ms: {'met' if t['met'] else 'MISSED'}")
    if result.get("device", "cpu") != "cpu" and res.get("note"):
        notes.append(res["note"])
    return ", ".join(notes)


def _one_line(text, width=160):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or "gpu:0"
    except (OSError, subprocess.SubprocessError):
        return "gpu:0"


def _machine(device="cpu") -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    try:
        commit = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    machine = {"cpu": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0],
               "commit": commit, "library": os.environ.get("MAX_C_LIBRARY", "")}
    if device != "cpu":
        machine["gpu"] = _gpu_name()
    return machine


class Report:
    def __init__(self, out_dir: Path, args):
        self.json_path = out_dir / "onnx_bench.json"
        self.png_path = out_dir / "onnx_bench.png"
        device = getattr(args, "device", "cpu")
        self.data = {"started": datetime.datetime.now().isoformat(timespec="seconds"),
                     "machine": _machine(device), "load_average_start": os.getloadavg(),
                     "settings": {k: getattr(args, k) for k in ("batches", "threads", "peers",
                                                                "budget", "rounds", "min_iters",
                                                                "warmup")},
                     "cases": []}
        self.data["settings"]["device"] = device

    def header(self):
        m = self.data["machine"]
        on = f"{m['gpu']} (float32; host: " if "gpu" in m else ""
        print(f"ONNX bench: {on}{m['cpu']}, {m['cores']} cores{')' if on else ''}, load average "
              f"{' '.join(f'{v:.2f}' for v in self.data['load_average_start'])}; "
              f"latencies in ms; peers {', '.join(self.data['settings']['peers'])}")
        if on:
            print("(on the GPU: each timed run ends with a device synchronize; peak MB is the "
                  "host's resident set)")
        print(COLUMNS, flush=True)

    def add(self, result):
        self.data["cases"].append(result)
        print("\n".join(_rows(result)), flush=True)
        self._write()

    def _write(self):
        self.data["load_average_end"] = os.getloadavg()
        self.json_path.write_text(json.dumps(self.data, indent=1))

    def max_c_problems(self):
        return [p for c in self.data["cases"] for p in c["problems"]]

    def finish(self, chart=True):
        self._write()
        print(f"\nresults: {self.json_path}")
        if chart and self.data["cases"]:
            import onnx_chart
            onnx_chart.draw(self.data, self.png_path)
            print(f"chart:   {self.png_path}")
        if self.data["settings"]["device"] != "cpu":
            self._gpu_summary()
        missed = [f"{c['case']} b{c['batch']} t{c['threads']}: {name} "
                  f"{_fmt(t['value'], '.2f')} > {t['at_most']}"
                  for c in self.data["cases"] for name, t in c["targets"].items() if not t["met"]]
        print("targets: all met" if not missed else "targets missed:\n  " + "\n  ".join(missed))
        for p in self.max_c_problems():
            print(f"PROBLEM: {_one_line(p, 400)}")

    def _gpu_summary(self):
        """max_c / PyTorch per case on the GPU, the figure the GPU issue's note asks for."""
        gpu = self.data["machine"].get("gpu", "gpu:0")
        print(f"max_c / PyTorch eager on {gpu} (float32, median latency; < 1: max_c faster):")
        for c in self.data["cases"]:
            ratio = c["ratio"].get("torch")
            ours, torch = c["peers"].get(OURS, {}), c["peers"].get("torch", {})
            figures = (f"{ours['median_ms']:.2f} ms vs {torch['median_ms']:.2f} ms"
                       if ratio is not None else
                       "; ".join(f"{p} {'absent' if not r else 'failed' if not r.get('ok') else 'untimed'}"
                                 for p, r in ((OURS, ours), ("torch", torch))
                                 if "median_ms" not in r) or "-")
            print(f"  {c['case']:<12} b{c['batch']:<2} {_fmt(ratio, '.2f'):>6}  ({figures})")
