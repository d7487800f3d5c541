#!/usr/bin/env python3
"""CPU test of displacing the loaded inputs for a run on a seed's inputs (worker/kopt/problem.py:
Problem.displace / restore / shares_displaced; worker/kopt/run.py: _displace_for_seed).
Checked: displacing empties every distinct storage of the loaded inputs once (views and a
second tensor on the same storage included) and says how many bytes it freed; the tensor
objects stay the same and their holders see the restored bytes (checksums as at load, views
included); a second displace does nothing; shares_displaced tells a tensor of an emptied
storage from a fresh one; a storage that cannot be resized (numpy's) is left whole and nothing
is displaced; nor is anything when the problem file's globals hold a loaded input; restore
without a displace is a no-op; the run's decision displaces only for a
module target on a seed, with a memory accounting, when the cap has no room for the draw and
the run beside the loaded inputs; gate 2's seed sets displace only where every argument on a
loaded input's storage is one they redraw, and their redraw from a layout taken before the
displacement draws the same values as without it.

Run: python3 tests/worker/test_displace_cpu.py (a python with torch, no GPU).
"""
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from checklib import check, passed  # noqa: E402
import kopt.run as krun  # noqa: E402
from kopt.compare import checksums  # noqa: E402
from kopt.problem import Problem  # noqa: E402
from kopt.tensors import storage  # noqa: E402

torch.manual_seed(3)
base = torch.randn(64, 33)
view = base[5:40, 2:30]                      # a view of the same storage: one storage to empty
other = torch.randn(1000, dtype=torch.float16)
idx = torch.arange(17, dtype=torch.int64)
inputs = [base, view, other, idx, 7]
p = Problem("/nowhere/p.py", 0, None, None, inputs)
sums = checksums(inputs)
want = base.numel() * 4 + other.numel() * 2 + idx.numel() * 8

check(not p.displaced, "a new problem is not displaced")
p.restore()
check(checksums(inputs) == sums, "restore without a displace leaves the inputs as they are")
freed = p.displace()
check(freed == want, "displace frees each distinct storage once: %d bytes, want %d" % (freed, want))
check(p.displaced, "displaced after displace")
check(all(storage(t).nbytes() == 0 for t in (base, view, other, idx)), "every storage is emptied")
check(p.displace() == 0, "a second displace does nothing")
check(p.shares_displaced([torch.randn(3), view]), "a view of an emptied storage is found")
check(p.shares_displaced([3, other]), "a tensor of an emptied storage is found among non-tensors")
check(not p.shares_displaced([torch.randn(64, 33), 5]), "fresh tensors share nothing")
p.restore()
check(not p.displaced, "restored")
check(inputs[0] is base and inputs[1] is view, "the same tensor objects after restore")
check(checksums(inputs) == sums, "restore brings back every byte (checksums as at load)")
check(torch.equal(view, base[5:40, 2:30]) and view.data_ptr() == base[5:40, 2:30].data_ptr(),
      "the view reads its restored storage")
check(not p.shares_displaced([view]), "nothing is displaced after restore")
# a holder's reference (as a captured launch keeps one) sees the same restored tensor
held = [base]
p.displace()
p.restore()
check(torch.equal(held[0], base) and checksums([held[0]]) == [sums[0]], "a holder's reference is restored too")

# memory PyTorch does not own cannot be resized: nothing is displaced, every storage kept whole
arr = np.arange(40, dtype=np.float32)
foreign = torch.from_numpy(arr)
mine = torch.randn(50)
q = Problem("/nowhere/q.py", 0, None, None, [mine, foreign])
qsums = checksums([mine, foreign])
check(q.displace() == 0, "a non-resizable storage: nothing displaced")
check(not q.displaced, "not displaced")
check(storage(mine).nbytes() == 200 and storage(foreign).nbytes() == 160, "both storages whole")
check(checksums([mine, foreign]) == qsums, "contents unchanged")


# a problem file whose globals hold a loaded input (a get_inputs() handing out a cached tensor,
# or one kept in a list): nothing is displaced, the storage stays whole
cached = torch.randn(30)
for held_as in (cached, [3, cached], {"x": cached}):
    mod = types.ModuleType("cached_problem")
    mod.CACHE = held_as
    cp = Problem("/nowhere/c.py", 0, mod, None, [cached, torch.randn(4)])
    check(cp.displace() == 0 and not cp.displaced and storage(cached).nbytes() == 120,
          "a loaded input held by the problem's globals (%s): not displaced" % type(held_as).__name__)
mod = types.ModuleType("other_problem")
mod.OTHER = torch.randn(5)
op = Problem("/nowhere/o.py", 0, mod, None, [torch.randn(6)])
check(op.displace() == 24, "globals holding other tensors do not stop it")
op.restore()

# restore draws the inputs again under the load seed where every input covers its storage (the
# draw path; on this CPU-only torch the worker's move to the GPU is replaced by the identity),
# and copies from the host copy, made once, where the draw does not reproduce the load
import kopt.problem as kprob  # noqa: E402
kprob.to_cuda = lambda x: x
calls = []


def seeded_inputs():
    calls.append(1)
    return [torch.randn(64, 33), torch.randn(100, dtype=torch.float16), 4]


mod = types.ModuleType("seeded_problem")
mod.get_inputs = seeded_inputs
d = Problem("/nowhere/d.py", 5, mod, None, kprob.draw_inputs(mod, 5))
dsums = checksums(d.inputs)
check(d.displace() == 64 * 33 * 4 + 200, "displaced")
host0 = d._host
n0 = len(calls)
d.restore()
check(len(calls) == n0 + 1 and checksums(d.inputs) == dsums, "restored by drawing again, exactly")
check(d.displace() > 0 and d._host is host0, "the host copy is made once")
d.restore()
check(checksums(d.inputs) == dsums, "restored again")
# a get_inputs() that does not reproduce the load: the draw is tried, then the host copy restores
mod.get_inputs = lambda: (calls.append(1), [torch.randn(64, 33) + len(calls), torch.randn(100, dtype=torch.float16), 4])[1]
d.displace()
n1 = len(calls)
d.restore()
check(len(calls) == n1 + 1 and checksums(d.inputs) == dsums, "a draw that differs: restored from the host copy")
# an input that is a view of a larger storage: the draw could not refill the whole storage, so
# it is not tried
big = torch.randn(40, 10)
v = Problem("/nowhere/v.py", 0, mod, None, [big[:, :5]])
vsums = checksums(v.inputs)
v.displace()
n2 = len(calls)
v.restore()
check(len(calls) == n2 and checksums(v.inputs) == vsums and torch.equal(v.inputs[0], big[:, :5]),
      "a view input: restored from the host copy, no draw")
# inputs changed since load (a kopt fault elsewhere): not displaced, so nothing wrong is kept
w = Problem("/nowhere/w.py", 0, None, None, [torch.randn(8)])
w.inputs[0].add_(1)
check(w.displace() == 0 and not w.displaced, "inputs that differ from the load are not displaced")

# the run's decision (kopt.run._displace_for_seed), over_cap replaced by a stand-in
class Ctx:
    def __init__(self, problem, memory=True):
        self.problem, self.memory, self.run_need, self.logs = problem, (object() if memory else None), 100, []

    def log(self, m):
        self.logs.append(m)


asked = []


def over_cap_stub(room):
    def f(ctx, extra):
        asked.append(extra)
        return extra > room
    return f


r = Problem("/nowhere/r.py", 0, None, None, [torch.randn(256)])
krun.over_cap = over_cap_stub(1 << 30)
check(not krun._displace_for_seed(Ctx(r), {"kind": "module"}, 4), "room under the cap: not displaced")
check(asked[-1] == 1024 + 100, "asks for the draw's bytes and the run's: %r" % asked[-1:])
krun.over_cap = over_cap_stub(0)
check(not krun._displace_for_seed(Ctx(r), {"kind": "module"}, None), "no seed: the loaded inputs are the run's")
check(not krun._displace_for_seed(Ctx(r), {"kind": "eager"}, 4), "eager runs are not capped")
check(not krun._displace_for_seed(Ctx(r, memory=False), {"kind": "module"}, 4), "no memory accounting: no cap")
check(not r.displaced, "none of those displaced")
c = Ctx(r)
check(krun._displace_for_seed(c, {"kind": "module"}, 4), "over the cap on a seed: displaced")
check(r.displaced and c.logs and "displaced" in c.logs[-1], "displaced and logged")
r.restore()
check(storage(r.inputs[0]).nbytes() == 1024, "restored")
check(not krun._displace_for_seed(Ctx(None), {"kind": "module"}, 4), "no problem loaded: nothing")
# gate 2's seed sets (kopt.isolate): which launches may displace, and the redraw from a layout
# taken before the displacement
import kopt.isolate as kiso  # noqa: E402

x = torch.randn(8, 16)
lab = torch.arange(8)
s_ = Problem("/nowhere/s.py", 0, None, None, [x, lab])
out = torch.empty(8)
check(kiso._displaceable(s_, [x, out, 16], ["in", "out", "in"]), "a floating input read: displaceable")
check(not kiso._displaceable(s_, [x, lab, out], ["in", "in", "out"]),
      "an integer loaded input (labels: never redrawn) is read: not displaceable")
check(not kiso._displaceable(s_, [x, x, out], ["in", "out", "out"]),
      "a loaded input written as an output: not displaceable")
check(kiso._displaceable(s_, [out, torch.arange(3)], ["out", "in"]), "no loaded input read: displaceable")
check(not kiso._displaceable(None, [x], ["in"]), "no problem loaded: nothing to displace")
entry = [x, x[2:6], out, 5]
roles = ["in", "in", "out", "in"]
layout = kiso._storages(entry)
want = kiso._redraw(entry, roles, 11)
check(s_.displace() > 0 and s_.displaced, "displaced")
got = kiso._redraw(entry, roles, 11, (), layout)
check(torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]),
      "the redraw from the layout draws what it draws undisplaced")
check(got[1].data_ptr() == got[0][2:6].data_ptr(), "a view of a redrawn input shares its redrawn storage")
check(got[2] is out and got[3] == 5, "outputs and scalars as they are")
check(storage(x).nbytes() == 0, "the loaded input stays displaced while the set runs")
s_.restore()
check(storage(x).nbytes() == 8 * 16 * 4, "restored")

# gate 2's later runs (kopt.isolate): a run bit for bit the first one's is not kept
o1 = torch.randn(1000)
o1[3] = float("nan")
o2 = o1.clone()
k1 = [torch.randn(4), o1, 7]
k2 = [k1[0], o2, 7]
check(kiso.same_bits(k1, k2, [1]), "equal bytes, a NaN included: the same bits")
o2.view(torch.int32)[3] ^= 1   # another NaN payload: equal as numbers would say nothing, bytes differ
check(not kiso.same_bits(k1, k2, [1]), "a NaN with another payload: not the same bits")
o2.copy_(o1)
o2[999] = o2[999] + 1
check(not kiso.same_bits(k1, k2, [1]), "the last element differs: not the same bits")
check(kiso.same_bits(k1, k2, [0]), "only the unchanged argument checked: the same bits")
odd1 = torch.arange(7, dtype=torch.uint8)
odd2 = odd1.clone()
check(kiso.same_bits([odd1], [odd2], [0]), "storages of a size not a multiple of 8 compared bytewise")
odd2[6] = 0
check(not kiso.same_bits([odd1], [odd2], [0]), "... and a last odd byte that differs is found")
v1 = torch.zeros(10)
v2 = torch.zeros(10)
v2[9] = 1.0
check(not kiso.same_bits([v1[:5]], [v2[:5]], [0]), "the whole storage compared, not only the view")
check(not kiso.same_bits([torch.zeros(4)], [torch.zeros(5)], [0]), "storages of different sizes")
check(not kiso.same_bits([torch.zeros(4)], [3], [0]), "a non-tensor is never the same bits")
saved = kiso.SAME_BITS_CHUNK
kiso.SAME_BITS_CHUNK = 16
o2.copy_(o1)
check(kiso.same_bits(k1, k2, [1]), "compared in many chunks: the same bits")
o2[500] = 0.5
check(not kiso.same_bits(k1, k2, [1]), "compared in many chunks: a difference in a middle chunk")
kiso.SAME_BITS_CHUNK = saved
check(kiso._last_kept([k1, None, None]) == 0 and kiso._last_kept([]) is None, "the last run kept whole")
check(kiso._on_device(k1, []) and not kiso._on_device(k1, [1]) and not kiso._on_device([3], [0]),
      "host tensors and non-tensors are not on the device")

print("displace: %d checks passed" % passed())
