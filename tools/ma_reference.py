"""kopt's shipped module against torch.compile max-autotune compiled without a time limit
(developer tool, GPU only): for the problems where `kopt bench` reports no max-autotune figure
because that compile ran past its share of the budget.

usage: python3 tools/ma_reference.py PROBLEM.py OUT_DIR [--rounds N]
OUT_DIR is a `kopt optimize` output directory (its kopt_loader.py). The model is built as the
worker builds it (seed 0, eval, CUDA), then compiled with mode="max-autotune-no-cudagraphs" (its
compile time printed) and with the default mode; kopt's module is loaded beside them. Each
output is compared with the eager model's (max abs difference printed, a sanity check, not a
gate). Timing: N interleaved rounds, each calling the three in a rotated order, every call
preceded by an L2 flush (a 256 MiB write) and timed with CUDA events around the call alone;
medians, and a 95% bootstrap interval of the ratio of medians (2000 resamples of the rounds).
"""
import random
import statistics
import sys
import time

import torch

from host_profile import problem_and_kopt


def ratio_ci(base, cand, n=2000):
    """Median(base)/median(cand) and its 95% bootstrap interval over resampled rounds."""
    rng = random.Random(1)
    k = len(base)
    est = statistics.median(base) / statistics.median(cand)
    rs = []
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        rs.append(statistics.median(base[i] for i in idx) / statistics.median(cand[i] for i in idx))
    rs.sort()
    return est, rs[int(0.025 * n)], rs[int(0.975 * n) - 1]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    prob_path, out_dir = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 30
    model, inputs, fast = problem_and_kopt(prob_path, out_dir)
    fns = {"kopt": fast, "default": torch.compile(model)}
    ma = torch.compile(model, mode="max-autotune-no-cudagraphs")
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    with torch.no_grad():
        ref = model(*inputs)
        t0 = time.perf_counter()
        ma(*inputs)
        torch.cuda.synchronize()
        print("max-autotune-no-cudagraphs compiled in %.1f s" % (time.perf_counter() - t0), flush=True)
        fns["max-autotune"] = ma
        for name, fn in fns.items():
            out = fn(*inputs)
            a, b = (out[0], ref[0]) if isinstance(out, (tuple, list)) else (out, ref)
            print("%-13s max abs diff to eager %.3g" % (name, (a.float() - b.float()).abs().max().item()))
            for _ in range(3):
                fn(*inputs)
        times = {k: [] for k in fns}
        names = list(fns)
        for r in range(rounds):
            for name in names[r % 3:] + names[:r % 3]:
                flush.zero_()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fns[name](*inputs)
                e1.record()
                torch.cuda.synchronize()
                times[name].append(e0.elapsed_time(e1))
    for name in names:
        print("%-13s median %.4f ms over %d rounds" % (name, statistics.median(times[name]), rounds))
    for base in ("default", "max-autotune"):
        est, lo, hi = ratio_ci(times[base], times["kopt"])
        print("kopt vs %-13s %.3fx [%.3f, %.3f]" % (base, est, lo, hi))
    return 0


if __name__ == "__main__":
    sys.exit(main())
