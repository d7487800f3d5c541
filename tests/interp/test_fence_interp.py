#!/usr/bin/env python3
"""Gate 2's fences (worker/kopt/isolate.py: _Layout.new with a seed, _Fence) around a real Triton
kernel, run by Triton's interpreter on the CPU through the launcher kopt writes from the plan:
tests/candidates/03_log_softmax/good_plan_online.py leaves the fences of its output as drawn,
bad_stores_past_output.py (every output element right, 64 more stored past the end) breaks the
one after it; both outputs match float64 log-softmax. The GPU run of the same pair is gpu-test's
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
    print("fence interp: %d cases, %d failed" % (len(want), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
