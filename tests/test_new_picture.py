"""A picture in three places (issue 55, F1; docs/layout.md): its view, its ``Picture`` and its message keys.

A throwaway picture is added in exactly those three places, in a process of its own (the page and the API read the
registry when they are built), and is then found on the page, in the CLI's ``--out`` and in the API's /redraw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.server  # a subprocess: the page and events.py read the registry once, at import

SCRIPT = r'''
import json, sys, tempfile
from pathlib import Path

import numpy as np

from vit import i18n
from vit.views import base, draw, registry

# 1. Its message keys (a module of vit.i18n would hold them).
i18n.MESSAGES.update({
    "throwaway-caption": {"en": "The class token's attention at layer {layer}.",
                          "zh": "第 {layer} 层 class token 的 attention。"},
    "alt-throwaway": {"en": "Brightest patch: token {token}.", "zh": "最亮的 patch：token {token}。"},
})


# 2. Its view: a View with its text alternative, written from the array it draws.
def throwaway_view(a, layer, size, lang="en"):
    heat = a.attention_map(layer).numpy()  # (rows, cols)
    token = base.token_index(np.unravel_index(int(np.argmax(heat)), heat.shape), a.grid, a.num_prefix_tokens)
    caption = i18n.text("throwaway-caption", lang, layer=layer)
    return base.View(draw.overlay(a.image, heat, 0.6, "cividis", size), caption, title="Throwaway",
                     alt=i18n.text("alt-throwaway", lang, token=token))


# 3. Its Picture.
registry.register(registry.Picture(
    "throwaway", "attention", title={"en": "A throwaway picture", "zh": "一次性的图"},
    what_is={"en": "A test's picture. It shows the class token's attention.", "zh": "测试用的图。"},
    draw=lambda a, d, size, tile, w: throwaway_view(a, d.layer_of(a), size, d.lang), depends_on=("layer",),
    in_api=True, out_file="throwaway.png"))

found = {}
out = Path(tempfile.mkdtemp())
from vit.__main__ import main  # the CLI, in this process
main(["analyze", "assets/shapes-heart_and_circle.png", "--model", "vit_tiny_shapes", "--out", str(out)])
found["cli"] = sorted(p.name for p in out.iterdir())

from vit.ui import layout  # the page and the API, built from the registry as it is now
demo = layout.build_demo()
config = demo.get_config_file()
ids = {c["id"]: c["props"].get("elem_id") for c in config["components"]}
found["page"] = [ids[i] for i in ids if ids[i] in ("throwaway", "throwaway-caption")]
redraw = next(d for d in config["dependencies"] if d.get("api_name") == "redraw")
found["redraw"] = [ids[i] for i in redraw["outputs"]]

import vit
from vit.ui import events
from vit.ui.state import analysis_store
a = vit.analyze(vit.load_model("vit_tiny_shapes"), "assets/shapes-heart_and_circle.png")
drawn = events.redraw_all(analysis_store().put(a))
found["drawn"] = [drawn["throwaway-caption"], Path(drawn["throwaway"]).is_file()]
print(json.dumps(found))
'''


def test_a_new_picture_is_its_view_its_picture_and_its_keys():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "throwaway.png" in found["cli"] and "rollout.png" in found["cli"]
    assert set(found["page"]) == {"throwaway", "throwaway-caption"}
    assert {"throwaway", "throwaway-caption", "rollout-view"} <= set(found["redraw"])
    caption, written = found["drawn"]
    assert caption.startswith("The class token's attention at layer ") and written
