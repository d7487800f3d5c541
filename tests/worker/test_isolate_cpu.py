#!/usr/bin/env python3
"""CPU test of gate 2's harness (worker/kopt/isolate.py: op_isolate) with stand-in kernels on
host tensors, CUDA's synchronisation and stream stubbed out and host tensors counted as device
ones (so the path that keeps runs on the device is the one taken). Checked: a candidate whose
two runs give the same bytes reports the first run's statistics for both, and the second run's
outputs are freed before the original runs (only one run's output storage is alive then); a
candidate whose second run differs (a stand-in race) is compared run by run and its second run
disagrees with the reference while the first agrees; a candidate that writes its read-only input
is reported in inputs_changed; the original's outputs are the reference (a candidate equal to it
passes with zero error); every set (captured and one per seed) is answered. Under a memory cap
(a stand-in allocator counting the output-sized buffers alive, staging marking its copies): where
displacing the loaded input makes a seed set fit, it is displaced, nothing is staged, no kernel
runs above the cap and the input is refilled as loaded afterwards; where it would not make a set
fit, it is not displaced and the runs are staged; the seed sets' answers are the same either way.

Run: python3 tests/worker/test_isolate_cpu.py (a python with torch, no GPU, no Triton).
"""
import gc
import os
import sys
import types
import weakref

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from checklib import check, passed  # noqa: E402

import kopt.isolate as kiso  # noqa: E402

torch.cuda.synchronize = lambda *a, **k: None
torch.cuda.current_stream = lambda *a, **k: types.SimpleNamespace(cuda_stream=0)
kiso._on_device = lambda args, checked: all(isinstance(args[k], torch.Tensor) for k in checked)

N = 4096


class Kern:
    """A kernel as call() launches it: run(*args, stream=...) writes out = f(x)."""

    def __init__(self, f):
        self.f, self.calls, self.outs = f, 0, []

    def run(self, x, out, n, stream=None):
        self.calls += 1
        out.copy_(self.f(x, self.calls))
        self.outs.append(weakref.ref(out))


def softmax(x, _):
    return torch.softmax(x.double(), dim=-1).float()


def racy(x, call):
    y = softmax(x, call)
    if call % 2 == 0:   # every second run is off: what a race looks like from the outside
        y = y.clone()
        y[7] += 1.0
    return y


def writes_input(x, call):
    y = softmax(x, call)
    x[0] = float("nan")
    return y


class HostLayout(kiso._Layout):
    """An "out" argument kept by its layout, materialised in host memory."""

    device = "cpu"


class Ctx:
    def __init__(self, orig, cand):
        self.launches = None
        self.modules = types.SimpleNamespace(module=lambda p: {"orig": orig, "cand": cand}[p])
        self.problem = None
        self.memory = None
        self.logs = []

    def log(self, m):
        self.logs.append(m)


def isolate(orig, cand, seeds=(1000, 1001), problem=None, first=None):
    ctx = Ctx(types.SimpleNamespace(k=orig), types.SimpleNamespace(k=cand))
    ctx.problem = problem
    if first is None:
        first = problem.inputs[0] if problem is not None else torch.randn(N)
    entry = [first, HostLayout(torch.empty(N)), N]
    cache_ = kiso.LaunchCache()
    cache_.get_full = lambda c, spec: ("key", entry, None, frozenset())
    ctx.launches = cache_
    kiso.cache = lambda c: c.modules
    req = {"orig": "orig", "cand": "cand", "kernel": "k", "roles": ["in", "out", "in"],
           "launch_args": {"module": "m", "args": "a", "launch": 0}, "seeds": list(seeds),
           "tol": {"float32": [1e-5, 1e-5]}}
    return kiso.op_isolate(ctx, req), ctx


def stats(res, s, r):
    return res["sets"][s]["args"][0]["runs"][r]


def live_buffers():
    """Distinct storages of N-element tensors alive now (what the GPU would hold)."""
    gc.collect()
    return len({t.storage().data_ptr() for t in gc.get_objects() if isinstance(t, torch.Tensor) and t.numel() == N})


# the same bytes twice: one comparison, the first run's statistics for both runs
alive_at_orig = []
buffers_at_orig = []
orig = Kern(softmax)
cand = Kern(softmax)
f0 = orig.f


def orig_f(x, call):
    alive_at_orig.append(sum(1 for w in cand.outs if w() is not None))
    buffers_at_orig.append(live_buffers())
    return f0(x, call)


orig.f = orig_f
res, ctx = isolate(orig, cand)
check([s["name"] for s in res["sets"]] == ["captured", "seed1000", "seed1001"], "a set per seed after the captured one")
check(res["checked"] == [1], "the output is the checked argument")
check(all(len(s["args"][0]["runs"]) == 2 for s in res["sets"]), "two runs reported per set")
check(all(stats(res, s, 0) == stats(res, s, 1) for s in range(3)), "identical runs: identical statistics")
check(stats(res, 1, 0) is not stats(res, 1, 1), "... as separate objects")
check(all(stats(res, s, 0)["n_mismatch"] == 0 and stats(res, s, 0)["max_abs_err"] == 0.0 for s in range(3)),
      "a candidate equal to the original: no mismatch, zero error")
check(cand.calls == 6 and orig.f is orig_f and len(alive_at_orig) == 3, "two candidate runs, one original run per set")
check(alive_at_orig == [1, 1, 1], "the second run's outputs are freed before the original runs (one run alive)")
check(buffers_at_orig == [3, 4, 4],
      "while the original runs: the captured input, the set's draw, one run's and the original's outputs; "
      "no earlier set's reference (a loop variable once kept it alive): %s" % buffers_at_orig)
check(all(not s["inputs_changed"] and not s["reference_changed"] for s in res["sets"]), "nothing written that is read")

# a second run that differs: compared on its own, and it disagrees
res, _ = isolate(Kern(softmax), Kern(racy))
for s in range(3):
    a, b = stats(res, s, 0), stats(res, s, 1)
    check(a["n_mismatch"] == 0 and b["n_mismatch"] == 1 and b["first_mismatch"] == 7,
          "set %d: the racy second run compared on its own (mismatch at 7), the first passes" % s)

# a candidate that writes its read-only input
res, _ = isolate(Kern(softmax), Kern(writes_input), seeds=(5,))
check(res["sets"][0]["inputs_changed"] == [0], "a write to the read-only input is reported")

# a candidate that writes outside its output: gate 2's fences (kopt.isolate._Fence) see it
class WritesOutside(Kern):
    """Writes out = softmax(x), then one element `at` elements past out's last one (negative:
    before its first), as an unmasked block would."""

    def __init__(self, at):
        super().__init__(softmax)
        self.at = at

    def run(self, x, out, n, stream=None):
        super().run(x, out, n, stream)
        pos = out.storage_offset() + (N - 1 + self.at if self.at > 0 else self.at)
        out.as_strided((1,), (1,), pos).fill_(1.5)


res, _ = isolate(Kern(softmax), Kern(softmax), seeds=(5,))
check(all(s["outside_writes"] == [] for s in res["sets"]), "an honest candidate leaves its fences alone")
for at, what in ((1, "the element after its output"), (kiso.fence_bytes(4 * N) // 4, "the fence's last element"),
                 (-1, "the element before its output"), (-(kiso.fence_bytes(4 * N) // 4), "the fence's first element")):
    res, _ = isolate(Kern(softmax), WritesOutside(at), seeds=(5,))
    check(all(s["outside_writes"] == [1] for s in res["sets"]) and stats(res, 0, 0)["n_mismatch"] == 0,
          "a candidate writing %s, its output right: outside_writes names the output in every set" % what)
# ... and just past its read-only input: a seed set's draw has room around it inside the storage
# the input checksums cover (the captured set's input is the loaded tensor, without room: the
# stand-in writes only where the storage has it, as a GPU kernel's write there would land in
# whatever lies next)


class WritesPastInput(Kern):
    def __init__(self):
        super().__init__(softmax)

    def run(self, x, out, n, stream=None):
        super().run(x, out, n, stream)
        end = x.storage_offset() + x.numel()
        if kiso.storage(x).nbytes() >= (end + 1) * 4:
            x.as_strided((1,), (1,), end).fill_(7.0)


res, _ = isolate(Kern(softmax), WritesPastInput(), seeds=(5, 6))
check([s["inputs_changed"] for s in res["sets"]] == [[], [0], [0]],
      "a write just past a read-only input: inputs_changed in the seed sets: %s"
      % [s["inputs_changed"] for s in res["sets"]])

# ... and outside a scratch buffer its plan's launcher allocates (torch.full / torch.zeros, as the
# launcher kopt writes does: fenced while the candidate runs, torch's own functions again after)


class ScratchUser(Kern):
    """Allocates a scratch buffer as kopt's plan launcher does and writes it; with `past`, also
    the element after its end."""

    def __init__(self, past, zero=False):
        super().__init__(softmax)
        self.past, self.zero = past, zero

    def run(self, x, out, n, stream=None):
        if self.zero:
            part = torch.zeros((8, 16, ), dtype=torch.float32, device=x.device)
        else:
            part = torch.full((8, 16, ), float("nan"), dtype=torch.float32, device=x.device)
        part.fill_(2.0)
        if self.past:
            part.as_strided((1,), (1,), part.storage_offset() + part.numel()).fill_(3.0)
        super().run(x, out, n, stream)


full0, zeros0 = torch.full, torch.zeros
for past, zero in ((False, False), (False, True), (True, False), (True, True)):
    res, _ = isolate(Kern(softmax), ScratchUser(past, zero), seeds=(5,))
    check(all(s["scratch_outside_writes"] is past and s["outside_writes"] == [] for s in res["sets"]),
          "a candidate %s its %s scratch buffer: scratch_outside_writes %s"
          % ("writing past" if past else "writing only", "zeroed" if zero else "poisoned", past))
check(torch.full is full0 and torch.zeros is zeros0, "torch.full and torch.zeros are torch's again after gate 2")
res, _ = isolate(Kern(softmax), Kern(softmax), seeds=(5,))
check(all(s["scratch_outside_writes"] is False for s in res["sets"]), "no scratch: nothing written outside one")

# the fences are drawn per set from a secret seed and redrawn to check: the same bytes in a
# set's runs (same_bits still frees an identical second run), other bytes in another set
fa = kiso._Fence(4 * N, "cpu", 12345)
fb = kiso._Fence(4 * N, "cpu", 12345)
fc = kiso._Fence(4 * N, "cpu", 12346)
check(all(torch.equal(a, b) for a, b in zip(fa._parts(), fb._parts())) and not torch.equal(fa.raw[:fa.r], fc.raw[:fc.r]), "fences: same seed, same bytes")
check(fa.r % 512 == 0 and kiso.fence_bytes(1) == kiso.FENCE_MIN and kiso.fence_bytes(1 << 30) == kiso.FENCE_MAX,
      "fence sizes: multiples of 512 between FENCE_MIN and FENCE_MAX")
fa.raw[fa.r + 4 * N:].view(-1)[-1] ^= 1
check(fa.broken() and not fb.broken(), "one flipped bit of the last fence byte breaks it")
y, f = HostLayout(torch.empty(3, 5).t()).new(7)
check(y.shape == (5, 3) and y.stride() == (1, 5) and y.data_ptr() == f.raw.data_ptr() + f.r,
      "a fenced output keeps its layout, right after the first fence")

# ... and when that input is a weight of the model, the fatal state_changed (it cannot be drawn
# again, and would stay written for every later step)
from kopt.errors import OpError  # noqa: E402
from kopt.problem import Problem  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.randn(N))


net = Net()
wprob = Problem("/nowhere/p.py", 0, None, net, [torch.randn(N)])
res, _ = isolate(Kern(softmax), Kern(softmax), seeds=(5,), problem=wprob, first=net.p.detach())
check(all(not s["inputs_changed"] for s in res["sets"]), "a weight read and left alone: nothing changed")
try:
    isolate(Kern(softmax), Kern(writes_input), seeds=(5,), problem=wprob, first=net.p.detach())
    check(False, "a candidate that writes a weight in isolation fails")
except OpError as e:
    check(e.code == "state_changed" and e.fatal and "a candidate kernel run in isolation wrote to the model's "
          "parameters or buffers (p)" in str(e), "the fatal state_changed: %s" % e)

check(kiso._run_bytes([torch.randn(N), HostLayout(torch.empty(N)), N], ["in", "out", "in"])
      == 4 * N + 2 * kiso.fence_bytes(4 * N), "a run's bytes count its output's fences")

# ---------------------------------------------------------------- under a memory cap
# (the stand-in allocator below counts output-sized buffers, not bytes: fences of no bytes here)
kiso.fence_bytes = lambda nbytes: 0
# A stand-in allocator: "device" memory is the float32 N-element storages alive that were not
# staged (staging copies and marks them); the cap is counted in such buffers (U bytes each). The
# loaded input is a real kopt.problem.Problem's, so displacement empties and refills it.
U = N * 4
CAP = [None]
PEAK = [0]
OTHERS = [0]   # buffers of this test's own (earlier checks' leftovers, the copy to compare with)


def device_bytes():
    gc.collect()
    seen = set()
    for t in gc.get_objects():
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.numel() == N \
                and not getattr(t, "_staged", False) and t.storage().size() > 0:
            seen.add(t.storage().data_ptr())
    return len(seen) * U - OTHERS[0]


def to_host(ctx, args, which, what):
    ctx.log(what + ": staged")
    out = []
    for k, t in enumerate(args):
        if k in which and isinstance(t, torch.Tensor):
            t = t.clone()
            t._staged = True
        out.append(t)
    return out


class CappedKern(Kern):
    def run(self, x, out, n, stream=None):
        PEAK[0] = max(PEAK[0], device_bytes())
        super().run(x, out, n)


kiso._to_host = to_host
kiso._on_device = lambda args, checked: all(isinstance(args[k], torch.Tensor) and not getattr(args[k], "_staged", False)
                                            for k in checked)
kiso.over_cap = lambda ctx, extra: CAP[0] is not None and device_bytes() + extra > CAP[0]
kiso.free_bytes = lambda: 1 << 40
free_res, _ = isolate(Kern(softmax), Kern(softmax), seeds=(3, 4))


def capped(cap_units):
    CAP[0] = cap_units * U
    PEAK[0] = 0
    loaded = torch.randn(N)
    prob = Problem("/nowhere/p.py", 0, None, None, [loaded])
    want = loaded.clone()
    OTHERS[0] = 0
    OTHERS[0] = device_bytes() - U   # all but the loaded input
    res, ctx = isolate(CappedKern(softmax), CappedKern(softmax), seeds=(3, 4), problem=prob)
    CAP[0] = None
    restored = (not prob.displaced and loaded.storage().size() == N and torch.equal(loaded, want))
    return res, ctx, restored


# room for the loaded input, a draw and two runs' outputs less one: displacing the loaded input
# makes a seed set fit (draw, run, second run or reference), so nothing is staged
res, ctx, restored = capped(3.5)
logs = "\n".join(ctx.logs)
check("displaced" in logs and "staged" not in logs,
      "cap 3.5 buffers: the loaded input displaced for the seed sets, nothing staged:\n" + logs)
check(PEAK[0] <= 3.5 * U, "cap 3.5 buffers: at most %.1f buffers while a kernel runs" % (PEAK[0] / U))
check(restored, "the loaded input refilled as loaded after the seed sets")
check(res["sets"][1:] == free_res["sets"][1:], "the seed sets answered as without a cap")
# too little room even with the loaded input displaced: not displaced, the runs staged instead
res, ctx, restored = capped(2.5)
logs = "\n".join(ctx.logs)
check("displaced" not in logs and "staged" in logs,
      "cap 2.5 buffers: no displacement that would not make a set fit; runs staged:\n" + logs)
check(restored and res["sets"][1:] == free_res["sets"][1:], "cap 2.5 buffers: the same answers, the loaded input as loaded")

# the poison a run's outputs get (kopt.poison): NaN in the captured set, then the kinds in turn.
# A candidate that reads its output buffer first and computes only where it finds NaN -- right
# under a NaN poison, garbage in a user's recycled memory -- disagrees in the sets after it
class Detector(Kern):
    def run(self, x, out, n, stream=None):
        self.calls += 1
        if bool(torch.isnan(out).all()):
            out.copy_(softmax(x, self.calls))


res, _ = isolate(Kern(softmax), Detector(softmax), seeds=(5, 6))
check(stats(res, 0, 0)["n_mismatch"] == 0 and all(stats(res, s, 0)["n_mismatch"] > 0.9 * N for s in (1, 2)),
      "the poison detector passes the captured set (NaN) and fails the seed sets (bits, normal): %s"
      % [stats(res, s, 0)["n_mismatch"] for s in range(3)])


# an original that leaves part of its output to another kernel (a shared buffer), and a candidate
# that does the same: every set stays on NaN, where the unwritten part compares equal and no random
# poison enters the reference's scale
def half(x, out):
    out[: N // 2].copy_(softmax(x, 0)[: N // 2])


class Half(Kern):
    def run(self, x, out, n, stream=None):
        self.calls += 1
        half(x, out)


seen = []
real_fill = kiso.fill
kiso.fill = lambda t, kind, seed=None: (kind != "nan" and seen.append(kind)) or real_fill(t, kind, seed)
res, _ = isolate(Half(None), Half(None), seeds=(5, 6))
check(seen == [] and all(stats(res, s, 0)["n_mismatch"] == 0 and stats(res, s, 0)["ref_abs_max"] <= 1.0
                         for s in range(3)), "a partly written output: NaN in every set, all agree: %s %s"
      % (seen, [stats(res, s, 0)["n_mismatch"] for s in range(3)]))
seen.clear()
res, _ = isolate(Kern(softmax), Kern(softmax), seeds=(5, 6))
check(seen == ["bits", "bits", "bits", "normal", "normal", "normal"],
      "a fully written output: random poison after the captured set, the same kind for both runs and "
      "the original's: %s" % seen)
kiso.fill = real_fill

print("isolate cpu: %d checks passed" % passed())
