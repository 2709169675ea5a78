"""The served app as the benchmarks and the tests start it: a free port, ``python app.py`` in its own
session with an empty torch hub (offline: random weights), waiting for its first HTTP 200, stopping it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def offline_env(tmp: Path) -> dict:
    """An empty torch hub (offline: random weights) and a TMPDIR that is removed with ``tmp``."""
    (tmp / "tmp").mkdir(exist_ok=True)
    return dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", TORCH_HOME=str(tmp / "torch_home"),
                VIT_DOWNLOAD_TIMEOUT="1", PYTHONUNBUFFERED="1", TMPDIR=str(tmp / "tmp"))


def start_app(port: int, env: dict, log_path: Path) -> subprocess.Popen:
    """``python app.py --port PORT`` in its own session (so it is stopped alone), its output in ``log_path``."""
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_http_200(url: str, proc: subprocess.Popen, timeout: float = 180.0) -> float:
    """Seconds until ``url`` answers 200 (raises if the process dies or time runs out)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"app.py exited with {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer 200 within {timeout:.0f} s")


def stop_app(proc: subprocess.Popen) -> None:
    """SIGTERM to the app's session, SIGKILL after 15 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the server and nothing else
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
