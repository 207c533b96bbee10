"""ONNX backend conformance: every node test case of the installed `onnx` package either
passes or is unsupported (UNIMPLEMENTED); none may fail, and every case in must_pass.txt
must pass. See backend_runner.py for how a case is run and classified."""
import os

import pytest

import onnx  # installed by scripts/setup.sh: a missing package fails the suite, never skips it

import backend_runner  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _must_pass():
    with open(os.path.join(HERE, "must_pass.txt")) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def results():
    return backend_runner.run_all(backend_runner.case_names())


def test_no_case_fails(results, capsys):
    with capsys.disabled():  # CI's log shows the count however pytest captures output
        print("\nONNX backend node cases: " + backend_runner.summary(results))
    failed = {n: r["detail"] for n, r in results.items() if r["status"] == "fail"}
    assert not failed, f"{len(failed)} cases fail:\n" + "\n".join(f"  {n}: {d}" for n, d in sorted(failed.items()))


def test_must_pass_cases_pass(results):
    missing = [n for n in _must_pass() if n not in results]
    not_passing = {n: results[n] for n in _must_pass() if n in results and results[n]["status"] != "pass"}
    assert not missing, f"cases in must_pass.txt that the onnx package does not have: {missing}"
    assert not not_passing, "cases in must_pass.txt that do not pass:\n" + "\n".join(
        f"  {n}: {r['status']} {r['detail']}" for n, r in sorted(not_passing.items()))
