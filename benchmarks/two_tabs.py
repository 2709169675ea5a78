"""How long does a quick analysis wait while another tab's slow one runs? (issue 20, "One slow run must not
stall the class")

    python benchmarks/two_tabs.py                                  # this tree
    python benchmarks/two_tabs.py --before /tmp/before --reps 3    # and an older tree, interleaved

Starts ``python app.py`` of each tree in its own process (random weights, an empty torch hub), warms both
settings up, then per repetition: tab A (a gradio_client) sends a slow ``/analyze`` (ViT-B/16 at P = 4),
and ``--delay`` seconds later tab B sends a quick one (ViT-B/16 at P = 16). Reported: B's wait from its
request to its answer, the same analysis alone just before, and A's time. With ``--before``, the trees
take turns repetition by repetition (both servers stay up; only one is asked at a time), so the drift of a
shared machine falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import ROOT, free_port, offline_env, stop_app, wait_http_200

CAT = ROOT / "assets" / "cat.jpg"
SLOW = dict(model="ViT-B/16", patch_size=4, depth=12)
QUICK = dict(model="ViT-B/16", patch_size=16, depth=12)


def start(tree: Path, tmp: Path, name: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with open(tmp / f"{name}.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(tree / "app.py"), "--port", str(port)], cwd=tree,
                                env=offline_env(tmp / name), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    wait_http_200(url, proc)
    return proc, url


def timed(url: str, params: dict, out: dict, name: str) -> threading.Thread:
    from gradio_client import Client, handle_file  # noqa: PLC0415

    client = Client(url, verbose=False)

    def send():
        t0 = time.perf_counter()
        client.predict(image=handle_file(str(CAT)), api_name="/analyze", **params)
        out[name] = time.perf_counter() - t0

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def repetition(url: str, delay: float) -> dict:
    out: dict = {}
    timed(url, QUICK, out, "alone").join(600)  # the quick analysis with nobody else: its own time
    slow = timed(url, SLOW, out, "slow")
    time.sleep(delay)
    quick = timed(url, QUICK, out, "quick")
    for t in (slow, quick):
        t.join(600)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="an older tree (its app.py), measured interleaved")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--delay", type=float, default=4.0, help="seconds between A's request and B's")
    args = parser.parse_args()
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name in trees:
            (tmp / name).mkdir()
        servers = {name: start(tree, tmp, name) for name, tree in trees.items()}
        try:
            for _, url in servers.values():  # warm-up: both models built, each setting run once
                for params in (QUICK, SLOW):
                    out: dict = {}
                    timed(url, params, out, "warm").join(600)
            results: dict = {name: [] for name in trees}
            for rep in range(args.reps):
                for name in (sorted(trees, reverse=rep % 2 == 1)):
                    r = repetition(servers[name][1], args.delay)
                    results[name].append(r)
                    print(f"{name} rep {rep + 1}: quick tab waited {r['quick']:.1f} s (alone {r['alone']:.1f} s), "
                          f"slow tab {r['slow']:.1f} s", flush=True)
        finally:
            for proc, _ in servers.values():
                stop_app(proc)
    for name, runs in results.items():
        quick, alone, slow = (statistics.median(r[k] for r in runs) for k in ("quick", "alone", "slow"))
        every = ", ".join(f"{r['quick']:.1f}" for r in runs)
        print(f"{name}: median quick-tab wait {quick:.1f} s (all: {every}; alone {alone:.1f} s); "
              f"median slow-tab time {slow:.1f} s")


if __name__ == "__main__":
    main()
