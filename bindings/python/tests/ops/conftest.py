"""The GPU's refusals, counted. On the GPU (MAX_C_TEST_DEVICE=gpu) a case whose op the GPU
engine refuses (UNIMPLEMENTED) skips (harness.run), and a skip alone would let a GPU variant
go missing unseen. So the run fails when the cases that skipped so differ from the committed
list, tests/gpu_unimplemented.txt, in either direction, naming each case that differs: a new
refusal is a GPU variant gone missing (or one never written), and a listed case that ran is
a variant that arrived, to be taken off the list. A run of part of the suite is checked on the
cases it ran.

Regenerate the list after a deliberate change with MAX_C_WRITE_GPU_UNIMPLEMENTED=1 on a run of
the whole suite (scripts/test.sh gpu_emulated, or the pytest line of its README).
"""
import os
import re

import pytest

from harness import GPU_UNIMPLEMENTED

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tests",
                    "gpu_unimplemented.txt")
HEADER = """\
# The op-conformance cases that skip on the GPU because the GPU engine refuses their op
# (UNIMPLEMENTED): one per line, "<file>::<case> <op>", sorted. The GPU run of the suite
# fails when the cases that skip differ from these (bindings/python/tests/ops/conftest.py).
# Regenerate with MAX_C_WRITE_GPU_UNIMPLEMENTED=1 bash scripts/test.sh gpu_emulated.
"""

# Read once: a test may set MAX_C_TEST_DEVICE to what harness.on_gpu refuses (test_harness.py).
_GPU_RUN = os.environ.get("MAX_C_TEST_DEVICE") == "gpu"
_ran = set()      # the cases this run reported on, as listed
_refused = {}     # case -> the op the GPU refused
_differences = []


def _case(nodeid):
    path, _, name = nodeid.partition("::")
    return f"{os.path.basename(path)}::{name}"


def _is_controller(config):
    return not hasattr(config, "workerinput")  # an xdist worker reports to the controller


def _in_this_suite(nodeid):
    folder = os.path.dirname(nodeid.partition("::")[0])
    return folder == "" or os.path.basename(folder) == "ops"


def pytest_runtest_logreport(report):
    if not _GPU_RUN or not _in_this_suite(report.nodeid):
        return
    case = _case(report.nodeid)
    _ran.add(case)
    if report.skipped and isinstance(report.longrepr, (tuple, list)):  # (path, line, reason)
        reason = str(report.longrepr[2])
        if GPU_UNIMPLEMENTED in reason:
            op = re.search(r"op '([^']+)'", reason)
            _refused[case] = op.group(1) if op else "-"


def _listed():
    if not os.path.exists(LIST):
        return {}
    with open(LIST) as f:
        entries = [line.split() for line in f if line.strip() and not line.startswith("#")]
    return {e[0]: e[1] if len(e) > 1 else "-" for e in entries}


def _write(refused):
    with open(LIST, "w") as f:
        f.write(HEADER)
        for case in sorted(refused):
            f.write(f"{case} {refused[case]}\n")


def pytest_sessionfinish(session, exitstatus):
    if not _GPU_RUN or not _is_controller(session.config) or not _ran:
        return
    mine = _refused
    if os.environ.get("MAX_C_WRITE_GPU_UNIMPLEMENTED", "0") not in ("", "0"):
        _write(mine)
        return
    listed = _listed()
    for case in sorted(set(mine) - set(listed)):
        _differences.append(f"+ {case} {mine[case]}  (refused on the GPU, not listed: a GPU variant is missing)")
    for case in sorted(set(listed) & _ran - set(mine)):
        _differences.append(f"- {case} {listed[case]}  (listed, but it ran on the GPU: take it off the list)")
    for case in sorted(set(mine) & set(listed)):
        if mine[case] != listed[case]:
            _differences.append(f"~ {case} {mine[case]}  (listed with op {listed[case]})")
    if _differences:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if _differences:
        terminalreporter.section("GPU refusals differ from tests/gpu_unimplemented.txt", red=True)
        for line in _differences:
            terminalreporter.line(line)
        terminalreporter.line(f"{len(_differences)} differences; see {os.path.normpath(LIST)}")
