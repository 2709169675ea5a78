"""Hosting on Hugging Face Spaces: ZeroGPU's ``spaces.GPU`` around the model run, and the startup download.

Where import state matters (is ``spaces`` importable, is ``SPACE_ID`` set) the app runs in its
own process: ``tests/fake_spaces/spaces.py`` stands in for Hugging Face's package there and
records how ``GPU`` was applied and called. Checkpoints come from a local HTTP server;
nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import free_port, serve_http
from packaging.requirements import Requirement

import vit.cost
from vit.model import checkpoints
from vit.model.checkpoints import Checkpoint
from vit.serve.prefetch import Prefetch
from vit.ui import events, gpu, meter, startup, state
from vit.validate import setting

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[1]
FAKE_SPACES = Path(__file__).resolve().parent / "fake_spaces"
CAT = ROOT / "assets" / "cat.jpg"
FIRST_CHUNK = 1 << 20  # bytes the gated server sends before it waits for /release


class GatedServer:
    """Serves one checkpoint: the first MB at once, the rest after a GET of /release. Counts downloads."""

    def __init__(self, body: bytes):
        self.body, self.downloads = body, 0
        self.release = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/release":
                    outer.release.set()
                    self.send_response(204)
                    self.end_headers()
                    return
                outer.downloads += 1
                self.send_response(200)
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body[:FIRST_CHUNK])
                self.wfile.flush()
                outer.release.wait(60)
                self.wfile.write(outer.body[FIRST_CHUNK:])

            def log_message(self, *args):
                pass

        self.httpd, self.url = serve_http(Handler)

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def run_app_process(code: str, env: dict, timeout: float = 240) -> dict:
    """Run ``code`` in a fresh Python in the repository; it prints one JSON line last, returned as a dict."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", **env})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- without the package


WITHOUT_SPACES = """
import json, os, sys
sys.modules["spaces"] = None  # `import spaces` raises ImportError, as where the package is not installed
for name in ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"):
    os.environ.pop(name, None)
import app
from vit.ui import events, gpu, meter, startup, state
demo = app.build_demo()
facts = {
    "spaces": gpu.spaces is None,
    "run_model_is_plain": not hasattr(gpu.run_model, "__wrapped__"),
    "startup_events": [fn.api_name for fn in demo.fns.values() if fn.api_name == "startup_status"],
}
# main() as `python app.py` runs it, with the server itself left out.
class Demo:
    def block_thread(self):
        pass
launched = {}
app.build_demo, app._prewarm, app._delete_gradio_files = Demo, lambda: None, lambda demo: None
app.launch = lambda demo, host, port, share, **kwargs: launched.update(host=host, port=port, share=share)
app.main([])
facts.update(launched=launched, prefetch=startup._prefetch is not None, torch="torch" in sys.modules)
print(json.dumps(facts))
"""


def test_without_spaces_or_a_space_nothing_changes():
    facts = run_app_process(WITHOUT_SPACES, {"SPACE_ID": ""}, timeout=120)
    assert facts == {"spaces": True, "run_model_is_plain": True, "startup_events": [],
                     "launched": {"host": "127.0.0.1", "port": 7860, "share": False},
                     "prefetch": False, "torch": False}


# --------------------------------------------------------------------------- a ZeroGPU Space

ZEROGPU_SPACE = """
import json, os, signal, sys, threading, time, traceback, urllib.request
sys.path.insert(0, os.environ["FAKE_SPACES"])
import spaces  # the fake: records GPU, pickles across, .inside.active during a decorated call

# ZeroGPU's emulation outside @spaces.GPU: CUDA is "available", but starting it there is the bug to catch.
import torch
real_available, real_lazy_init, touched = torch.cuda.is_available, torch.cuda._lazy_init, []
def inside():
    return getattr(spaces.inside, "active", False)
def is_available():
    return real_available() if inside() else True
def lazy_init(*args, **kwargs):
    if not inside():
        touched.append("".join(traceback.format_stack(limit=8)))
    return real_lazy_init(*args, **kwargs)
torch.cuda.is_available, torch.cuda._lazy_init = is_available, lazy_init

from vit.model import checkpoints as weights
real_url = weights.Checkpoint.url
weights.Checkpoint.url = property(lambda c: os.environ["CKPT_URL"] if c.name == "vit_b_16" else real_url.fget(c))

import app
from vit.ui import events, gpu, meter, startup, state
from vit.validate import setting
facts = {"applied": [[a["function"], callable(a["duration"])] for a in spaces.applied]}
duration = spaces.applied[0]["duration"]
facts["seconds"] = {f"{name} P={p}": duration(setting(name, p, depth), None, 5, "mean", 0.0)
                    for name, p, depth in [("vit_b_16", 16, 12), ("vit_b_16", 4, 12), ("vit_h_14", 14, 32)]}
facts["explain_seconds"] = spaces.applied[1]["duration"](setting("vit_b_16", 16, 12), None, "grad_rollout", 0,
                                                              curves=True)

def check():
    try:
        t0 = time.monotonic()
        while (startup._prefetch is None or startup._prefetch.done == 0) and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        facts["prefetch"] = [startup._prefetch.name, startup._prefetch.in_flight, startup._prefetch.done]
        port = os.environ["GRADIO_SERVER_PORT"]
        while time.monotonic() - t0 < 60:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    facts["page"] = r.status
                break
            except OSError:
                time.sleep(0.2)
        result = {}
        def first_analysis():
            try:
                result["out"] = events.analyze(str(app.ASSETS / "cat.jpg"), "ViT-B/16", 16, 12)
            except Exception as exc:
                result["error"] = repr(exc)
        first = threading.Thread(target=first_analysis)
        first.start()
        time.sleep(1.0)
        facts["analysis_waits"] = first.is_alive()
        facts["banner_during"] = startup.startup_banner()
        status = startup.startup_status(None)
        banner, timer = status["banner"], status["startup-timer"]
        facts["timer_during"] = timer.active
        urllib.request.urlopen(os.environ["RELEASE_URL"], timeout=5).close()
        first.join(120)
        facts["banner_after_analysis"] = result["out"][0] if "out" in result else result.get("error", "no result")
        facts["calls"] = spaces.calls
        facts["runs"] = state.RUNS["model"]
        status = startup.startup_status(None)
        banner, timer = status["banner"], status["startup-timer"]
        facts["banner_after"], facts["timer_after"] = banner, timer.active
        facts["cached"] = weights.cached_path("vit_b_16").is_file()
        facts["cuda_touched_outside"] = touched
    except Exception:
        facts["error"] = traceback.format_exc()
    finally:
        os.kill(os.getpid(), signal.SIGTERM)  # the server stops as on `docker stop`

threading.Thread(target=check, daemon=True).start()
app.main([])
print(json.dumps(facts))
"""


@pytest.fixture(scope="module")
def b16_checkpoint(torch_home) -> bytes:
    """The session's random ViT-B/16 checkpoint (torchvision's format), as the bytes a server sends."""
    return next((torch_home / "hub" / "checkpoints").glob("vit_b_16-*.pth")).read_bytes()


def test_zerogpu_space_decorates_the_run_and_fetches_the_weights_at_startup(b16_checkpoint, tmp_path):
    server = GatedServer(b16_checkpoint)
    digest = hashlib.sha256(b16_checkpoint).hexdigest()[:8]
    port = free_port()
    env = {"FAKE_SPACES": str(FAKE_SPACES), "SPACE_ID": "teacher/vit-anatomy", "TORCH_HOME": str(tmp_path / "torch"),
           "CKPT_URL": f"{server.url}/vit_b_16-{digest}.pth", "RELEASE_URL": f"{server.url}/release",
           "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "VIT_DOWNLOAD_TIMEOUT": "30",
           "GRADIO_TEMP_DIR": str(tmp_path / "gradio")}
    try:
        facts = run_app_process(ZEROGPU_SPACE, env)
    finally:
        server.close()
    assert "error" not in facts, facts["error"]
    # The model runs, and only they, are decorated (an analysis; an explanation with its curves; What if?'s
    # intervention and head importance), each with a duration computed per call.
    assert facts["applied"] == [["run_model", True], ["run_explanation", True], ["run_intervention", True],
                                ["run_head_importance", True]]
    seconds = facts["seconds"]
    assert seconds["vit_b_16 P=4"] > seconds["vit_b_16 P=16"], seconds
    assert seconds["vit_h_14 P=14"] > seconds["vit_b_16 P=16"], seconds
    assert facts["explain_seconds"] > seconds["vit_b_16 P=16"]  # a backward pass and a batch of curves more
    # At startup the default model's checkpoint downloads; the page is served meanwhile.
    assert facts["prefetch"][:2] == ["vit_b_16", True] and facts["prefetch"][2] >= FIRST_CHUNK
    assert facts["page"] == 200
    assert facts["timer_during"] is True
    assert "Downloading the ViT-B/16 weights" in facts["banner_during"] and " MB" in facts["banner_during"]
    # The first analysis waited for that download (one download in all) and ran on its weights, on "the GPU".
    assert facts["cuda_touched_outside"] == [], facts["cuda_touched_outside"][0]
    assert facts["analysis_waits"] is True
    assert server.downloads == 1
    assert facts["cached"] is True
    assert "PRETRAINED" in facts["banner_after_analysis"] and "UNTRAINED" not in facts["banner_after_analysis"]
    assert facts["calls"] == [{"function": "run_model", "seconds": seconds["vit_b_16 P=16"]}]
    assert facts["runs"] == 1
    # Once the download is done the timer stops, and a page without an analysis shows the usual banner.
    assert facts["timer_after"] is False and facts["banner_after"] == meter.banner_html()


# --------------------------------------------------------------------------- in this process


def test_duration_grows_with_the_setting_and_the_checkpoint():
    b16 = [gpu.gpu_seconds(setting("vit_b_16", p, 12)) for p in (32, 16, 8, 4)]
    assert b16 == sorted(b16) and b16[-1] > b16[1], b16
    native = [gpu.gpu_seconds(setting(name, p, depth)) for name, p, depth in
              [("vit_b_32", 32, 12), ("vit_l_16", 16, 24), ("vit_h_14", 14, 32)]]
    assert native == sorted(native) and native[-1] > native[0], native
    assert gpu.gpu_seconds(setting("vit_h_14", 4, 32)) > gpu.gpu_seconds(setting("vit_h_14", 14, 32))
    assert all(isinstance(s, int) for s in b16 + native)
    # A duration is a ceiling on the GPU time: never below what the run takes on the GPU (GPU_GFLOPS).
    c = vit.cost.estimate(setting("vit_h_14", 4, 32))
    assert gpu.zerogpu_seconds(c) > gpu.ZEROGPU_START_S + c.gflops / meter.GPU_GFLOPS


class Refusing(http.server.BaseHTTPRequestHandler):
    """A server that answers every download with 503, counting them."""

    requests = 0

    def do_GET(self):
        type(self).requests += 1
        self.send_response(503)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_failed_startup_download_says_untrained_and_is_not_repeated(tmp_path, monkeypatch):
    httpd, url = serve_http(Refusing)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setattr(checkpoints, "_failed_downloads", {})
    monkeypatch.setattr(Checkpoint, "url", property(lambda c: f"{url}/{c.name}-00000000.pth"))
    monkeypatch.setattr(state.model_cache, "_value", None)
    Refusing.requests = 0
    try:
        prefetch = Prefetch("vit_b_32").start()
        assert prefetch.wait() is False
        monkeypatch.setattr(startup, "_prefetch", prefetch)
        assert prefetch.error.startswith("UNTRAINED: weights could not be downloaded")
        banner = startup.startup_banner()
        assert "UNTRAINED" in banner and "ViT-B/32 weights could not be downloaded" in banner
        result = events.analyze(str(CAT), "ViT-B/32", 32, 12)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert "UNTRAINED" in result[0] and "could not be downloaded" in result[0]
    assert Refusing.requests == 1  # the analysis did not try again within the minute


def test_a_family_without_a_checkpoint_to_download_is_not_fetched(tmp_path, monkeypatch):
    """A family that ships its own weights (none to download) passes through prefetch and fetch untouched."""
    from vit.model import checkpoints as weights

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.delitem(weights.CHECKPOINTS, "vit_b_32")
    monkeypatch.setattr(Checkpoint, "url", property(lambda c: "http://127.0.0.1:9/unused.pth"))
    prefetch = Prefetch("vit_b_32").start()
    assert prefetch.wait() is True and prefetch.error == ""
    monkeypatch.setattr(startup, "_prefetch", prefetch)
    startup.fetch_weights(setting("vit_b_32"), lambda done, total: pytest.fail("nothing should be downloaded"))
    assert startup.startup_banner() == meter.banner_html()
    assert not (tmp_path / "torch").exists()


# --------------------------------------------------------------------------- what a Space installs


def requirements(path: Path) -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return {r.name: r for r in map(Requirement, filter(None, lines))}


def test_the_zerogpu_requirements_are_the_local_ones_with_torch_pinned():
    local, space = requirements(ROOT / "requirements.txt"), requirements(ROOT / "requirements-zerogpu.txt")
    assert space.keys() == local.keys(), f"expected the same packages, got {sorted(space)} vs {sorted(local)}"
    for name in ("torch", "torchvision"):
        (spec,) = space[name].specifier
        assert spec.operator == "==", f"{name} must be pinned for ZeroGPU, got {space[name]}"
        assert local[name].specifier.contains(spec.version), f"{space[name]} is outside {local[name]}"
    for name in space.keys() - {"torch", "torchvision"}:
        assert space[name].specifier == local[name].specifier, f"{space[name]} differs from {local[name]}"


def test_the_readme_installs_the_cpu_build_of_the_torch_that_requirements_name():
    """Issue 53: PyPI's torch on Linux is the CUDA build (5.2 GB here with nvidia and triton); "Run it" gives the CPU
    build's command, for the torch packages and ranges requirements.txt names (a torch outside them would be
    replaced by the CUDA build at the next step)."""
    import shlex

    run_it = (ROOT / "README.md").read_text().split("## Run it")[1].split("\n## ")[0]
    (line,) = [line for line in run_it.splitlines() if "download.pytorch.org" in line]
    words = shlex.split(line)
    assert words[:2] == ["pip", "install"], line
    assert words[-2:] == ["--index-url", "https://download.pytorch.org/whl/cpu"], line
    asked = {r.name: r.specifier for r in map(Requirement, words[2:-2])}
    local = requirements(ROOT / "requirements.txt")
    assert asked == {name: local[name].specifier for name in ("torch", "torchvision")}, asked
    assert "GB" in run_it


def test_readme_front_matter_names_a_python_that_zerogpu_runs():
    import yaml

    text = (ROOT / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert isinstance(front["python_version"], str), "python_version must be quoted (3.10 reads as 3.1)"
    assert front["python_version"] in ("3.12.12", "3.10.13"), front["python_version"]
    assert "## Put it online" in text


def test_the_space_preloads_the_menus_curated_hub_models():
    """Issue 21: the Space's build fetches what the menu's curated list needs (config, weights, card), so no
    visitor waits for a download; the list is the menu's, model for model."""
    import yaml

    from vit.ui import models

    front = yaml.safe_load((ROOT / "README.md").read_text().split("---")[1])
    preloaded = {}
    for entry in front["preload_from_hub"]:
        repo, files = entry.split()
        preloaded[repo] = set(files.split(","))
    assert list(preloaded) == [c.repo for c in models.CURATED]
    assert all({"config.json", "model.safetensors", "README.md"} <= files for files in preloaded.values())
