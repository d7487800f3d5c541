"""Turns `kopt optimize` reports (from tools/bench_gpu.sh) into docs/BENCHMARKS.md.

usage: python3 tools/bench_table.py SUMMARY.json OUT.md  (tools/bench_collect.py's file)
       python3 tools/bench_table.py BENCH_DIR OUT.md     (BENCH_DIR/<problem>/report.json [+ io_bytes])
       python3 tools/bench_table.py --one REPORT.json    (one summary line)

`floor` is the model's memory-traffic floor: its inputs, parameters and outputs moved once
(tools/io_bytes.py) at the measured device-to-device copy bandwidth.
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


def entries(src):
    """(problem, report, io_bytes or None) from a summary file or a bench directory."""
    if os.path.isfile(src):
        for name, e in sorted(json.load(open(src)).items()):
            yield name, e["report"], e.get("io_bytes")
        return
    for path in sorted(glob.glob(os.path.join(src, "*", "report.json"))):
        io = os.path.join(os.path.dirname(path), "io_bytes")
        yield (os.path.basename(os.path.dirname(path)), json.load(open(path)),
               int(open(io).read().strip()) if os.path.exists(io) else None)


def main():
    if sys.argv[1] == "--one":
        print(line(json.load(open(sys.argv[2]))))
        return
    rows, sp_def, sp_ma = [], [], []
    for name, d, io in entries(sys.argv[1]):
        m = d["model"]
        bw = d.get("ceilings", {}).get("copy_gbps")
        floor = io / (bw * 1e9) * 1e3 if io and bw else None
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
        rows.append("| %s | %.4f | %s | %.4f | %s | %.3fx [%.3f, %.3f] | %s | %d / %.0f s | %s |" % (
            name, m["compiled_ms"], ("%.4f" % ma) if ma else "-", opt_equiv, ("%.4f" % floor) if floor else "-", s["estimate"],
            s["ci95_lo"], s["ci95_hi"], ("%.3fx" % vs_ma) if vs_ma else "-", d["budget"]["used_candidates"],
            d["budget"]["used_wall_s"], changed or "baseline kept"))
    out = ["# Benchmarks: `kopt optimize` on the project's reduction-type problems", "",
           "Measured on one NVIDIA H200 (torch 2.11.0+cu130, triton 3.6.0) with `tools/bench_gpu.sh`",
           "(see the closing section for the exact command). Times are GPU times in ms: CUDA events, L2 flushed,",
           "stream stalled before each run, variants interleaved; medians. `compiled` and `max-autotune` are",
           "torch.compile default and mode max-autotune-no-cudagraphs timed in one interleaved run of the whole",
           "model; `speedup` is baseline module / optimized module from kopt's final interleaved measurement",
           "with its 95% paired-bootstrap interval; `optimized` = compiled / speedup. `floor` is the",
           "model's memory-traffic floor (its inputs, parameters and outputs moved once, at the measured copy bandwidth).",
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
