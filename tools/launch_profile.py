#!/usr/bin/env python3
"""Where a stitched module's host time goes, call by call (developer tool, GPU only).

usage: python3 tools/launch_profile.py PROBLEM.py MODULE.py [MODULE.py ...] [--calls N] [--flush]

Each MODULE is an Inductor module kopt wrote or kept (`kopt optimize --keep-work` leaves the
compiler's in OUT/work/compile-*/ and each candidate's re-stitched one in OUT/work/cand*/graph0.py),
called as `call([inputs...])` on the problem's inputs (seed 0): only for problems whose model has
no parameters or buffers, whose compiled call() takes the inputs alone. For each: the median
enqueue time (the call's own wall time) and as-called time (device idle, to the end of its GPU
work) over N calls, then cProfile's top functions by their own time over the same calls. Written
for the held-out h01/h02, whose split kernels are faster on the GPU but were refused as slower
as called (BENCHMARKS.md, forty-fifth and forty-sixth sessions). --flush zeroes a buffer of twice
the L2 before each call, as the final measurement's as-called rounds do (fifty-seventh session: on
level1/40 those rounds read 3.6-6.5% below the GPU time, the unflushed calls did not).
"""
import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import sys
import types

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))
from host_profile import timings  # noqa: E402  (tools/, this file's folder)
from kopt.timing import flush_buffer  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def times(call, inputs, n, flush=None):
    """(median enqueue ms, median as-called ms) of n calls of `call([inputs...])`
    (host_profile.timings, five warm-up calls first; `flush`: zeroed before each call)."""
    called, enq = timings(lambda *xs: call(list(xs)), inputs, n, flush)
    return enq, called


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem")
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--flush", action="store_true",
                    help="zero a buffer of twice the L2 before each call, as the final measurement's as-called rounds do")
    a = ap.parse_args()
    prob = load(a.problem, "problem")
    torch.manual_seed(0)
    model = prob.Model(*prob.get_init_inputs()).cuda().eval()
    if any(True for _ in model.parameters()) or any(True for _ in model.buffers()):
        print("the model has parameters or buffers: their order in call()'s arguments is Inductor's; not handled")
        return 2
    torch.manual_seed(0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    # the worker's own flush buffer (twice the L2), as its host rounds zero it
    flush = flush_buffer(types.SimpleNamespace(flush_buf=None)) if a.flush else None
    for i, path in enumerate(a.modules):
        mod = load(path, "kopt_prof_%d" % i)
        with torch.no_grad():
            for _ in range(10):
                mod.call(list(inputs))
            enq, called = times(mod.call, inputs, a.calls, flush)
            prof = cProfile.Profile()
            prof.enable()
            times(mod.call, inputs, a.calls, flush)
            prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
        print("== %s\nenqueue %.4f ms, as called %.4f ms (medians of %d calls%s)"
              % (path, enq, called, a.calls, ", L2 flushed before each" if flush is not None else ""))
        print("\n".join(ln for ln in s.getvalue().splitlines() if ln.strip())[:6000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
