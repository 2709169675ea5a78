"""Does a server's memory come back after a burst? (issue 8)

    python benchmarks/memory_burst.py                           # default app, then without trimming, then arenas capped
    python benchmarks/memory_burst.py --variants app --clients 4 --sequence 16,8

Starts ``python app.py`` in its own process (random weights, an empty torch hub),
lets ``--clients`` browser tabs (gradio_client) each run the ``--sequence`` of patch
sizes on ViT-B/16 one after another, all tabs at once, and reports the server's
resident memory: before, its peak (VmHWM), and settled 10 s after the burst, beside
what the caches account for (the server logs it after every run). Variants:

* ``app``: the app as it is (``malloc_trim`` after every model run).
* ``no-trim``: the same without ``malloc_trim``: what glibc keeps of a burst.
* ``arena2``: without trimming, ``MALLOC_ARENA_MAX=2`` (fewer per-thread heaps).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import subprocess

from served import ROOT, free_port, offline_env, stop_app, wait_http_200

NO_TRIM = "import vit.serve.memory as s; s.trim_memory = lambda: False; "
LAUNCH = ("import runpy, sys; sys.argv = ['app.py', '--port', '{port}']; "
          "runpy.run_path('app.py', run_name='__main__')")
VARIANTS = {"app": ("", {}), "no-trim": (NO_TRIM, {}), "arena2": (NO_TRIM, {"MALLOC_ARENA_MAX": "2"})}


def status_gb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024 / 1e9
    return 0.0


def run_variant(name: str, clients: int, sequence: list[int], tmp: Path) -> dict:
    from gradio_client import Client, handle_file  # noqa: PLC0415

    prefix, extra_env = VARIANTS[name]
    port = free_port()
    log_path = tmp / f"{name}.log"
    env = {**offline_env(tmp), **extra_env}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", prefix + LAUNCH.format(port=port)], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_http_200(url, proc)
        warm = Client(url, verbose=False)
        warm.predict(image=handle_file(str(ROOT / "assets" / "cat.jpg")), model="ViT-B/16", patch_size=16,
                     depth=12, api_name="/analyze")
        before = status_gb(proc.pid, "VmRSS:")

        def tab(i: int) -> None:
            client = Client(url, verbose=False)
            for p in sequence:
                client.predict(image=handle_file(str(ROOT / "assets" / "cat.jpg")), model="ViT-B/16",
                               patch_size=p, depth=12, api_name="/analyze")

        t0 = time.perf_counter()
        threads = [threading.Thread(target=tab, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
        peak = status_gb(proc.pid, "VmHWM:")
        time.sleep(10)
        settled = status_gb(proc.pid, "VmRSS:")
    finally:
        stop_app(proc)
    runs = re.findall(r"model cache ([\d.]+) GB, kept analyses ([\d.]+) GB", log_path.read_text())
    models, analyses = map(float, runs[-1]) if runs else (0.0, 0.0)
    return dict(variant=name, analyses=clients * len(sequence), seconds=seconds, before_gb=before, peak_gb=peak,
                settled_gb=settled, accounted_gb=models + analyses, above_accounted_gb=settled - models - analyses)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="app,no-trim,arena2")
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--sequence", default="4,8,16,16", help="patch sizes each tab runs, in order")
    args = parser.parse_args(argv)
    sequence = [int(p) for p in args.sequence.split(",")]
    print("| variant | analyses | burst | RSS before | peak | settled (10 s after) | caches account for | "
          "settled above that |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.variants.split(","):
            r = run_variant(name, args.clients, sequence, Path(tmp))
            print(f"| {r['variant']} | {r['analyses']} | {r['seconds']:.0f} s | {r['before_gb']:.2f} GB | "
                  f"{r['peak_gb']:.2f} GB | {r['settled_gb']:.2f} GB | {r['accounted_gb']:.2f} GB | "
                  f"{r['above_accounted_gb']:.2f} GB |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
