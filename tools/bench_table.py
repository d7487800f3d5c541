"""Turns `kopt optimize` reports (from tools/bench_gpu.sh) into docs/BENCHMARKS.md.

usage: python3 tools/bench_table.py BENCH_DIR OUT.md     (BENCH_DIR/<problem>/report.json)
       python3 tools/bench_table.py --one REPORT.json    (one summary line)
"""
import glob
import json
import math
import os
import sys


def line(d):
    m = d["model"]
    s = m["speedup"]
    ma = m.get("max_autotune_ms")
    return ("compiled %.4f ms, max-autotune %s ms, optimized %.4f ms, %.3fx [%.3f, %.3f], %d candidates, %.0f s"
            % (m["baseline_ms"], ("%.4f" % ma) if ma else "-", m["optimized_ms"], s["estimate"], s["ci95_lo"],
               s["ci95_hi"], d["budget"]["used_candidates"], d["budget"]["used_wall_s"]))


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    if sys.argv[1] == "--one":
        print(line(json.load(open(sys.argv[2]))))
        return
    rows, sp_def, sp_ma = [], [], []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "report.json"))):
        d = json.load(open(path))
        m = d["model"]
        name = os.path.basename(os.path.dirname(path))
        s = m["speedup"]
        ma = m.get("max_autotune_ms")
        # compiled-default and max-autotune medians come from the same interleaved run of the
        # whole model; the optimized/baseline ratio from the final module-level measurement.
        opt_equiv = m["compiled_ms"] / s["estimate"]
        vs_ma = ma / opt_equiv if ma else None
        sp_def.append(s["estimate"])
        if vs_ma:
            sp_ma.append(vs_ma)
        changed = ", ".join("%s: %s" % (k["name"], k.get("change", "")) for k in d["kernels"] if k.get("status") == "optimized")
        rows.append("| %s | %.4f | %s | %.4f | %.4f | %.3fx [%.3f, %.3f] | %s | %d / %.0f s | %s |" % (
            name, m["compiled_ms"], ("%.4f" % ma) if ma else "-", opt_equiv, m.get("floor_ms", 0), s["estimate"],
            s["ci95_lo"], s["ci95_hi"], ("%.3fx" % vs_ma) if vs_ma else "-", d["budget"]["used_candidates"],
            d["budget"]["used_wall_s"], changed or "baseline kept"))
    out = ["# Benchmarks: `kopt optimize` on the project's reduction-type problems", "",
           "Measured on one NVIDIA H200 (torch 2.11.0+cu130, triton 3.6.0) with `tools/bench_gpu.sh`",
           "(see the closing section for the exact command). Times are GPU times in ms: CUDA events, L2 flushed,",
           "stream stalled before each run, variants interleaved; medians. `compiled` and `max-autotune` are",
           "torch.compile default and mode max-autotune-no-cudagraphs timed in one interleaved run of the whole",
           "model; `speedup` is baseline module / optimized module from kopt's final interleaved measurement",
           "with its 95% paired-bootstrap interval; `optimized` = compiled / speedup. `floor` is the",
           "memory-traffic floor (every argument read and written once at the measured copy bandwidth).",
           "`GPU time` is the wall time of the whole optimize run, which holds the GPU throughout.", "",
           "| problem | compiled | max-autotune | optimized | floor | speedup vs compiled [95% CI] | vs max-autotune | candidates / GPU time | what changed |",
           "|---|---|---|---|---|---|---|---|---|"] + rows
    out += ["", "Geometric mean speedup over torch.compile default: %.3fx (%d problems); over max-autotune: %.3fx (%d problems)."
            % (gmean(sp_def), len(sp_def), gmean(sp_ma), len(sp_ma))]
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
