"""Pretrained weights offline: the cached checkpoint, the download, and every way it can fail."""

from __future__ import annotations

import hashlib
import http.server
import os
import subprocess
import time
from pathlib import Path

import pytest
import torch
import torchvision
from conftest import random_torchvision_vit, serve_http, write_checkpoint

from vit.errors import WeightsError
from vit.model import checkpoints as weights
from vit.model.checkpoints import CHECKPOINTS, Checkpoint, DownloadError, convert_torchvision, download
from vit.model.load import load_model


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setattr(weights, "_failed_downloads", {})
    return tmp_path / "torch"


class Server:
    """A local HTTP server with a scripted behaviour, counting requests."""

    def __init__(self, body: bytes, mode: str = "ok"):
        self.body, self.mode, self.requests = body, mode, 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests += 1
                if outer.mode == "hang":
                    time.sleep(5)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                data = outer.body if outer.mode == "ok" else outer.body[: len(outer.body) // 2]
                self.wfile.write(data)
                self.wfile.flush()

            def log_message(self, *args):
                pass

        self.httpd, self.url = serve_http(Handler)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_checkpoint(monkeypatch, body: bytes, mode="ok", name_hash: str | None = None) -> Server:
    server = Server(body, mode)
    digest = name_hash or hashlib.sha256(body).hexdigest()[:8]
    monkeypatch.setattr(Checkpoint, "url", property(lambda self: f"{server.url}/{self.name}-{digest}.pth"))
    return server


@pytest.fixture(scope="module")
def b32_bytes(tmp_path_factory) -> bytes:
    path = write_checkpoint(tmp_path_factory.mktemp("ckpt"), "vit_b_32", seed=3)
    return path.read_bytes()


def test_imagenet_weights_load_from_the_cache_like_torchvision(torch_home):
    ours = load_model("vit_b_32", device="cpu")
    assert ours.weights == "imagenet"
    assert ours.status == "ViT-B/32 ImageNet weights (torchvision)"
    # torchvision's own weights API reads the very same cached file, without a network.
    tv = torchvision.models.vit_b_32(weights="IMAGENET1K_V1").eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.inference_mode():
        torch.testing.assert_close(ours(x), tv(x), atol=1e-4, rtol=0)
    assert ours.class_names[:2] == ["tench", "goldfish"] and len(ours.class_names) == 1000


def test_status_says_what_was_done(torch_home):
    model = load_model("vit_b_16", patch_size=24, depth=6, device="cpu")
    assert model.status == (
        "ViT-B/16 ImageNet weights (torchvision); patch embedding PI-resized 16->24; "
        "position embedding 14x14->9x9; first 6 of 12 layers"
    )
    assert model.config.image_size == 216 and model.config.num_layers == 6
    assert model.preprocess.crop_size == 216


def test_no_network_falls_back_to_random_with_status(empty_home, monkeypatch):
    # A closed port: the connection is refused at once.
    monkeypatch.setattr(Checkpoint, "url", property(lambda self: "http://127.0.0.1:9/vit_b_32-d86f8d99.pth"))
    model = load_model("vit_b_32", device="cpu")
    assert model.weights == "random"
    assert model.status.startswith("UNTRAINED: weights could not be downloaded — predictions are random; "
                                   "run `python -m vit download vit_b_32`")
    assert not list((empty_home / "hub" / "checkpoints").glob("*"))


def test_download_into_the_cache(empty_home, monkeypatch, b32_bytes):
    server = serve_checkpoint(monkeypatch, b32_bytes)
    seen = []
    try:
        path = download("vit_b_32", progress=lambda done, total: seen.append((done, total)))
        model = load_model("vit_b_32", device="cpu")
    finally:
        server.close()
    assert path.parent == empty_home / "hub" / "checkpoints" and path.read_bytes() == b32_bytes
    assert seen[-1] == (len(b32_bytes), len(b32_bytes))
    assert model.weights == "imagenet" and server.requests == 1  # the second load used the cache
    assert [p.name for p in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize("mode", ["truncated", "badhash"])
def test_partial_or_wrong_download_is_never_loaded(empty_home, monkeypatch, b32_bytes, mode):
    server = serve_checkpoint(monkeypatch, b32_bytes, mode="truncated" if mode == "truncated" else "ok",
                              name_hash="00000000" if mode == "badhash" else None)
    try:
        with pytest.raises(DownloadError, match="interrupted|SHA-256"):
            download("vit_b_32")
        model = load_model("vit_b_32", device="cpu")
    finally:
        server.close()
    assert model.weights == "random" and model.status.startswith("UNTRAINED")
    folder = empty_home / "hub" / "checkpoints"
    assert list(folder.iterdir()) == []  # no file, no leftover partial


def test_stalled_server_times_out(empty_home, monkeypatch, b32_bytes):
    server = serve_checkpoint(monkeypatch, b32_bytes, mode="hang")
    try:
        with pytest.raises(DownloadError, match="timed out"):  # the 0.5 s read timeout, not a hang
            download("vit_b_32", timeout=0.5)
    finally:
        server.close()


def test_a_failed_download_is_not_retried_at_once(empty_home, monkeypatch, b32_bytes):
    server = serve_checkpoint(monkeypatch, b32_bytes, mode="truncated")
    try:
        load_model("vit_b_32", depth=1, device="cpu")
        load_model("vit_b_32", depth=2, device="cpu")
    finally:
        server.close()
    assert server.requests == 1


def test_corrupt_cached_checkpoint_names_the_file_and_the_fix(empty_home):
    path = empty_home / "hub" / "checkpoints" / CHECKPOINTS["vit_b_32"].filename
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK\x03\x04 this is not a checkpoint")
    model = load_model("vit_b_32", device="cpu")
    assert model.weights == "random"
    assert path.name in model.status and "python -m vit download" in model.status and "delete it" in model.status
    assert str(path.parent) not in model.status  # for a web page: no server path
    assert str(path) in model.status_detail  # for the CLI and the log: the whole path
    with pytest.raises(WeightsError, match="corrupt or truncated") as info:
        load_model("vit_b_32", weights=str(path))
    assert "download" not in str(info.value)  # the user's own file: fetching ours would not fix it


def test_truncated_cached_checkpoint(empty_home, b32_bytes):
    path = empty_home / "hub" / "checkpoints" / CHECKPOINTS["vit_b_32"].filename
    path.parent.mkdir(parents=True)
    path.write_bytes(b32_bytes[: len(b32_bytes) // 3])
    model = load_model("vit_b_32", device="cpu")
    assert model.weights == "random" and path.name in model.status and str(path) in model.status_detail


@pytest.mark.parametrize("patch_size", [16, 20])
def test_another_familys_checkpoint_under_the_name_falls_back_with_the_reason(empty_home, b32_bytes, patch_size):
    """B/32's state dict saved under B/16's file name: random weights and why, never a resampling error."""
    path = empty_home / "hub" / "checkpoints" / CHECKPOINTS["vit_b_16"].filename
    path.parent.mkdir(parents=True)
    path.write_bytes(b32_bytes)
    model = load_model("vit_b_16", patch_size=patch_size, depth=6, device="cpu")
    assert model.weights == "random"
    assert model.status.startswith("UNTRAINED: predictions are random because the cached checkpoint "
                                   f"{path.name}: embedding.patch_embed.proj.weight has shape (768, 3, 32, 32)")
    assert "delete it and run `python -m vit download vit_b_16`" in model.status
    assert str(empty_home) not in model.status
    assert model.config.patch_size == patch_size and model.config.num_layers == 6  # the setting still runs


def test_a_checkpoint_put_in_the_cache_after_a_failed_download_is_used_at_once(empty_home, b32_bytes,
                                                                              monkeypatch):
    """The remembered failure must not shadow a file that is there now (the suite's old flakiness)."""
    def offline(*args, **kwargs):
        raise DownloadError("could not download: offline")

    monkeypatch.setattr(weights, "download", offline)
    assert load_model("vit_b_32", device="cpu").weights == "random"
    assert "vit_b_32" in weights._failed_downloads  # remembered: the next request does not wait for a timeout
    monkeypatch.setattr(weights, "download", download)
    path = empty_home / "hub" / "checkpoints" / CHECKPOINTS["vit_b_32"].filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b32_bytes)  # copied in by hand, or fetched by another process
    model = load_model("vit_b_32", device="cpu")
    assert model.weights == "imagenet" and "UNTRAINED" not in model.status
    assert "vit_b_32" not in weights._failed_downloads


def test_partial_downloads_of_dead_processes_are_removed(empty_home):
    folder = empty_home / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = folder / f".vit_l_16-852ce7e3.pth.{dead.pid}.ab12cd_x.partial"  # its writer was killed
    live = folder / f".vit_l_32-c7638314.pth.{os.getpid()}.zz99yy_0.partial"  # being written now
    old = folder / ".vit_h_14_lc_swag-c1eb923e.pth.k2j4h5g6.partial"  # an older version's, without a pid
    young = folder / ".vit_b_16-c867db91.pth.q1w2e3r4.partial"
    for path in (stale, live, old, young):
        path.write_bytes(b"half a checkpoint")
    os.utime(old, (time.time() - 2 * 3600,) * 2)
    removed = weights.remove_stale_partials(folder)
    assert sorted(removed) == sorted([stale, old])
    assert live.exists() and young.exists() and not stale.exists() and not old.exists()


def test_shape_mismatch_names_key_and_both_shapes(tmp_path):
    state = random_torchvision_vit("vit_b_32").state_dict()
    state["encoder.layers.encoder_layer_3.ln_2.weight"] = torch.ones(700)
    path = tmp_path / "bad.pth"
    torch.save(state, path)
    expected = r"encoder\.layers\.3\.norm2\.weight has shape \(700,\) .* expected \(768,\)"
    with pytest.raises(WeightsError, match=expected):
        load_model("vit_b_32", weights=str(path))


def test_wrong_family_and_unknown_keys(tmp_path):
    path = tmp_path / "b32.pth"
    torch.save(random_torchvision_vit("vit_b_32").state_dict(), path)
    with pytest.raises(WeightsError, match=r"patch_embed\.proj\.weight has shape \(768, 3, 32, 32\)"):
        load_model("vit_b_16", weights=str(path))
    with pytest.raises(WeightsError, match="not a torchvision ViT's: fc.weight"):
        convert_torchvision({"fc.weight": torch.zeros(1)})
    path.write_bytes(b"")
    with pytest.raises(WeightsError, match="corrupt"):
        load_model("vit_b_32", weights=str(path))
    with pytest.raises(WeightsError, match="not found"):
        load_model("vit_b_32", weights=str(tmp_path / "missing.pth"))


def test_key_map_round_trip_and_inputs_untouched():
    tv_state = random_torchvision_vit("vit_b_32").state_dict()
    keys = list(tv_state)
    ours = convert_torchvision(tv_state)
    assert list(tv_state) == keys  # the input dict is not mutated
    q, k, v = (ours[f"encoder.layers.0.attn.{p}_proj.weight"] for p in "qkv")
    in_proj = tv_state["encoder.layers.encoder_layer_0.self_attention.in_proj_weight"]
    torch.testing.assert_close(torch.cat([q, k, v]), in_proj)
    legacy = {k.replace(".mlp.0.", ".mlp.linear_1.").replace(".mlp.3.", ".mlp.linear_2."): v
              for k, v in tv_state.items()}
    assert convert_torchvision(legacy).keys() == ours.keys()


def test_only_tensors_are_loaded(tmp_path):
    path = tmp_path / "pickle.pth"
    torch.save({"x": Path("/etc/passwd")}, path)  # an arbitrary object: refused by weights_only=True
    with pytest.raises(WeightsError, match="corrupt"):
        weights.read_state_dict(path)
    torch.save({"x": [1, 2]}, path)
    with pytest.raises(WeightsError, match="not a state dict of tensors"):
        weights.read_state_dict(path)
