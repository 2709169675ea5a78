"""GPU check: the same analysis on CUDA and on the CPU agrees, and how long each takes.

    python benchmarks/gpu_check.py [--patch-sizes 16,8,4]

Random weights (timing and agreement need no pretrained ones). Prints one
line per patch size and exits non-zero if CUDA and CPU disagree beyond
float32 tolerance (TF32 is switched off for the comparison).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import vit


def timed(fn, sync, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patch-sizes", default="16,8,4")
    parser.add_argument("--image", default=str(Path(__file__).resolve().parents[1] / "assets" / "cat.jpg"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: cuda: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    worst = 0.0
    for p in (int(s) for s in args.patch_sizes.split(",")):
        cpu = vit.load_model("vit_b_16", weights="random", patch_size=p, device="cpu")
        gpu = vit.load_model("vit_b_16", weights="random", patch_size=p, device="cuda")
        a_cpu = vit.analyze(cpu, args.image)
        a_gpu = vit.analyze(gpu, args.image)
        query = 1 + (a_cpu.num_patches // 2)  # a patch in the middle
        diffs = {  # every view's data: computed on the GPU where the analysis keeps it, copied back at the end
            "probs": (a_cpu.probs - a_gpu.probs).abs().max().item(),
            "rollout": (a_cpu.rollout() - a_gpu.rollout()).abs().max().item(),
            "rollout max, discard 0.5": (a_cpu.with_options("max", 0.5).rollout()
                                         - a_gpu.with_options("max", 0.5).rollout()).abs().max().item(),
            "fused": (a_cpu.fused - a_gpu.fused.cpu()).abs().max().item(),
            "cls_attention": (a_cpu.cls_attention - a_gpu.cls_attention).abs().max().item(),
            "query row": (a_cpu.head_rows(a_cpu.depth, query) - a_gpu.head_rows(a_gpu.depth, query)).abs().max().item(),
            "distance": (a_cpu.mean_attention_distance() - a_gpu.mean_attention_distance()).abs().max().item()
            / max(1.0, a_cpu.mean_attention_distance().abs().max().item()),
        }
        worst = max(worst, *diffs.values())
        x = gpu.preprocess(vit.images.load_image(args.image)).cuda()
        sync = torch.cuda.synchronize

        def bare(gpu=gpu, x=x):  # this iteration's model and input
            with torch.inference_mode():
                gpu(x)

        t_bare = timed(bare, sync)
        t_analyze = timed(lambda gpu=gpu: vit.analyze(gpu, args.image), sync)
        torch.cuda.reset_peak_memory_stats()
        vit.analyze(gpu, args.image)
        peak = torch.cuda.max_memory_allocated() / 1e9
        print(f"B/16 patch {p:2d} ({a_gpu.num_tokens} tokens): bare {t_bare:.1f} ms, analyze {t_analyze:.1f} ms "
              f"({t_analyze / t_bare:.2f}x), GPU peak {peak:.2f} GB; max |cuda - cpu|: "
              + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
    ok = worst < 1e-4  # issue 23: GPU results equal to the CPU's to 1e-4
    print("agreement:", "OK" if ok else f"FAILED (worst {worst:.1e})", "(target: within 1e-4; analyze <= 2x bare)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
