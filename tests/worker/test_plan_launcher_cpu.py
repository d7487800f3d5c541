#!/usr/bin/env python3
"""CPU test of the launcher kopt writes from a form-P plan (src/gates/plan.h, plan_emit): the text
`kopt lint --show-launcher` prints for tests/fixtures/plan/scratch_bound.py is run with torch on
the CPU and stand-ins for its Triton kernels. Checked: a launch whose scratch fits the bound
allocates it poisoned (NaN) and launches both kernels with it; a launch asking for more than
PLAN_SCRATCH_FACTOR x its arguments' bytes + PLAN_SCRATCH_SLACK_MIB raises ValueError before
anything is allocated or launched (the candidate's refusal when kopt first runs it, at gate 1,
not an out-of-memory). With tests/fixtures/plan/sm_checks.py: on the guard's verified path a
check that reads sm_count() (through a let) still runs and one on the arguments' sizes is
skipped.

Run: python3 tests/worker/test_plan_launcher_cpu.py [KOPT] (a python with torch, no GPU; KOPT
defaults to build/kopt). Exits non-zero on the first failed check, naming it.
"""
import os
import subprocess
import sys
import types

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
KOPT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "kopt")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "plan", "scratch_bound.py")
from checklib import check, passed


out = subprocess.run([KOPT, "lint", FIXTURE, "--show-launcher"], capture_output=True, text=True)
check(out.returncode == 0, "kopt lint refused the fixture: %s%s" % (out.stdout, out.stderr))
text = out.stdout
start = text.find("# kopt: the launcher kopt wrote")
check(start >= 0, "no launcher in kopt lint --show-launcher's output:\n" + text)
launcher = text[start:]

# Triton stand-in: the launcher imports triton for cdiv only
fake_triton = types.ModuleType("triton")
fake_triton.cdiv = lambda a, b: -(-a // b)
sys.modules["triton"] = fake_triton

launched = []


class Kernel:
    def __init__(self, name):
        self.name = name

    def __getitem__(self, grid):
        def run(*args, **kw):
            launched.append((self.name, grid, args, kw))
        return run


ns = {"_partials": Kernel("_partials"), "_combine": Kernel("_combine")}
exec(compile(launcher, "launcher", "exec"), ns)
launch = ns["launch"]

x = torch.randn(64, 256)
y = torch.empty(64)
# fits: 2 * 64 * 4 floats of scratch against 64 KiB of arguments
launch(x, y, 64, 256, 4)
check([k[0] for k in launched] == ["_partials", "_combine"], "both kernels launched: %r" % (launched,))
part = launched[0][2][1]
check(part.shape == (2 * 64 * 4,) and bool(torch.isnan(part).all()), "the scratch buffer is poisoned with NaN")
check(launched[1][2][0] is part, "the second kernel gets the same scratch buffer")

# too much: 2 * 64 * nseg floats, over 4x the arguments' bytes + 64 MiB, refused before allocation
launched.clear()
nbytes_args = x.numel() * 4 + y.numel() * 4
nseg = (4 * nbytes_args + (64 << 20)) // (2 * 64 * 4) + 1
try:
    launch(x, y, 64, 256, nseg)
    check(False, "a scratch request over the bound did not raise")
except ValueError as e:
    check("scratch buffers ask for more than 4x" in str(e), "the error names the scratch bound: %s" % e)
check(launched == [], "nothing launched after the bound refused the scratch")
# just under the bound still runs
launch(x, y, 64, 256, nseg - 1)
check(len(launched) == 2, "a scratch request at the bound runs")

# on the guard's verified signature (_kopt_plan_go given) gate 1 already ran the bound on these
# very sizes, so the launcher skips it; each launch goes to the shim's binder with every parameter
# in declared order
went = []
launched.clear()
launch(x, y, 64, 256, nseg, _kopt_plan_go=lambda *a: went.append(a))
check(launched == [] and [g[0] for g in went] == [0, 1], "the verified path hands both launches to the binder")
check(went[0][1] == (64, nseg, 1) and went[0][2][0] is x and went[0][2][2:] == (256, nseg, 64)
      and went[0][3] == (None, None, None, None, "BLOCK"), "launch 0: grid, ordered arguments, constexpr names: %r"
      % (went[0][:4],))
check(went[0][2][1] is went[1][2][0] and bool(torch.isnan(went[0][2][1]).all()),
      "the scratch buffer is fresh, poisoned, and shared by both launches")

# sm_count(): a check that reads it (here through a let) runs on every call, the verified path
# too, since another GPU of the same architecture may have fewer SMs; a check on the arguments'
# sizes alone is skipped there like the bound (tests/fixtures/plan/sm_checks.py)
out = subprocess.run([KOPT, "lint", os.path.join(ROOT, "tests", "fixtures", "plan", "sm_checks.py"), "--show-launcher"],
                     capture_output=True, text=True)
check(out.returncode == 0, "kopt lint refused sm_checks.py: %s%s" % (out.stdout, out.stderr))
ns2 = {"_partials": Kernel("_partials")}
exec(compile(out.stdout[out.stdout.find("# kopt: the launcher kopt wrote"):], "launcher2", "exec"), ns2)
launch2 = ns2["launch"]
torch.cuda.get_device_properties = lambda dev: types.SimpleNamespace(multi_processor_count=4)   # no GPU here
x2, y2 = torch.randn(256), torch.empty(1)


def raises(f, what):
    try:
        f()
    except ValueError as e:
        return what in str(e)
    return False


went.clear()
launched.clear()
check(raises(lambda: launch2(x2, y2, 128), "numel(in_ptr0) == n"), "plain path: a size check that fails raises")
launch2(x2, y2, 128, _kopt_plan_go=lambda *a: went.append(a))
check(len(went) == 1 and went[0][1] == (2, 1, 1) and launched == [],
      "verified path: the size check is skipped (gate 1 ran it on the pinned signature): %r" % (went,))
went.clear()
check(raises(lambda: launch2(x2, y2, 512, _kopt_plan_go=lambda *a: went.append(a)), "nseg <= sms") and went == [],
      "verified path: 8 segments on a GPU of 4 SMs still raise, nothing launched")
check(raises(lambda: launch2(x2, y2, 512), "nseg <= sms"), "plain path: the same")
launch2(x2, y2, 256)
check(len(launched) == 1 and launched[0][1] == (4, ), "plain path: 4 segments on 4 SMs run: %r" % (launched,))
print("plan launcher (cpu): %d checks passed" % passed())
