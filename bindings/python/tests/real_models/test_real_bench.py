"""`bench/run.sh real` (bench/real_bench.py) on two corpus models at a tiny budget: the JSON
rows it writes carry every figure, a model max_c runs gets a ratio and agrees with ONNX
Runtime, and a model it cannot run (yet) gets its error and no ratio, while ONNX Runtime is
still timed. This keeps the bench runnable as the corpus and the engine change."""
import json
import subprocess
import sys
from pathlib import Path

import max_c  # noqa: F401 - imported so the workers load this libmax_c (onnx_worker.child_env)

BENCH = Path(__file__).resolve().parents[4] / "bench"
sys.path.insert(0, str(BENCH))

from onnx_worker import child_env  # noqa: E402

FIELDS = ("model", "shape", "threads", "max_c_ms", "ort_ms", "ratio", "max_c_load_ms",
          "ort_load_ms", "max_c_peak_mb", "ort_peak_mb", "max_abs_diff")


def test_rows_and_geometric_mean(tmp_path):
    # light_squeezenet runs in max_c today; the mobile classifier may or may not.
    models = "light_squeezenet,ppocr_mobile_v2_cls"
    run = subprocess.run(
        [sys.executable, str(BENCH / "real_bench.py"), "--models", models, "--threads", "1",
         "--budget", "0.2", "--rounds", "1", "--min-iters", "1", "--warmup", "0",
         "--out", str(tmp_path)],
        env=child_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads((tmp_path / "real_models.json").read_text())
    rows = data["rows"]
    assert [(r["model"], r["shape"]) for r in rows] == [
        ("light_squeezenet", "b1x3x224x224"), ("ppocr_mobile_v2_cls", "48x192"),
        ("ppocr_mobile_v2_cls", "48x96")]
    for r in rows:
        assert all(f in r for f in FIELDS), r
        assert r["threads"] == 1 and r["ort_ms"] > 0 and r["ort_load_ms"] > 0, r
        if "max_c_error" in r:
            assert r["ratio"] is None and r["max_c_ms"] is None, r
        else:
            assert r["ratio"] == r["max_c_ms"] / r["ort_ms"] and r["agrees"], r
    squeezenet = rows[0]
    assert "max_c_error" not in squeezenet and squeezenet["max_c_peak_mb"] > 0
    assert data["geomean_ratio"]["1"]["rows"] == sum(1 for r in rows if r["ratio"])
    assert "geometric mean max_c / ORT at 1 thread(s)" in run.stdout
