"""The driver's handle on one bench/onnx_peer.py worker process: starts it, sends commands,
reads its one-line JSON answers with a deadline, and turns a crash, a hang or an error into
a PeerError carrying the worker's message and the tail of its stderr."""
import importlib.util
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEER_SCRIPT = Path(__file__).resolve().parent / "onnx_peer.py"


class PeerError(Exception):
    pass


def child_env() -> dict:
    """This environment, plus what makes the worker import the max_c package and load the
    libmax_c that this process found (when it imported max_c already, as a test does)."""
    env = dict(os.environ)
    # numpy's OpenBLAS team is idle in a worker; its threads would only add to the noise.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    spec = importlib.util.find_spec("max_c")
    if spec is not None and spec.origin:
        package_parent = str(Path(spec.origin).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    loaded = sys.modules.get("max_c")
    if loaded is not None and "MAX_C_LIBRARY" not in env:
        env["MAX_C_LIBRARY"] = str(loaded.library_path)
    return env


class Worker:
    def __init__(self, peer, model, inputs, outputs, threads, warmup, env=None, device="cpu"):
        self.peer = peer
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER_SCRIPT), peer, str(model), str(inputs), str(outputs),
             "--threads", str(threads), "--warmup", str(warmup), "--device", device],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env=env or child_env(), bufsize=0)

    def read(self, timeout: float) -> dict:
        """The next answer; PeerError when it is an error, or none comes in `timeout` s."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise PeerError(f"no answer in {timeout:.0f} s" + self._stderr_tail())
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            chunk = os.read(self.proc.stdout.fileno(), 65536) if ready else b""
            if ready and not chunk:
                code = self.proc.wait()
                raise PeerError(f"the worker exited with status {code}" + self._stderr_tail())
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer = json.loads(line)
        if "error" in answer:
            self.kill()
            raise PeerError(answer["error"])
        return answer

    def ask(self, command: str, timeout: float) -> dict:
        try:
            self.proc.stdin.write(command.encode() + b"\n")
        except (BrokenPipeError, OSError):
            code = self.proc.wait()
            raise PeerError(f"the worker exited with status {code}" + self._stderr_tail()) from None
        return self.read(timeout)

    def _stderr_tail(self, chars: int = 1500) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return f"; stderr: ...{text[-chars:]}" if text else ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        self.kill()
        self._stderr.close()
