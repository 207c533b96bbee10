"""Runs the ONNX backend node test cases (the `onnx` package's onnx/backend/test/data/node)
through max_c: InferenceSession().load("<case>/model.onnx") imports, compiles and binds the
model's initializers; execute(*inputs) runs it on each test_data_set_*.

Each case is one of: pass; fail (wrong values, a crash, or an error other than
UNIMPLEMENTED); unsupported (UNIMPLEMENTED: an operator, attribute value or type max_c's
ONNX importer or kernels do not have, or inputs that are not plain tensors).

Cases run in a worker subprocess, so a crash or a hang fails that case only; the worker is
restarted after one. `python backend_runner.py [--list FILE] [pattern...]` prints one line
per case and the totals "N passed, M failed, K unsupported". With MAX_C_TEST_DEVICE=gpu each
model is imported onto gpu:0 and fed device tensors (a real GPU, or the emulated one of
tests/emulated_gpu).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_TIMEOUT_S = 60


def node_data_dir():
    """The node cases' directory: the onnx package's own when its wheel ships one, else one
    generated once (per onnx version) from onnx.backend.test.case.node into the temp dir."""
    import onnx
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(shipped):
        return shipped
    generated = os.path.join(tempfile.gettempdir(), f"max_c_onnx_node_{onnx.__version__}")
    if not os.path.exists(os.path.join(generated, ".complete")):
        _generate(generated)
    return generated


def _generate(root):
    """Writes each node test case as the backend's data layout: model.onnx and
    test_data_set_<k>/{input,output}_<i>.pb (an `unsupported` file where a data set holds
    sequences or optionals rather than tensors)."""
    import warnings

    import numpy as np
    import onnx
    from onnx import numpy_helper
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases()
    tmp = root + f".tmp{os.getpid()}"
    for case in cases:
        d = os.path.join(tmp, case.name)
        os.makedirs(d, exist_ok=True)
        onnx.save(case.model, os.path.join(d, "model.onnx"))
        with open(os.path.join(d, "tolerance.json"), "w") as f:
            json.dump({"rtol": case.rtol, "atol": case.atol}, f)
        for k, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds, exist_ok=True)
            for prefix, values in (("input", inputs), ("output", outputs)):
                for i, v in enumerate(values):
                    if isinstance(v, onnx.TensorProto):  # types numpy has no dtype for
                        with open(os.path.join(ds, f"{prefix}_{i}.pb"), "wb") as f:
                            f.write(v.SerializeToString())
                        continue
                    if isinstance(v, np.generic):
                        v = np.asarray(v)
                    if not isinstance(v, np.ndarray):
                        open(os.path.join(d, "unsupported"), "w").write(f"{prefix} {i} is {type(v).__name__}")
                        continue
                    try:
                        data = numpy_helper.from_array(v).SerializeToString()
                    except Exception as e:  # noqa: BLE001 (dtypes numpy_helper cannot write)
                        open(os.path.join(d, "unsupported"), "w").write(f"{prefix} {i}: {e}")
                        continue
                    with open(os.path.join(ds, f"{prefix}_{i}.pb"), "wb") as f:
                        f.write(data)
    open(os.path.join(tmp, ".complete"), "w").close()
    if os.path.exists(root):
        shutil.rmtree(root)
    os.replace(tmp, root)


def case_names(patterns=()):
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(node_data_dir(), "test_*"))
                   if os.path.isfile(os.path.join(p, "model.onnx")))
    if patterns:
        names = [n for n in names if any(pat in n for pat in patterns)]
    return names


# ---- one case (runs in the worker) ---------------------------------------------------------

def _load_tensors(data_set, prefix):
    import onnx
    from onnx import numpy_helper
    files = glob.glob(os.path.join(data_set, f"{prefix}_*.pb"))
    files.sort(key=lambda p: int(os.path.basename(p)[len(prefix) + 1:-3]))
    out = []
    for path in files:
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        if t.data_type == onnx.TensorProto.STRING:
            raise _Unsupported(f"{os.path.basename(path)} holds strings")
        out.append(numpy_helper.to_array(t))
    return out


class _Unsupported(Exception):
    pass


def _compare(got, want, rtol, atol):
    import numpy as np
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    if want.dtype.kind in "biu":
        if not np.array_equal(got, want):
            return f"values differ: got {got.ravel()[:8]}, expected {want.ravel()[:8]}"
        return None
    if want.dtype.name == "bfloat16":
        # 8 significant bits: the reference rounds every intermediate to bfloat16, so it and
        # a result of ours can each sit one ulp off the exact value, on opposite sides: two
        # ulps apart, 2^-6 relative just above a power of two.
        rtol = max(rtol, 2.0**-6)
    try:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)
    except AssertionError as e:
        return "values differ: " + " ".join(str(e).split())[:300]
    return None


def run_case(session, name):
    """(status, detail) for one case: status is pass, fail or unsupported."""
    from max_c import _errors
    case = os.path.join(node_data_dir(), name)
    if os.path.exists(os.path.join(case, "unsupported")):
        with open(os.path.join(case, "unsupported")) as f:
            return "unsupported", "test data is not plain tensors: " + f.read()
    rtol, atol = 1e-3, 1e-5
    if os.path.exists(os.path.join(case, "tolerance.json")):
        with open(os.path.join(case, "tolerance.json")) as f:
            tol = json.load(f)
        rtol, atol = max(tol["rtol"], 1e-3), max(tol["atol"], 1e-5)
    try:
        data_sets = sorted(glob.glob(os.path.join(case, "test_data_set_*")))
        loaded = [(_load_tensors(d, "input"), _load_tensors(d, "output")) for d in data_sets]
    except _Unsupported as e:
        return "unsupported", str(e)
    except Exception as e:  # sequences, optionals, maps: not tensors
        return "unsupported", f"test data is not plain tensors ({type(e).__name__})"
    try:
        gpu = session.devices[1] if len(session.devices) > 1 else None
        model = session.load(os.path.join(case, "model.onnx"), device=gpu)
        for inputs, outputs in loaded:
            results = model.execute(*[_to(gpu, x) for x in inputs])
            if len(results) != len(outputs):
                return "fail", f"{len(results)} outputs, expected {len(outputs)}"
            for i, (got, want) in enumerate(zip(results, outputs)):
                problem = _compare(_host_array(got), want, rtol, atol)
                if problem:
                    return "fail", f"output {i}: {problem}"
    except _errors.MaxError as e:
        if e.code == _errors.UNIMPLEMENTED:
            return "unsupported", e.message
        return "fail", str(e)
    except ValueError as e:
        # The Python binding cannot exchange this dtype with numpy (bfloat16 through
        # ml_dtypes): a binding limit, not the importer's; reported, counted apart.
        if "has no max_c DType" in str(e) or "has no numpy equivalent" in str(e):
            return "unsupported", f"binding: {e}"
        return "fail", f"{type(e).__name__}: {e}"
    except Exception as e:
        return "fail", f"{type(e).__name__}: {e}"
    return "pass", ""


def _to(gpu, array):
    """An input as the model takes it: the array itself, or a tensor on the gpu."""
    if gpu is None:
        return array
    from max_c.driver import Tensor
    return Tensor.from_numpy(array).to(gpu)


def _host_array(tensor):
    from max_c.driver import CPU
    return (tensor if tensor.device.is_host else tensor.to(CPU())).to_numpy()


def _worker():
    import max_c.engine
    from max_c.driver import CPU, Accelerator
    on_gpu = os.environ.get("MAX_C_TEST_DEVICE", "cpu") == "gpu"
    session = max_c.engine.InferenceSession(devices=[CPU(), Accelerator()] if on_gpu else None)
    for line in sys.stdin:
        name = line.strip()
        status, detail = run_case(session, name)
        sys.stdout.write(json.dumps({"name": name, "status": status, "detail": detail}) + "\n")
        sys.stdout.flush()


# ---- the driver ------------------------------------------------------------------------------

class _Worker:
    def __init__(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", ".."), env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def run(self, name):
        import select
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], CASE_TIMEOUT_S)
        if not ready:
            self.close()
            return {"name": name, "status": "fail", "detail": f"timed out after {CASE_TIMEOUT_S} s"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            return {"name": name, "status": "fail", "detail": f"the worker crashed (exit status {code})"}
        return json.loads(line)

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.alive():
            self.proc.kill()
        self.proc.wait()


def run_all(names):
    """{name: {"status", "detail"}} for every case, in a restartable worker."""
    results = {}
    worker = _Worker()
    try:
        for name in names:
            if not worker.alive():
                worker = _Worker()
            r = worker.run(name)
            results[name] = r
    finally:
        worker.proc.stdin.close()
        worker.close()
    return results


def summary(results):
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    for r in results.values():
        counts[r["status"]] += 1
    return f"{counts['pass']} passed, {counts['fail']} failed, {counts['unsupported']} unsupported"


def main(argv):
    if argv[:1] == ["--worker"]:
        return _worker()
    list_file = None
    if argv[:1] == ["--list"]:
        list_file, argv = argv[1], argv[2:]
    start = time.time()
    results = run_all(case_names(argv))
    for name, r in results.items():
        print(f"{r['status']:11s} {name}  {r['detail'][:200]}")
    print(summary(results), f"({time.time() - start:.0f} s)")
    if list_file:
        with open(list_file, "w") as f:
            f.write("# ONNX backend node cases that must pass (generated by backend_runner.py --list)\n")
            for name, r in results.items():
                if r["status"] == "pass":
                    f.write(name + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
