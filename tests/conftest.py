"""Shared fixtures: a temporary torch hub cache holding random checkpoints under torchvision's names.

Nothing downloads in the tests: ``TORCH_HOME`` points at a temporary folder
whose ``hub/checkpoints/`` holds random-init torchvision ViTs saved under the
file names torchvision expects (e.g. ``vit_b_16-c867db91.pth``), so the
``imagenet`` code path loads them as it would load the real ones.
"""

from __future__ import annotations

import atexit
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

# Before anything imports huggingface_hub (gradio does), which reads these once: no test reaches the Hub
# or the user's own Hub cache (tests/test_hub.py writes its repositories into a cache of its own).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_CACHE"] = tempfile.mkdtemp(prefix="vit-tests-hub-")
atexit.register(shutil.rmtree, os.environ["HF_HUB_CACHE"], ignore_errors=True)
# gradio's upload and output cache: a folder of this run's own, removed at exit, so that what earlier runs
# left in the machine's shared /tmp/gradio never counts against the server's upload cap in a test.
os.environ["GRADIO_TEMP_DIR"] = tempfile.mkdtemp(prefix="vit-tests-gradio-")
atexit.register(shutil.rmtree, os.environ["GRADIO_TEMP_DIR"], ignore_errors=True)

import pytest  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from served import free_port  # noqa: E402 - one helper for the tests and the benchmarks

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("VIT_DOWNLOAD_TIMEOUT", "3")
torch.set_num_threads(min(2, torch.get_num_threads()))


def chromium_or_skip() -> str:
    """The Chromium the browser tests drive, or a skip that says what is missing (Chromium or playwright); where
    ``CI`` is set, a failure instead (.ci/run installs both). Called at a module's import, it skips the module."""
    import importlib.util

    from served import find_chromium

    found = find_chromium()
    missing = None
    if found is None:
        missing = ("no Chromium found ($VIT_CHROMIUM, or chromium, chromium-browser, google-chrome on PATH); "
                   "install one (Debian: apt-get install chromium) to run the browser tests")
    elif importlib.util.find_spec("playwright") is None:
        missing = "playwright is not installed (pip install -r requirements-dev.txt)"
    if missing:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI is set, so the browser tests must run: {missing}")
        pytest.skip(missing, allow_module_level=True)
    return found


def random_torchvision_vit(name: str, seed: int = 0, **overrides) -> torch.nn.Module:
    """A torchvision ViT with random weights everywhere (its head is zero-initialised by default)."""
    import torchvision

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if overrides:
            from torchvision.models.vision_transformer import VisionTransformer

            from vit.config import PRESETS

            cfg = PRESETS[name]
            args = dict(image_size=224, patch_size=cfg.patch_size, num_layers=cfg.num_layers,
                        num_heads=cfg.num_heads, hidden_dim=cfg.embed_dim, mlp_dim=cfg.mlp_dim)
            model = VisionTransformer(**{**args, **overrides})
        else:
            model = getattr(torchvision.models, name)()
        torch.nn.init.normal_(model.heads.head.weight, std=0.05)
        torch.nn.init.normal_(model.heads.head.bias, std=0.05)
        torch.nn.init.normal_(model.class_token, std=0.5)
    return model.eval()


def write_checkpoint(hub_dir: Path, name: str, seed: int = 0) -> Path:
    from vit.model.checkpoints import CHECKPOINTS

    path = hub_dir / "checkpoints" / CHECKPOINTS[name].filename
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(random_torchvision_vit(name, seed).state_dict(), path)
    return path


@pytest.fixture(scope="session")
def torch_home(tmp_path_factory) -> Path:
    """TORCH_HOME with random vit_b_16 and vit_b_32 checkpoints in its hub cache, for the whole session."""
    home = tmp_path_factory.mktemp("torch_home")
    for name in ("vit_b_16", "vit_b_32"):
        write_checkpoint(home / "hub", name)
    old = os.environ.get("TORCH_HOME")
    os.environ["TORCH_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("TORCH_HOME", None)
    else:
        os.environ["TORCH_HOME"] = old


@pytest.fixture(scope="session")
def cat_image() -> Path:
    return ROOT / "assets" / "cat.jpg"


@contextmanager
def running_app():
    """app.py's demo launched in this process on a free port (a fresh model cache); yields its URL."""
    import app
    from vit.ui import state

    state.reset()  # a fresh model cache that reads the current TORCH_HOME
    demo = app.build_demo()
    _, url, _ = app.launch(demo, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield url
    finally:
        demo.close()
        state.reset()


def start_app_process(env: dict, log: Path, timeout: float = 120.0) -> tuple[subprocess.Popen, str]:
    """``python app.py`` as its own process (its memory and exit are its own); waits until it listens.

    Returns:
        The process and its URL. Stop it with ``terminate()`` (SIGTERM), as systemd would.
    """
    port = free_port()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/"
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"app.py did not start:\n{log.read_text()[-3000:]}") from None
            time.sleep(0.5)


def serve_http(handler: type) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A local HTTP server on a free port, answering with ``handler`` in daemon threads; returns it and its URL.

    Stop it with ``server.shutdown(); server.server_close()``.
    """
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture(autouse=True)
def _fixed_rate_meter():
    """Each test starts with the cost meter's fixed rate: what an earlier test's analyses taught the meter
    (vit.ui.meter.RECENT, learnt from this machine's runs) would make its estimates depend on the test order."""
    meter = sys.modules.get("vit.ui.meter")
    if meter is not None:
        meter.RECENT.clear()
    yield
