#!/usr/bin/env python3
"""Developer tool (run on the GPU machine): Inductor output modules of suite problems, for the
C parser's CPU tests (CI has no torch and no GPU).

usage: python3 tools/capture_suite_fixtures.py OUT_DIR [--full] [--small-bytes N] [--mode M] PROBLEM.py ...

Each problem is compiled with torch.compile (default mode) under no_grad in eval mode, and
every graph's output module is written to OUT_DIR/suite_<level>_<name>[_small]_g<i>.py. By
default the problem is scaled down first, the way tools/suite_check.py does it (its shape
constants halved until the inputs take at most --small-bytes, default 64 MiB), so that
recording a dozen problems costs seconds; --full compiles the problem at its own size
(Inductor's kernels then match what `kopt optimize` sees: split reductions, block sizes).
Only module text is written, never tensors. One line per problem on stdout.
"""
import argparse
import os
import sys
import time

import torch
from torch._inductor.utils import run_and_get_code

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite_check  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--small-bytes", type=int, default=64 << 20)
    ap.add_argument("--mode", default=None, help="torch.compile mode, e.g. max-autotune-no-cudagraphs "
                    "(the file name then ends in __<mode>)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for path in a.problems:
        _, tree = suite_check.parse_source(path)
        mod = suite_check.load_module(path, tree)
        over = None if a.full else suite_check.small_overrides(path, tree, mod, a.small_bytes)
        if over:
            mod = suite_check.load_module(path, tree, over)
        level = os.path.basename(os.path.dirname(os.path.abspath(path)))
        name = "suite_%s_%s%s" % (level, os.path.basename(path)[:-3], "" if a.full else "_small")
        if a.mode:
            name += "__" + a.mode.replace("-", "_")
        torch._dynamo.reset()
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = mod.Model(*mod.get_init_inputs()).eval()
            torch.manual_seed(0)
            inputs = mod.get_inputs()
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
        t0 = time.time()
        with torch.no_grad():
            _, codes = run_and_get_code(torch.compile(model, mode=a.mode), *inputs)
        for i, code in enumerate(codes):
            with open(os.path.join(a.out, "%s_g%d.py" % (name, i)), "w") as f:
                f.write(code)
        ntk = sum(c.count("async_compile.triton(") for c in codes)
        print("%-52s graphs=%d triton_kernels=%d shapes=%s compile_s=%.1f"
              % (name, len(codes), ntk, over or "full", time.time() - t0), flush=True)
        del model, inputs


if __name__ == "__main__":
    main()
