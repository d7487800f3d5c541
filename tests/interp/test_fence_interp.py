#!/usr/bin/env python3
"""Gate 2's fences (worker/kopt/isolate.py: _Layout.new with a seed, _Fence) around a real Triton
kernel, run by Triton's interpreter on the CPU through the launcher kopt writes from the plan:
tests/candidates/03_log_softmax/good_plan_online.py leaves the fences of its output as drawn,
bad_stores_past_output.py (every output element right, 64 more stored past the end) breaks the
one after it; both outputs match float64 log-softmax. A plan with a scratch buffer (row sums),
its launcher run while gate 2's _ScratchFences is on: the honest form leaves the buffer's fences
as drawn, one that stores an element past the buffer's end breaks them. The GPU run of the same pair is gpu-test's
verify suite (gate 2 refuses the second).

Run: TRITON_INTERPRET=1 build/triton-venv/bin/python tests/interp/test_fence_interp.py (make
interp-check); exits 0 when every case holds, 1 otherwise; skipped (exit 0, one line) when triton
does not import.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import ROOT, load_judged, require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
import kopt.isolate as kiso  # noqa: E402

# interp_util's storage shim makes untyped_storage() a typed storage under torch 1.x, where set_
# wants the untyped one
if int(torch.__version__.split(".")[0]) < 2:
    kiso.storage = lambda t: t.storage().untyped()


class HostLayout(kiso._Layout):
    device = "cpu"


def main():
    bad = 0
    rows, n = 6, 4096
    x = torch.randn(rows, n) * 3
    ref = torch.log_softmax(x.double(), 1)
    want = {"good_plan_online.py": False, "bad_stores_past_output.py": True}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, broken) in enumerate(want.items()):
            text = open(os.path.join(ROOT, "tests", "candidates", "03_log_softmax", name)).read()
            mod = load_judged(text, "fence_%d" % k, tmp)
            y, fence = HostLayout(torch.empty(rows, n)).new(kiso.new_seed())
            y.fill_(float("nan"))
            mod.launch(x, y, rows, n)
            err = (y.double() - ref).abs().max().item()
            ok = err <= 1e-5 and fence.broken() == broken and y.data_ptr() == fence.raw.data_ptr() + fence.r
            bad += not ok
            print("%s %s max_err=%.3g fence broken: %s (expected %s)" % ("ok  " if ok else "FAIL", name, err,
                                                                         fence.broken(), broken))
        # a plan's scratch buffer, allocated by the launcher kopt writes while _ScratchFences is on
        for k, past in enumerate((False, True)):
            mod = load_judged(SCRATCH_PLAN.replace("@PAST@", "1" if past else "0"), "scratch_%d" % k, tmp)
            y = torch.full((rows, n), float("nan"))
            with kiso._ScratchFences(kiso.new_seed()) as sf:
                mod.launch(x, y, rows, n)
            err = (y.double() - (x.double() - x.double().sum(1, keepdim=True))).abs().max().item()
            ok = err <= 1e-3 and len(sf.fences) == 1 and (sf.broken() == 1) == past and torch.full is not sf._full
            bad += not ok
            print("%s scratch plan, %s: max_err=%.3g fences %d, broken %d" % (
                "ok  " if ok else "FAIL", "a store past the scratch" if past else "honest", err, len(sf.fences),
                sf.broken()))
    print("fence interp: %d cases, %d failed" % (len(want) + 2, bad))
    return 1 if bad else 0


# x - its row's sum, through a scratch buffer of row sums; PAST 1: the last row's program also
# stores one element past the scratch buffer's end
SCRATCH_PLAN = """import triton
import triton.language as tl


@triton.jit
def _row_sums(in_ptr0, part, xnumel, r0_numel, B: tl.constexpr, PAST: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([B], tl.float32)
    for off in range(0, r0_numel, B):
        cols = off + tl.arange(0, B)
        acc += tl.load(in_ptr0 + row * r0_numel + cols, mask=cols < r0_numel, other=0.0)
    total = tl.sum(acc, 0)
    tl.store(part + row, total)
    if PAST:
        tl.store(part + xnumel + tl.arange(0, 2), tl.zeros([2], tl.float32) + total,
                 mask=(tl.arange(0, 2) == 0) & (row == xnumel - 1))


@triton.jit
def _minus(in_ptr0, part, out_ptr0, r0_numel, B: tl.constexpr):
    row = tl.program_id(0)
    s = tl.load(part + row)
    for off in range(0, r0_numel, B):
        cols = off + tl.arange(0, B)
        m = cols < r0_numel
        tl.store(out_ptr0 + row * r0_numel + cols, tl.load(in_ptr0 + row * r0_numel + cols, mask=m) - s, mask=m)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "scratch": [{"name": "part", "shape": ["xnumel"], "dtype": "float32"}],
    "launches": [
        {"kernel": "_row_sums", "grid": ["xnumel"], "args": ["in_ptr0", "part", "xnumel", "r0_numel"],
         "constexprs": {"B": 1024, "PAST": @PAST@}, "num_warps": 4},
        {"kernel": "_minus", "grid": ["xnumel"], "args": ["in_ptr0", "part", "out_ptr0", "r0_numel"],
         "constexprs": {"B": 1024}, "num_warps": 4},
    ],
}
"""


if __name__ == "__main__":
    sys.exit(main())
