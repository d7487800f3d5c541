#!/usr/bin/env python3
"""CPU test of what runs share and a candidate must leave as it is, with CUDA, the captured launch
and the candidate modules stood in for: the kernel-level screen's check of the arguments its runs
share (worker/kopt/isolate.py: op_bench_kernels, _screen_wrote), and `run`'s check of the model's
parameters after a module run (worker/kopt/run.py). The screen runs every candidate on the same read-only arguments
(the model's inputs and weights among them: materialize copies only in-place and output ones).
Checked: honest candidates are timed as before and nothing is dropped; a candidate that writes
to a read-only input in its warm-up (where it runs alone) is refused by name, the model's input
restored and the launch captured again, the others timed; one that writes only in the timed
rounds is found by running each candidate alone again and refused by name, the others timed
again, with the arguments checked after every run: a write there is refused by name (one that
writes in the timed rounds but never alone), a write never repeated leaves everything timed; a
write after the original's own run makes the round fail (module_failed), the captured launches
dropped and the model's input restored as loaded; one that writes to a weight of the model is the fatal
state_changed naming it; in-place and output arguments, which every run gets its own copy of,
may be written; without roles (nothing says which arguments are read-only) nothing is checked.
A module run that leaves a weight written (on a later run than the module's first, which
kopt.modules checks itself) is the fatal state_changed; one that leaves it alone is not.

Run: python3 tests/worker/test_writes_cpu.py (a python with torch, no GPU, no Triton).
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from checklib import check, passed  # noqa: E402
from kopt.compare import checksums  # noqa: E402
from kopt.errors import OpError  # noqa: E402
import kopt.isolate as isolate  # noqa: E402
import kopt.timing as timing  # noqa: E402
from kopt.problem import Problem  # noqa: E402
import cudastub  # noqa: E402

cudastub.install()
timing.flush_buffer = lambda ctx: torch.zeros(64, dtype=torch.uint8)
timing.stall = lambda ctx, ms: None
isolate.make_room = lambda *a, **k: None
isolate.settle = lambda *a, **k: None
isolate._precompile = lambda kerns, status, entry, roles: 1


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(32, 16))


net = Net()
x = torch.randn(8, 16)
problem = Problem("/nowhere/p.py", 0, None, net, [x])
problem.draw_inputs = lambda seed: [x_loaded.clone()]
x_loaded = x.clone()
# the captured launch: (in_ptr0 = the model's input, in_ptr1 = its weight, in_out_ptr0, out_ptr0)
io = torch.randn(8, 32)
entry = [x, net.weight.detach(), io, torch.empty(8, 32), 8]
ROLES = ["in", "in", "inout", "out", None]


def kernel(write=None):
    calls = [0]

    def run(*a, stream=None):
        xi, w, inout, out = a[:4]
        out.copy_(xi @ w.t())
        inout.add_(1.0)                    # its own copy: allowed
        calls[0] += 1
        if write == "input" or (write == "input_late" and calls[0] > 1):   # late: not in its warm-up
            xi[0, 0] = 7.0
        elif write == "input_once" and calls[0] == 2:   # once, in the first timed round only
            xi[0, 1] = 7.0
        elif write == "input_evasive" and calls[0] in (2, 10):   # in both timings, never alone
            xi[0, 2] = 7.0
        elif write == "weight":
            w[1, 1] = 0.0
        elif write == "out":
            out.zero_()
    return types.SimpleNamespace(run=run)


MODS = {}
cache_ = types.SimpleNamespace(module=lambda path: types.SimpleNamespace(k=MODS[path]))
isolate.cache = lambda ctx: cache_


CAPTURES = []


class Launches:
    def get_full(self, ctx, spec):
        CAPTURES.append(self)
        return "key", entry, None, None


def launches_of(c):   # as isolate.launches: a new cache (a new capture) after one was dropped
    if c.launches is None:
        c.launches = Launches()
    return c.launches


ctx = types.SimpleNamespace(problem=problem, launches=Launches(), flush_buf=None, cycles_per_ms=1.0, log=print,
                        poison_turn=0)
isolate.launches = launches_of


def screen(*cands, roles=ROLES):
    MODS.clear()
    MODS["orig"] = kernel()
    for i, w in enumerate(cands):
        MODS["c%d" % i] = kernel(w)
    ctx.launches = Launches()
    return isolate.op_bench_kernels(ctx, {"orig": "orig", "kernel": "k", "cands": ["c%d" % i for i in range(len(cands))],
                                          "launch_args": {"roles": roles}, "rounds": 3, "warmup": 1})


loaded = checksums([x])
res = screen(None, "out")
check(len(res["orig"]) == 3 and all(isinstance(c, list) and len(c) == 3 for c in res["cands"]),
      "honest candidates, and one that writes its own output, are timed: %s" % res["cands"])
check(ctx.launches is not None, "the captured launches are kept")
# a writer in its warm-up (where it runs alone) is named and dropped; the others are timed
CAPTURES.clear()
res = screen(None, "input", None)
c = res["cands"]
check(isinstance(c[0], list) and len(c[0]) == 3 and isinstance(c[2], list) and len(c[2]) == 3
      and "wrote to arguments it only reads" in c[1].get("error", ""),
      "the writer refused, the honest ones before and after it timed: %s" % c)
check(len(CAPTURES) == 2 and CAPTURES[0] is not CAPTURES[1], "the launch captured again after the write")
check(checksums([x]) == loaded, "the model's input restored as loaded")
# one that writes only in the timed rounds (all candidates run on the same tensors there): each
# candidate runs alone again, the one that writes again is named, the others timed again
CAPTURES.clear()
res = screen(None, "input_late", None)
c = res["cands"]
check(isinstance(c[0], list) and len(c[0]) == 3 and isinstance(c[2], list) and len(c[2]) == 3
      and "in the timed rounds, and again run alone" in c[1].get("error", ""),
      "the late writer refused by name, the honest ones timed again: %s" % c)
check(len(res["orig"]) == 3, "the original timed again too: %s" % res["orig"])
check(len(CAPTURES) == 3, "the launch captured again after the rounds and after the writer's runs alone: %d"
      % len(CAPTURES))
check(checksums([x]) == loaded, "the model's input restored as loaded")
# a write no candidate repeats alone: timed again with the arguments checked after every run;
# a candidate that wrote once and never again is timed like the others (the gates judge its own runs)
CAPTURES.clear()
res = screen(None, "input_once", None)
c = res["cands"]
check(all(isinstance(t, list) and len(t) == 3 for t in c) and len(res["orig"]) == 3,
      "a write that is never repeated: nothing refused, everything timed again: %s" % c)
check(len(CAPTURES) == 2, "the launch captured again after the rounds: %d" % len(CAPTURES))
check(checksums([x]) == loaded, "the model's input restored as loaded")
# one that writes in the timed rounds but never when it runs alone is caught after its run in
# the checked timing and refused by name; the others are timed
CAPTURES.clear()
res = screen(None, "input_evasive", None)
c = res["cands"]
check(isinstance(c[0], list) and len(c[0]) == 3 and isinstance(c[2], list) and len(c[2]) == 3
      and isinstance(c[1], dict) and "caught after one of its runs" in c[1].get("error", ""),
      "the evasive writer refused by name, the honest ones timed: %s" % c)
check(len(res["orig"]) == 3, "the original timed: %s" % res["orig"])
check(len(CAPTURES) == 3, "the launch captured again after the rounds and after the caught run: %d" % len(CAPTURES))
check(checksums([x]) == loaded, "the model's input restored as loaded")
# a write after the original's own run cannot be any candidate's: the round fails
def screen_orig_writes():
    MODS.clear()
    MODS["orig"] = kernel("input_late")
    MODS["c0"] = kernel()
    ctx.launches = Launches()
    return isolate.op_bench_kernels(ctx, {"orig": "orig", "kernel": "k", "cands": ["c0"],
                                          "launch_args": {"roles": ROLES}, "rounds": 3, "warmup": 1})


try:
    screen_orig_writes()
    check(False, "a write after the original's run fails the round")
except OpError as e:
    check(e.code == "module_failed" and not e.fatal and "after the original kernel's run" in str(e),
          "module_failed: %s" % e)
    check(ctx.launches is None, "the captured launches are dropped")
    check(checksums([x]) == loaded, "the model's input restored as loaded")
w0 = net.weight.detach().clone()
try:
    screen("weight")
    check(False, "a candidate that writes to a weight fails the round")
except OpError as e:
    check(e.code == "state_changed" and e.fatal and "a screened candidate wrote to the model's parameters or buffers "
          "(weight)" in str(e), "the fatal state_changed: %s" % e)
net.weight.data.copy_(w0)
res = screen("input", roles=None)
check(len(res["cands"]) == 1 and isinstance(res["cands"][0], list), "without roles nothing is checked")
x.copy_(x_loaded)


# ---- `run` of a module target: the model's parameters verified afterwards
import kopt.run as run  # noqa: E402

torch.cuda.empty_cache = lambda: None
torch.cuda.memory_allocated = lambda *a: 0
torch.cuda.max_memory_allocated = lambda *a: 0
torch.cuda.reset_peak_memory_stats = lambda *a: None
run.make_room = lambda *a, **k: None
ctx.memory = types.SimpleNamespace(phase="main", fold=lambda: None)
ctx.run_need = 0


def module(write):
    def go(p):
        if write:
            net.weight.data[0, 0] += 1.0
        return (x @ net.weight.detach().t(),)
    return types.SimpleNamespace(prepare=lambda: [], arguments=lambda p: [], run=go, release=lambda: None)


run.make_target = lambda c, spec, **k: module(spec["module"] == "writes")
w_run = net.weight.detach().clone()
res = run.op_run(ctx, {"target": {"kind": "module", "module": "honest"}, "poison": False})
check(res["outputs"][0]["shape"] == [8, 32] and res["loaded_inputs_changed"] == [], "an honest module run: %s" % res)
try:
    run.op_run(ctx, {"target": {"kind": "module", "module": "writes"}, "poison": False, "candidate": True})
    check(False, "a module run that writes a weight fails")
except OpError as e:
    check(e.code == "state_changed" and e.fatal and "a module run wrote to the model's parameters or buffers (weight)"
          in str(e), "the fatal state_changed: %s" % e)

# the poison of module runs (kopt.poison's kinds in turn: a kernel cannot tell kopt's runs by what
# its buffers hold before it writes them); eager runs keep NaN
net.weight.data.copy_(w_run)   # the weight as loaded again, after the writing module above
kinds = []
run.poison_allocator = lambda c, kind="nan": kinds.append(kind) or 0
for _ in range(4):
    run.op_run(ctx, {"target": {"kind": "module", "module": "honest"}})
check(kinds == ["nan", "bits", "normal", "nan"], "module runs: the kinds in turn: %s" % kinds)
print("writes: %d checks passed" % passed())
