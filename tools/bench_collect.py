"""Collects tools/bench_gpu.sh's results into one file (the device returns few files):
{problem: {"report": report.json without its attempts/experiences/verify, "io_bytes": N}}.

usage: python3 tools/bench_collect.py BENCH_DIR OUT.json
"""
import glob
import json
import os
import sys


def main():
    out = {}
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "report.json"))):
        d = json.load(open(path))
        for k in ("attempts", "experiences", "verify"):
            d.pop(k, None)
        io = os.path.join(os.path.dirname(path), "io_bytes")
        out[os.path.basename(os.path.dirname(path))] = {
            "report": d, "io_bytes": int(open(io).read().strip()) if os.path.exists(io) else None}
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
