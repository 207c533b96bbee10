"""`pip install ./bindings/python` into a throwaway venv, then the installed package (not this
checkout) runs a model, finding libmax_c each of the ways the README lists: $MAX_C_LIBRARY,
the package directory, pkg-config, and the system loader (LD_LIBRARY_PATH).

The install never writes into the checkout: the package is copied to a temp dir first. It
works offline when the running Python has setuptools able to build wheels (setuptools >= 70.1,
or setuptools with `wheel`): then pip runs with --no-index --no-build-isolation. Otherwise pip
builds with isolation and needs PyPI (or its cache); the test is skipped only when that fails
for lack of network, and fails for any other reason.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import max_c

PACKAGE_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LIBRARY = os.path.realpath(max_c.library_path)
NETWORK_ERRORS = ("Could not find a version", "No matching distribution", "NewConnectionError",
                  "Failed to establish", "Temporary failure in name resolution",
                  "Network is unreachable", "ConnectTimeout", "ReadTimeout",
                  "Max retries exceeded", "ProxyError")

# Run by the installed interpreter from an empty directory, so only the venv's copy of max_c
# can be imported. Prints where max_c and libmax_c came from and the model's result.
PROBE = textwrap.dedent("""
    import numpy as np
    import max_c
    from max_c.dtype import DType
    from max_c.engine import InferenceSession
    from max_c.graph import Graph, TensorType, Weight, ops

    with Graph("probe", input_types=[TensorType(DType.float32, ["batch", 3])]) as g:
        w = g.add_weight(Weight("w", DType.float32, [3, 2]))
        g.output(ops.relu(g.inputs[0] @ w))
    w = np.array([[1, -1], [2, 0], [0, 3]], np.float32)
    x = np.array([[1, 2, 3], [-1, 0, 1]], np.float32)
    model = InferenceSession(num_threads=1).load(g, weights_registry={"w": w})
    got = model.execute(x)[0].to_numpy()
    np.testing.assert_allclose(got, np.maximum(x @ w, 0))
    print("package", max_c.__file__)
    print("library", max_c.library_path)
    print("result", got.tolist())
""")


# Run by the venv's Python with the build tools it will use: whether setuptools can build a
# wheel without downloading anything (bdist_wheel moved into setuptools in 70.1).
CAN_BUILD_OFFLINE = textwrap.dedent("""
    import setuptools
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    if version < (70, 1):
        import wheel
""")


def _run(cmd, env=None, cwd=None, timeout=300):
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _clean_env(**extra):
    """The environment without anything that would point at this checkout or its library."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MAX_C_LIBRARY", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
                        "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _site_packages(python) -> str:
    out = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _runner_site_dirs() -> list:
    """The site-packages holding this Python's numpy and build tools."""
    import numpy
    dirs = [os.path.dirname(os.path.dirname(numpy.__file__))]
    for name in ("setuptools", "wheel"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        d = os.path.dirname(os.path.dirname(mod.__file__))
        if d not in dirs:
            dirs.append(d)
    return dirs


def _make_venv(root) -> str:
    """A fresh venv that also sees this Python's site-packages (for numpy) through a .pth
    file, so the dependencies need no download."""
    venv = os.path.join(root, "venv")
    out = _run([sys.executable, "-m", "venv", venv])
    assert out.returncode == 0, out.stderr
    python = os.path.join(venv, "bin", "python")
    with open(os.path.join(_site_packages(python), "_runner_deps.pth"), "w") as f:
        f.write("\n".join(_runner_site_dirs()) + "\n")
    return python


def _copy_package(root) -> str:
    dst = os.path.join(root, "src")
    shutil.copytree(PACKAGE_SRC, dst, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__", ".pytest_cache", "*.so*", "*.dylib"))
    return dst


def _pip_install(python, src):
    # This Python's build tools go first on the path (the venv's own setuptools may be older);
    # the installed package still lands in the venv's site-packages.
    tools = _clean_env(PYTHONPATH=os.pathsep.join(_runner_site_dirs()))
    offline = _run([python, "-c", CAN_BUILD_OFFLINE], env=tools).returncode == 0
    if offline:
        cmd = [python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
               "--no-deps", src]
    else:
        cmd = [python, "-m", "pip", "install", src]
    out = _run(cmd, env=tools if offline else _clean_env(), timeout=600)
    if out.returncode != 0:
        log = out.stdout + out.stderr
        if not offline and any(e in log for e in NETWORK_ERRORS):
            pytest.skip("pip cannot reach PyPI and this Python cannot build wheels offline "
                        "(install `wheel` or setuptools >= 70.1 into it):\n" + log[-2000:])
        pytest.fail(f"{' '.join(cmd)} failed:\n{log[-4000:]}")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, site-packages, scratch dir) of a venv where pip installed max_c."""
    root = str(tmp_path_factory.mktemp("pip_install"))
    python = _make_venv(root)
    _pip_install(python, _copy_package(root))
    site = _site_packages(python)
    assert os.path.isfile(os.path.join(site, "max_c", "engine.py")), os.listdir(site)
    work = os.path.join(root, "work")
    os.mkdir(work)
    return python, site, work


def _probe(installed, **env):
    python, site, work = installed
    out = _run([python, "-c", PROBE], env=_clean_env(**env), cwd=work)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert lines["package"].startswith(os.path.join(site, "max_c")), lines
    assert lines["result"] == "[[5.0, 8.0], [0.0, 4.0]]", lines
    return lines["library"]


def test_pip_install_then_run_with_env_var(installed):
    assert _probe(installed, MAX_C_LIBRARY=LIBRARY) == LIBRARY


def test_installed_package_finds_library_through_pkg_config(installed, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    (tmp_path / "max_c.pc").write_text(
        f"libdir={os.path.dirname(LIBRARY)}\n\nName: max_c\nDescription: max_c\n"
        "Version: 1.2.0\nLibs: -L${libdir} -lmax_c\n")
    found = _probe(installed, PKG_CONFIG_PATH=str(tmp_path))
    assert os.path.realpath(found) == LIBRARY


def test_installed_package_finds_library_through_system_loader(installed):
    found = _probe(installed, LD_LIBRARY_PATH=os.path.dirname(LIBRARY),
                   PKG_CONFIG_PATH=os.devnull)
    assert os.path.basename(found).startswith("libmax_c"), found


def test_installed_package_finds_library_in_package_directory(installed):
    _, site, _ = installed
    local = os.path.join(site, "max_c", "libmax_c.so.1")
    shutil.copyfile(LIBRARY, local)
    try:
        assert _probe(installed, PKG_CONFIG_PATH=os.devnull) == local
    finally:
        os.remove(local)
