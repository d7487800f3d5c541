#!/usr/bin/env python3
"""CPU tests of the worker's tensor code (needs torch, no GPU): the comparison statistics the
gates decide on (kopt.compare: the element rule of src/gates/tensor.h), the storage checksum,
outputs kept and compared by name (kopt.kept), and call() arguments rebuilt from their sources
on the model's own tensors (kopt.modules) with the writes of a module undone, and the memory
phases (kopt.memory: "eager" is a phase; Memory.within switches for part of an op and back,
crediting that part's peak to "op/phase" -- on a stand-in allocator, as CPU torch has none).

Run: python3 tests/worker/test_tensors_cpu.py (a python with torch; CI uses Debian's
python3-torch). Exits non-zero on the first failed check, naming it.
"""
import math
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))

import torch  # noqa: E402

import kopt.compare as C  # noqa: E402
from kopt import kept, modules  # noqa: E402

checks = 0


def check(cond, what):
    global checks
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)
    checks += 1


def ramp(n=32):
    return torch.tensor([(i - 10) * 0.5 for i in range(n)], dtype=torch.float32).reshape(4, 8)


# ---------------------------------------------------------------- the element rule
r = ramp()
s = C.compare_stats(r, r.clone(), 1e-4, 1e-4)
check(s["n_mismatch"] == 0 and s["max_abs_err"] == 0 and s["first_mismatch"] is None, "identical tensors match")
check(s["dtype"] == "float32" and s["shape"] == [4, 8] and s["numel"] == 32, "statistics describe the reference")

g = r.clone()
g[1, 3] += 5e-5           # |ref| = 0.5: inside 1e-4 + 1e-4 * 0.5
check(C.compare_stats(r, g, 1e-4, 1e-4)["n_mismatch"] == 0, "a difference inside atol + rtol*|ref| matches")
g[1, 3] += 1e-4           # now 1.5e-4 > 1.5e-4? use a clear excess
g[1, 3] = r[1, 3] + 2e-4
s = C.compare_stats(r, g, 1e-4, 1e-4)
check(s["n_mismatch"] == 1 and s["first_mismatch"] == 11 and s["max_abs_index"] == 11, "one element off is located (flat 11)")
check(abs(s["max_abs_err"] - 2e-4) < 1e-6 and s["ref_at_max_abs"] == float(r[1, 3]), "max abs err and the values there")

big = torch.full((4,), 1000.0)
gb = big.clone()
gb[2] += 0.09             # rtol * 1000 = 0.1: inside
check(C.compare_stats(big, gb, 1e-4, 1e-4)["n_mismatch"] == 0, "relative tolerance scales with |ref|")

a = torch.tensor([1.0, float("nan"), float("inf"), float("-inf"), 2.0])
b = torch.tensor([1.0, float("nan"), float("inf"), float("inf"), float("nan")])
s = C.compare_stats(a, b, 1e-4, 1e-4)
check(s["n_mismatch"] == 2 and s["n_nonfinite_mismatch"] == 2, "NaN/Inf placement: -inf vs +inf and 2 vs nan differ")
check(s["first_nonfinite_mismatch"] == 3 and s["got_at_first"] == "inf", "first non-finite mismatch located, inf as a string")

tail = r.clone().reshape(-1)
tail[28:] = float("nan")  # an unwritten tail left as the poison
s = C.compare_stats(r.reshape(-1), tail, 1e-4, 1e-4)
check(s["n_mismatch"] == 4 and s["n_nonfinite_mismatch"] == 4 and s["first_mismatch"] == 28, "a NaN-poisoned tail is caught")

s = C.compare_stats(r, r.reshape(8, 4), 1e-4, 1e-4)
check(s["shape_mismatch"] and s["got_shape"] == [8, 4], "a shape mismatch is a verdict with both shapes")

h = r.to(torch.bfloat16)
s = C.compare_stats(r, h, 1e-2, 1e-2)
check(s["n_mismatch"] == 0 and s["got_dtype"] == "bfloat16", "compares across dtypes (in float64)")
bi = torch.tensor([True, False, True])
s = C.compare_stats(bi, torch.tensor([True, True, True]), 0, 0)
check(s["n_mismatch"] == 1 and s["first_mismatch"] == 1, "bool outputs compare exactly")
ii = torch.tensor([3, 5, 7], dtype=torch.int64)
check(C.compare_stats(ii, ii.clone(), 0, 0)["n_mismatch"] == 0, "int outputs compare exactly")

# chunking: the statistics do not depend on the chunk size
x = torch.randn(1000, dtype=torch.float64)
y = x.clone()
y[[3, 517, 999]] += torch.tensor([1.0, -3.0, 0.5], dtype=torch.float64)
y[700] = float("nan")
full = C.compare_stats(x, y, 1e-4, 1e-4)
old = C.CHUNK
C.CHUNK = 7
small = C.compare_stats(x, y, 1e-4, 1e-4)
C.CHUNK = old
for k in ("n_mismatch", "n_nonfinite_mismatch", "first_mismatch", "first_nonfinite_mismatch", "max_abs_index",
          "max_rel_index"):
    check(full[k] == small[k], "chunked statistics agree on " + k)
check(full["n_mismatch"] == 4 and full["max_abs_index"] == 517, "several mismatches across chunks")
check(math.isclose(full["sum_sq_diff"], small["sum_sq_diff"], rel_tol=1e-12), "norm sums agree across chunkings")

nc = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()      # not contiguous
check(C.compare_stats(nc, nc.contiguous(), 0, 0)["n_mismatch"] == 0, "non-contiguous tensors compare in logical order")

# ---------------------------------------------------------------- checksums
t = torch.arange(100, dtype=torch.float32)
c0 = C.checksum(t)
check(C.checksum(t.clone()) == c0, "equal contents, equal checksums")
u = t.clone()
u[40] = 40.5
check(C.checksum(u) != c0, "one changed word changes the checksum")
w = t.clone()
w[[1, 2]] = w[[2, 1]]
check(C.checksum(w) != c0, "swapped words change the checksum (position-sensitive)")
view = t[10:20]
check(C.checksum(view) == c0, "a view is checksummed over its whole storage")
odd = torch.zeros(3, dtype=torch.uint8)
check(C.checksum(odd) != C.checksum(torch.tensor([0, 0, 1], dtype=torch.uint8)), "odd-sized storages are hashed too")
check(C.checksums([t, 3, None])[1:] == [None, None], "non-tensors have no checksum")

# ---------------------------------------------------------------- kept outputs
ctx = types.SimpleNamespace(kept={}, run_need=0)
kept.keep(ctx, "ref", (r, 7))
kept.keep(ctx, "got", [g, 7])
res = kept.op_compare(ctx, {"ref": "ref", "got": "got", "tols": [[1e-4, 1e-4], [0, 0]]})
check(res["outputs"][0]["n_mismatch"] == 1 and res["outputs"][1] == {"value_ref": 7, "value_got": 7},
      "compare: a tensor's statistics and a value pair")
kept.keep(ctx, "got", [g])
check(kept.op_compare(ctx, {"ref": "ref", "got": "got", "atol": 0, "rtol": 0})["count_mismatch"], "output counts differ")
kept.keep(ctx, "low", [r], low_memory=True)
check(ctx.kept["low"].staged and ctx.kept["low"].items[0].device.type == "cpu", "low_memory stages kept outputs on the host")
check(kept.op_drop(ctx, {"names": ["ref", "nope"]})["kept"] == ["got", "low"], "drop frees names, ignores unknown ones")
try:
    kept.op_compare(ctx, {"ref": "ref", "got": "got", "atol": 0, "rtol": 0})
    check(False, "comparing a dropped name is an error")
except Exception as e:  # BadRequest
    check("nothing is kept" in str(e), "comparing a dropped name names it")

# ---------------------------------------------------------------- arguments from sources


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))


model = M()
inputs = [torch.randn(2, 4), torch.randn(2, 4)]
problem = types.SimpleNamespace(model=model, inputs=inputs, seed=0,
                                draw_inputs=lambda seed: [torch.full((2, 4), float(seed)), torch.zeros(2, 4)])
saved = [None, None, None, torch.tensor([5.0]), None]
srcs = ["param:fc.weight", "buffer:scale", "input:1", "const", "input:0"]
args = modules.rebuild(problem, saved, srcs)
check(args[0].data_ptr() == model.fc.weight.data_ptr() and args[1] is model.scale, "weights are the model's own, not copies")
check(args[2] is inputs[1] and args[4] is inputs[0] and args[3] is saved[3], "inputs are the loaded ones; constants as saved")
fresh = modules.rebuild(problem, saved, srcs, seed=3)
check(float(fresh[4][0, 0]) == 3.0, "with a seed the inputs are drawn again")
try:
    modules.rebuild(problem, saved, ["param:nope"] + srcs[1:])
    check(False, "a source naming nothing the model has is an error")
except Exception as e:
    check("does not have" in str(e), "a missing source is named")

# a module that writes to an input: restored in place, and cloned on later runs
ctx2 = types.SimpleNamespace(problem=types.SimpleNamespace(
    model=model, inputs=[torch.ones(3)], seed=0, draw_inputs=lambda seed: [torch.ones(3)]), modules=None)
mc = modules.cache(ctx2)
mod = types.SimpleNamespace(call=lambda a: a[0].add_(1.0).clone())
shared = [ctx2.problem.inputs[0]]
orig_sync = torch.cuda.synchronize
torch.cuda.synchronize = lambda: None   # CPU only
try:
    out1 = mc.call_module(ctx2, "/m.py", mod, shared)
    check(float(out1[0]) == 2.0 and float(ctx2.problem.inputs[0][0]) == 1.0, "a module's write to a loaded input is undone")
    mc.call_module(ctx2, "/m.py", mod, shared)
    check(float(ctx2.problem.inputs[0][0]) == 1.0, "later runs of a writing module get private copies")
    evil = types.SimpleNamespace(call=lambda a: a[0].mul_(0))
    w_args = [model.fc.weight.detach()]
    try:
        mc.call_module(ctx2, "/evil.py", evil, w_args)
        check(False, "a module that writes to the weights is an error")
    except Exception as e:
        check(getattr(e, "code", "") == "state_changed" and getattr(e, "fatal", False), "writing the weights is fatal")
finally:
    torch.cuda.synchronize = orig_sync

# ---------------------------------------------------------------- memory phases (kopt.memory)
from kopt.memory import PHASES, Memory  # noqa: E402

check(PHASES == ("main", "eager", "f64", "ceilings"), "the memory phases: %r" % (PHASES,))
m = Memory()
m.enter("eager")
check(m.phase == "eager", "eager is a memory phase")
m.enter("nope")
check(m.phase == "main", "an unknown phase is main")
check(set(m.report()["peak_reserved"]) == set(PHASES), "resources reports every phase (no CUDA: zeros)")
m.begin_op("load")
with m.within("eager"):
    check(m.phase == "eager" and m.cur_op == "load/eager", "within: the eager phase, credited to load/eager")
check(m.phase == "main" and m.cur_op == "load", "within restores the phase and the op")
try:
    with m.within("eager"):
        raise ValueError("the model raised")
except ValueError:
    pass
check(m.phase == "main" and m.cur_op == "load", "within restores them when the block raises")
m.end_op()
check(m.op is None and m.cur_op is None, "end_op forgets the op")
m.enter("f64")
m.begin_op("run")
with m.within("eager"):
    check(m.cur_op == "run/eager", "within from another phase")
check(m.phase == "f64" and m.cur_op == "run/f64", "back to f64")
m.end_op()

# the accounting itself, on a stand-in caching allocator: `load` allocates the model (main),
# runs the eager forward in the eager phase (big intermediates, freed; its output kept), then
# allocates a little more in main: the intermediates set the eager peak only
alloc = {"reserved": 0, "peak": 0}


def grow(n):
    alloc["reserved"] += n
    alloc["peak"] = max(alloc["peak"], alloc["reserved"])


saved = {k: getattr(torch.cuda, k) for k in ("max_memory_reserved", "reset_peak_memory_stats", "empty_cache")}
torch.cuda.max_memory_reserved = lambda: alloc["peak"]
torch.cuda.reset_peak_memory_stats = lambda: alloc.update(peak=alloc["reserved"])
torch.cuda.empty_cache = lambda: None
try:
    m = Memory()
    m._cuda = lambda: True
    m.begin_op("load")
    grow(100)                       # model and inputs
    with m.within("eager"):
        grow(1000)                  # the eager forward's intermediates ...
        grow(-900)                  # ... freed; 100 of output stay
    grow(10)
    m.end_op()
    check(m.peaks["main"] == 210 and m.peaks["eager"] == 1100, "peaks per phase: %r" % (m.peaks,))
    check(m.by_op == {"load": 210, "load/eager": 1100}, "peaks per op: %r" % (m.by_op,))
    m.enter("eager")
    m.begin_op("time")
    grow(2000)
    m.end_op()
    m.enter("main")
    check(m.peaks["main"] == 210 and m.by_op["time/eager"] == 2210, "a request in the eager phase: %r" % (m.by_op,))
finally:
    for k, f in saved.items():
        setattr(torch.cuda, k, f)

print("worker tensors (cpu): %d checks passed" % checks)
