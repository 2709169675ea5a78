"""Issue 26's first attack at full size: one client mints 10,000 sessions; what the server's memory does.

    python benchmarks/minted_sessions.py              # 10,000 sessions from one address, default limits
    python benchmarks/minted_sessions.py --sessions 2000

``python app.py`` runs in its own process (offline: random weights) with its default limits (2,000 sessions
in all, 64 per address; ``VIT_TRUST_FORWARDED=1`` so that the student and the attacker, both on this
machine, are two addresses by ``X-Forwarded-For``, as behind a Space's proxy). A student analyses a photo
first; then one address sends ``model_settings`` with a fresh ``session_hash`` each time, as fast as it
can, and the server's RSS (``/proc/<pid>/status``) is read before, every 1,000 sessions and after. Last,
the student's ``/redraw`` must still find their analysis.
tests/test_attacks.py mounts the same attack with 400 sessions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from gradio_client import Client, handle_file
from served import ROOT, free_port, offline_env, start_app, stop_app, wait_http_200


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1e3
    return 0.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", type=int, default=10_000)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**offline_env(Path(tmp)), "VIT_TRUST_FORWARDED": "1"}  # two addresses on one machine: as a proxy says
        proc = start_app(port, env, Path(tmp) / "app.log")
        url = f"http://127.0.0.1:{port}"
        try:
            wait_http_200(url, proc)
            student = Client(url, verbose=False, headers={"X-Forwarded-For": "10.0.0.2"})
            student.predict(handle_file(str(ROOT / "assets" / "cat.jpg")), "ViT-B/32", 32, 1, 5, "mean", 0.0, 1, 1,
                            0.6, "cividis", api_name="/analyze")
            with httpx.Client(base_url=url, timeout=60, headers={"X-Forwarded-For": "10.0.0.66"}) as http:
                fn = next(d["id"] for d in http.get("/config").json()["dependencies"]
                          if d["api_name"] == "model_settings")
                before, t0 = rss_mb(proc.pid), time.perf_counter()
                print(f"before: RSS {before:.0f} MB", flush=True)
                for i in range(1, args.sessions + 1):
                    r = http.post("/gradio_api/run/predict", json={"data": ["ViT-B/32", 32], "fn_index": fn,
                                                                    "session_hash": uuid.uuid4().hex})
                    if r.status_code != 200:
                        print(f"session {i}: HTTP {r.status_code} {r.text[:200]}", file=sys.stderr)
                        return 1
                    if i % 1000 == 0:
                        print(f"{i:>6} sessions, {time.perf_counter() - t0:5.0f} s: RSS {rss_mb(proc.pid):.0f} MB "
                              f"(+{rss_mb(proc.pid) - before:.0f})", flush=True)
            after = rss_mb(proc.pid)
            redrawn = student.predict(api_name="/redraw")
            kept = any(isinstance(v, str) and v.endswith((".jpg", ".png")) for v in redrawn)
            print(f"{args.sessions} minted sessions: RSS {before:.0f} -> {after:.0f} MB (+{after - before:.0f} MB); "
                  f"the student's analysis {'still there' if kept else 'LOST'}")
            return 0 if kept else 1
        finally:
            stop_app(proc)


if __name__ == "__main__":
    sys.exit(main())
