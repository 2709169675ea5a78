"""The served app as the benchmarks and the tests start it: a free port, ``python app.py`` in its own
session with an empty torch hub (offline: random weights), waiting for its first HTTP 200, stopping it; and
the browser they drive it with (Chromium, its flags, where a patch of the grid is to click)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic"]


def find_chromium() -> str | None:
    """The browser to drive: $VIT_CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH."""
    named = os.environ.get("VIT_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def patch_point(page, row: int, col: int, picture: str = "#patch-grid") -> dict:
    """Where the centre of patch (row, col) is inside a picture's img element, as a click's position.

    The picture says where its patches are (the cells in its file's name: vit.ui.state.picture_file, in its own
    pixels); it is shown whole and centred in its img (object-fit: contain), at the scale shown / drawn.
    """
    return page.evaluate("""([row, col, picture]) => {
        const img = document.querySelector(picture + ' img'), r = img.getBoundingClientRect();
        const m = /\\.cells-([\\d.]+)-([\\d.]+)-([\\d.]+)-([\\d.]+)-(\\d+)-(\\d+)\\./.exec(decodeURIComponent(img.src));
        const [x0, y0, w, h, rows, cols] = m.slice(1).map(Number);
        const s = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
        const left = (r.width - img.naturalWidth * s) / 2, top = (r.height - img.naturalHeight * s) / 2;
        return {x: left + s * (x0 + (col + 0.5) * w / cols), y: top + s * (y0 + (row + 0.5) * h / rows)};
    }""", [row, col, picture])


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


class PageClient:
    """The served app's events as the page sends them: one session, ``/gradio_api/queue/join``, the session's event
    stream read to ``process_completed``, then the pictures fetched as a browser fetches them (httpx, one
    keep-alive connection). What any HTTP client pays; gradio_client adds its own threads and polling on top."""

    def __init__(self, url: str):
        import httpx  # noqa: PLC0415 - gradio's own dependency, only for the benchmarks

        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=600)
        config = self.http.get("/config").json()
        self.types = {c["id"]: c.get("type") for c in config["components"]}
        self.events = {d.get("api_name"): d for d in config["dependencies"] if d.get("api_name")}
        self.session = uuid.uuid4().hex[:11]
        info = self.http.get("/gradio_api/info").json()["named_endpoints"]  # each parameter's default
        self.defaults = {name.lstrip("/"): [p.get("parameter_default") for p in e["parameters"]]
                         for name, e in info.items()}

    def upload(self, path: Path) -> dict:
        """A file uploaded as the page uploads it, as the FileData an event takes."""
        with open(path, "rb") as f:
            stored = self.http.post("/gradio_api/upload", files={"files": (path.name, f)}).json()[0]
        return {"path": stored, "meta": {"_type": "gradio.FileData"}}

    def call(self, api_name: str, *values, download: bool = True) -> list:
        """The event's outputs; ``values`` are its first API parameters in order, the rest take their defaults (its
        State inputs are the session's)."""
        name = api_name.lstrip("/")
        event = self.events[name]
        given = iter([*values, *self.defaults[name][len(values):]])  # the parameters not given: their defaults
        data = [None if self.types[i] == "state" else next(given, None) for i in event["inputs"]]
        body = {"data": data, "event_data": None, "fn_index": event["id"], "trigger_id": None,
                "session_hash": self.session}
        self.http.post("/gradio_api/queue/join", json=body).raise_for_status()
        with self.http.stream("GET", "/gradio_api/queue/data", params={"session_hash": self.session}) as stream:
            for line in stream.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") == "process_completed":
                    break
        output = message.get("output") or {}
        if not message.get("success", False) or "data" not in output:
            raise RuntimeError(f"{api_name} failed: {output.get('error', output)}")
        for value in output["data"] if download else ():
            if isinstance(value, dict) and value.get("url"):
                self.http.get(value["url"]).raise_for_status()
        return output["data"]

    def close(self) -> None:
        self.http.close()
