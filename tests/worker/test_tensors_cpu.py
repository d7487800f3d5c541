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

from checklib import check, passed  # noqa: E402


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

# ---------------------------------------------------------------- the relative-error count
# gate 3's count rule: elements off by more than thr * |ref| and above a floor (floor_abs, or
# floor_rel * max|ref| found in a first pass); a chunk smaller than the tensor exercises both passes
ref = torch.tensor([5.0, -4.0, 0.003, -0.002, 0.5, 1e-9, 0.0, float("nan")], dtype=torch.float64)
got = ref.clone().float()
got[2] = 0.0              # a flushed small output: error 0.003, 100% of its value
got[3] = -0.0021          # 5% off: under thr 1/16
got[4] = 0.5 + 0.04       # 8% off: over thr
got[5] = 0.0              # 100% off but under the floor 1e-6 * 5
got[6] = 1e-7             # ref 0: error 1e-7 under the floor
s = C.compare_stats(ref, got, 0.0, 0.0, chunk=3, rel_err=[1 / 16, 1e-8, 1e-6])
check(s["n_rel_err"] == 2, "count of elements off by > 1/16 of their value above the floor (got %r)" % s.get("n_rel_err"))
check(abs(s["rel_err_floor"] - 5e-6) < 1e-12 and s["rel_err_thr"] == 1 / 16, "the floor is floor_rel * max|ref| (5e-6)")
s = C.compare_stats(ref, got, 0.0, 0.0, chunk=3, rel_err=[1 / 16, 0.1, 0.0])
check(s["n_rel_err"] == 0, "an absolute floor of 0.1 hides errors of 0.003 and 0.04")
check("n_rel_err" not in C.compare_stats(ref, got, 0.0, 0.0), "no count unless asked")
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

# count_nonfinite: chunk by chunk (the timing step's probe and gate 2's NaN test), any layout
t = torch.randn(40, 30)
t[3, 4], t[17, 29], t[39, 0] = float("nan"), float("inf"), -float("inf")
for chunk in (1, 7, 1200, 5000):
    check(C.count_nonfinite(t, chunk) == 3 and C.count_nonfinite(t, chunk, nan_only=True) == 1,
          "count_nonfinite in chunks of %d: NaN and both infinities, NaN alone" % chunk)
check(C.count_nonfinite(t.t(), 11) == 3 and C.count_nonfinite(t[:, 1::2], 13) == 1,
      "count_nonfinite of a transposed and a strided view")
t3 = torch.randn(6, 5, 40)
t3[0, 1, 2], t3[5, 4, 39], t3[3, 0, 0] = float("nan"), float("inf"), float("nan")
for chunk in (7, 30, 200, 10000):   # rows of 40 and slices of 200 longer and shorter than a chunk
    check(C.count_nonfinite(t3.transpose(1, 2), chunk) == 3 and C.count_nonfinite(t3.transpose(0, 2), chunk, True) == 2,
          "count_nonfinite of a non-contiguous 3-D view in chunks of %d" % chunk)
check(C.count_nonfinite(torch.zeros(0), 4) == 0 and C.count_nonfinite(torch.ones(5, dtype=torch.float16), 2) == 0,
      "count_nonfinite of an empty and a finite half tensor")

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

# keyed: another key, another sum; the process's key is the same for the whole process
k1, k2 = C.new_key(), C.new_key()
check(C.checksum(t, key=k1) != C.checksum(t, key=k2), "the sum depends on the key")
check(C.checksum(t, key=k1) == C.checksum(t.clone(), key=k1), "one key: equal contents, equal sums")
check(C.checksum(t) == c0, "the process key stays")
# the positions' high 32 bits take part (storages past 16 GiB of words)
ww = torch.arange(50, dtype=torch.int32)
check(C._mix_torch(ww, 5, k1) != C._mix_torch(ww, 5 + (1 << 32), k1), "position p and p + 2^32 hash differently")
# chunked sums are the one-pass sum (the chunk's offset is its words' position)
big = torch.randn(1000)
one_pass = C.checksum(big, key=k1)
saved, C.HASH_CHUNK = C.HASH_CHUNK, 7
check(C.checksum(big, key=k1) == one_pass, "chunks of 7 words sum to the one-pass checksum")
C.HASH_CHUNK = saved

# The unkeyed sum this checksum replaced, sum over words of fmix'(w*M1 + p*M2 + c): moving two
# words to each other's place, each shifted by (p - q)*M2/M1, keeps the multiset of mix inputs,
# so a kernel that knows the function could change an input and keep its sum. The keyed sum is
# not kept by that change (nor, without the key, by any change but with probability 2^-64).
M1, M2, MASK = 0x9E3779B1, 0x85EBCA77, 0xFFFFFFFF


def unkeyed(words):
    w = words.to(torch.int64) & MASK
    pos = torch.arange(w.numel(), dtype=torch.int64)
    h = (w * M1 + pos * M2 + 0x165667B1) & MASK
    h = h ^ (h >> 15)
    h = (h * 0x2C1B3C6D) & MASK
    return int((h ^ (h >> 12)).sum())


orig = torch.randn(64)
ow = orig.view(torch.int32)
inv_m1 = pow(M1, -1, 1 << 32)
pp, qq = 3, 41
a_word, b_word = int(ow[pp]) & MASK, int(ow[qq]) & MASK
forged_words = (ow.to(torch.int64) & MASK).tolist()
forged_words[qq] = (a_word + (pp - qq) * M2 * inv_m1) & MASK
forged_words[pp] = (b_word + (qq - pp) * M2 * inv_m1) & MASK
forged = torch.tensor([x - (1 << 32) if x >= 1 << 31 else x for x in forged_words], dtype=torch.int32)
forged = forged.view(torch.float32)
check(not torch.equal(forged, orig), "the forged input differs from the original")
check(unkeyed(forged.view(torch.int32)) == unkeyed(ow), "the forgery keeps the former unkeyed sum")
check(C.checksum(forged) != C.checksum(orig), "the forgery changes the keyed checksum")

# ---------------------------------------------------------------- kept outputs
ctx = types.SimpleNamespace(kept={}, run_need=0, log=[].append)
kept.keep(ctx, "ref", (r, 7))
kept.keep(ctx, "got", [g, 7])
res = kept.op_compare(ctx, {"ref": "ref", "got": "got", "tols": [[1e-4, 1e-4], [0, 0]]})
check(res["outputs"][0]["n_mismatch"] == 1 and res["outputs"][1] == {"value_ref": 7, "value_got": 7},
      "compare: a tensor's statistics and a value pair")
# rel_err through the op: the reference's max |x| is found once and remembered on the kept entry
# (the candidate's and the baseline's comparisons against one float64 reference share it)
kept.keep(ctx, "ref64", [ref])
kept.keep(ctx, "opt", [got])
req = {"ref": "ref64", "got": "opt", "atol": 0, "rtol": 0, "rel_err": [1 / 16, 1e-8, 1e-6]}
st = kept.op_compare(ctx, dict(req))["outputs"][0]
check(st["n_rel_err"] == 2 and abs(st["rel_err_floor"] - 5e-6) < 1e-12, "op_compare passes rel_err (%r)" % st.get("n_rel_err"))
check(ctx.kept["ref64"].abs_max == {0: 5.0}, "the reference's max |x| is remembered (%r)" % ctx.kept["ref64"].abs_max)
ctx.kept["ref64"].abs_max[0] = 1e6   # a remembered value is used, not found again
check(kept.op_compare(ctx, dict(req))["outputs"][0]["rel_err_floor"] == 1.0, "the remembered maximum is used")
for bad in ([1, 2], [-1, 0, 0], ["x", 0, 0], [True, 0, 0]):
    try:
        kept.op_compare(ctx, dict(req, rel_err=bad))
        check(False, "rel_err %r is refused" % (bad,))
    except Exception as e:  # BadRequest
        check("rel_err must be" in str(e), "rel_err %r is refused with the rule" % (bad,))
kept.op_drop(ctx, {"names": ["ref64", "opt"]})
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

# a kept reference written after it was kept (what a candidate's kernel could do to the memory of
# the worker it runs in): compare says so and compares nothing; its content sum does not depend
# on where or how the reference is laid out (a view, a transpose, staged to the host)
base = torch.randn(6, 8)
views = {"whole": base.clone(), "view with an offset": base.clone()[2:], "transposed": base.clone().t()}
for what, x in views.items():
    kept.keep(ctx, "r", [x])
    kept.keep(ctx, "g", [x.clone()])
    res = kept.op_compare(ctx, {"ref": "r", "got": "g", "atol": 0, "rtol": 0})
    check(res["reference_changed"] is False and res["outputs"][0]["n_mismatch"] == 0, "%s: unchanged, compared" % what)
    check(kept.content_sum(x) == kept.content_sum(x.contiguous().clone()), "%s: the sum is the contents'" % what)
    kept.stage(ctx, "r")
    check(not kept.op_compare(ctx, {"ref": "r", "got": "g", "atol": 0, "rtol": 0})["reference_changed"],
          "%s: staged to the host, the same sum" % what)
    kept.keep(ctx, "r2", [x], low_memory=True)   # summed where it was, then staged
    check(not kept.op_compare(ctx, {"ref": "r2", "got": "g", "atol": 0, "rtol": 0})["reference_changed"],
          "%s: staged as it is kept, the same sum" % what)
    kept.op_drop(ctx, {"names": ["r2"]})
    ctx.kept["r"].items[0][1, 1] += 1.0   # the tampering, after the keep
    res = kept.op_compare(ctx, {"ref": "r", "got": "g", "atol": 0, "rtol": 0})
    check(res["reference_changed"] is True and res["outputs"] == [] and res["changed"] == ["r"],
          "%s: a written reference is seen" % what)
# the other side too (a baseline's outputs kept before a candidate ran are judged with)
kept.keep(ctx, "r", [base.clone()])
kept.keep(ctx, "g", [base.clone()])
ctx.kept["g"].items[0][0, 0] = float("nan")
res = kept.op_compare(ctx, {"ref": "r", "got": "g", "atol": 0, "rtol": 0})
check(res["reference_changed"] is True and res["changed"] == ["g"], "a written kept output is seen (%r)" % res)
kept.op_drop(ctx, {"names": ["r", "g"]})

# the content sum taken in the comparison's own pass (ChunkSum): the same value as checksum for
# every dtype and chunk size it takes; refused where a chunk would split a 32-bit word or the
# tensor is not its whole storage
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.uint8):
    x = (torch.randn(4 * 37) * 50).to(dt)
    for ch in (1, 3, 4, 8, 64, 1 << 23):
        if not C.ChunkSum.fusable(x, ch):
            check(ch * x.element_size() % 4 != 0, "%s, chunk %d: fusable unless a chunk splits a word" % (dt, ch))
            continue
        cs = C.ChunkSum(x)
        flat = x.reshape(-1)
        for lo in range(0, flat.numel(), ch):
            cs.add(flat[lo:lo + ch], lo)
        check(cs.complete and cs.value() == C.checksum(x), "%s, chunk %d: the chunks' sum is checksum's" % (dt, ch))
check(not C.ChunkSum.fusable(torch.randn(6, 8)[2:]) and not C.ChunkSum.fusable(torch.randn(6, 8).t())
      and not C.ChunkSum.fusable(torch.zeros(3, dtype=torch.uint8)) and not C.ChunkSum.fusable(5),
      "a view with an offset, a transpose, a storage of 3 bytes, a non-tensor: not fusable")
# through op_compare, in chunks of 4 elements: the statistics are those of the separate pass, a
# compact tensor's sum is not taken before the comparison, and a change to the first or the last
# chunk of a kept reference (or of the other side) is still seen
real_chunk, real_sum = kept.compare_chunk, kept.content_sum
kept.compare_chunk = lambda c, n: 4
separate = []
kept.content_sum = lambda x: separate.append(1) or real_sum(x)
refv, gotv = torch.randn(10, 6, dtype=torch.float64), torch.randn(10, 6)
kept.keep(ctx, "r", [refv.clone(), torch.randn(3, 5).t(), 4])
kept.keep(ctx, "g", [gotv.clone(), torch.randn(3, 5).t(), 4])
kept.stage(ctx, "r")
req = {"ref": "r", "got": "g", "atol": 1e-3, "rtol": 1e-3, "rel_err": [0.1, 0, 1e-3]}
separate.clear()
fused_res = kept.op_compare(ctx, dict(req))
n_sep = len(separate)
fusable = C.ChunkSum.fusable
C.ChunkSum.fusable = staticmethod(lambda t, chunk=0: False)
plain_res = kept.op_compare(ctx, dict(req))
C.ChunkSum.fusable = fusable
check(fused_res == plain_res and fused_res["reference_changed"] is False and fused_res["outputs"][0]["n_mismatch"] > 0,
      "the fused pass gives the separate pass's statistics")
check(n_sep == 4, "only the transposed outputs and the values were summed before the comparison: %d" % n_sep)
for side, at in (("r", (0, 0)), ("r", (9, 5)), ("g", (9, 5))):
    t = ctx.kept[side].items[0]
    old_v = float(t[at])
    t[at] = old_v + 0.5
    res = kept.op_compare(ctx, dict(req))
    check(res["reference_changed"] is True and res["outputs"] == [] and res["changed"] == [side],
          "a change to %s at %s is seen in the fused pass" % (side, at))
    t[at] = old_v
check(kept.op_compare(ctx, dict(req)) == plain_res, "put back: the same statistics again")
kept.compare_chunk, kept.content_sum = real_chunk, real_sum
kept.op_drop(ctx, {"names": ["r", "g"]})
# a float64 output kept while on the GPU (stood in for: _on_gpu) has its largest magnitude found
# then, before it is staged: a comparison with rel_err does not look for it again
real_on_gpu, real_abs_max = kept._on_gpu, kept.abs_max
kept._on_gpu = lambda x: True
r64 = torch.tensor([1.0, -7.5, float("inf"), 2.0], dtype=torch.float64)
kept.keep(ctx, "r", [r64.clone(), torch.ones(4)], low_memory=True)
kept._on_gpu = real_on_gpu
check(ctx.kept["r"].staged and ctx.kept["r"].abs_max == {0: 7.5}, "float64 only, found before staging: %r"
      % ctx.kept["r"].abs_max)
looked = []
kept.abs_max = lambda *a: looked.append(1) or real_abs_max(*a)
kept.keep(ctx, "g", [r64.clone(), torch.ones(4)])
res = kept.op_compare(ctx, {"ref": "r", "got": "g", "tols": [[0, 0], [0, 0]], "rel_err": [0.1, 0, 1e-3]})
check(looked == [1] and res["outputs"][0]["rel_err_floor"] == 7.5e-3, "only the float32 output's maximum is found at "
      "the comparison (%d), the float64 one's was kept: %r" % (len(looked), res["outputs"][0].get("rel_err_floor")))
kept.abs_max = real_abs_max
kept.op_drop(ctx, {"names": ["r", "g"]})

# ---------------------------------------------------------------- poison (kopt.poison)
from kopt import poison as P  # noqa: E402
check(P.KINDS == ("nan", "bits", "normal") and [P.kind_at(i) for i in range(4)] == ["nan", "bits", "normal", "nan"],
      "the kinds in turn")
for dt in (torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.uint8, torch.bool):
    a, b, c = (torch.zeros(1000, dtype=dt) for _ in range(3))
    P.fill(a, "nan")
    if dt.is_floating_point:
        check(bool(torch.isnan(a).all()), "%s: nan fills NaN" % dt)
    for kind in ("bits", "normal"):
        P.fill(a, kind, 7)
        P.fill(b, kind, 7)
        P.fill(c, kind, 8)
        check(torch.equal(a.view(torch.uint8) if dt != torch.bool else a, b.view(torch.uint8) if dt != torch.bool else b),
              "%s %s: one seed, the same bytes" % (dt, kind))
        differ = (a != c).sum().item() if dt != torch.bool else (a != c).sum().item()
        check(differ > (300 if dt == torch.bool else 900), "%s %s: another seed, other values (%d of 1000 differ)"
              % (dt, kind, differ))
        if kind == "normal" and dt.is_floating_point:
            check(bool(torch.isfinite(a).all()) and float(a.abs().max()) < 10, "%s normal: finite N(0,1) values" % dt)
nc = torch.zeros(40, 30).t()
P.fill(nc, "bits", 3)
check(bool(torch.isfinite(nc).all()) and (nc != 0).sum().item() > 1100, "a non-contiguous tensor: normal values")
P.fill(torch.zeros(0), "bits")
try:
    P.fill(torch.zeros(3), "zeros")
    check(False, "an unknown kind is refused")
except ValueError:
    check(True, "an unknown kind is refused")
g0 = torch.random.get_rng_state()
P.fill(torch.zeros(100), "normal")
check(torch.equal(torch.random.get_rng_state(), g0), "the global generator is not drawn from")

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
from kopt.problem import Problem  # noqa: E402
problem2 = Problem("/nowhere/p.py", 0, None, model, [torch.ones(3)])
problem2.draw_inputs = lambda seed: [torch.ones(3)]
ctx2 = types.SimpleNamespace(problem=problem2, modules=None)
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

check(PHASES == ("main", "eager", "f64", "ceilings", "inputs"), "the memory phases: %r" % (PHASES,))
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

# a seed's draw (the user's get_inputs) runs in the "inputs" phase, credited to "op/inputs"
import kopt.problem as kp  # noqa: E402

seen = []
orig_draw = kp.draw_inputs
kp.draw_inputs = lambda module, seed: seen.append((m.phase, m.cur_op, seed)) or [torch.ones(3)]
try:
    m.enter("main")
    m.begin_op("run")
    pr = kp.Problem("/p.py", 0, None, None, [torch.ones(3)], m)
    pr.draw_inputs(7)
    check(seen == [("inputs", "run/inputs", 7)], "a draw runs in the inputs phase: %r" % (seen,))
    check(m.phase == "main" and m.cur_op == "run", "and returns to the op's phase")
    m.end_op()
    seen.clear()
    kp.Problem("/p.py", 0, None, None, [torch.ones(3)]).draw_inputs(8)
    check(seen == [("main", None, 8)], "without a Memory the draw is plain: %r" % (seen,))
finally:
    kp.draw_inputs = orig_draw

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

# $KOPT_MEM_HISTORY (kopt.memory.History, a developer's diagnosis): off without the variable; with
# it, every op and part of an op is marked under the name its peak is credited to, the allocator's
# recording starts at the first mark (stand-ins: CPU torch records nothing), and `resources`
# (Memory.report) dumps the trace with the marks, which tools/mem_peak.py credits step by step
import pickle  # noqa: E402
import tempfile  # noqa: E402

os.environ.pop("KOPT_MEM_HISTORY", None)
check(Memory().history is None, "no history without $KOPT_MEM_HISTORY")
fr = [{"filename": "/w/worker/kopt/isolate.py", "line": 116, "name": "new"}]
trace = [{"action": "segment_map", "addr": 0, "size": 600, "time_us": 1},
         {"action": "alloc", "addr": 1, "size": 100, "frames": fr, "time_us": 2},       # load
         {"action": "alloc", "addr": 2, "size": 400, "frames": fr, "time_us": 4},       # load/eager
         {"action": "free_completed", "addr": 2, "size": 400, "time_us": 5},
         {"action": "alloc", "addr": 3, "size": 250, "frames": fr, "time_us": 8},       # isolate
         {"action": "free_completed", "addr": 3, "size": 250, "time_us": 9}]
saved = {k: getattr(torch.cuda, k) for k in ("init", "is_available", "max_memory_reserved", "max_memory_allocated",
                                            "reset_peak_memory_stats", "empty_cache", "mem_get_info",
                                            "memory_reserved", "memory_allocated")}
saved_mem = {k: getattr(torch.cuda.memory, k) for k in ("_record_memory_history", "_snapshot")}
recorded, clock = [], iter(range(0, 1000))
with tempfile.TemporaryDirectory() as hist:
    os.environ["KOPT_MEM_HISTORY"] = hist
    try:
        torch.cuda.init = lambda: None
        torch.cuda.is_available = lambda: True
        torch.cuda.max_memory_reserved = torch.cuda.max_memory_allocated = lambda: 0
        torch.cuda.reset_peak_memory_stats = torch.cuda.empty_cache = lambda: None
        torch.cuda.mem_get_info = lambda: (0, 0)
        torch.cuda.memory_reserved = torch.cuda.memory_allocated = lambda: 0
        torch.cuda.memory._record_memory_history = lambda **kw: recorded.append(kw)
        torch.cuda.memory._snapshot = lambda: {"device_traces": [trace]}
        import kopt.memory as KM  # noqa: E402
        real_time = KM.time.time
        KM.time.time = lambda: (next(clock) * 2 + 1.5) * 1e-6    # marks at 1.5, 3.5, 5.5, 7.5 us
        m = Memory()
        m._cuda = lambda: True
        m.measure_context = m.note_outside = lambda: 0
        m.release_stack = lambda before: None
        check(m.history is not None and m.history.folder == hist, "a history with $KOPT_MEM_HISTORY")
        m.begin_op("load")
        with m.within("eager"):
            pass
        m.end_op()
        m.begin_op("isolate")
        m.end_op()
        m.report()
        KM.time.time = real_time
        check(len(recorded) == 1 and recorded[0].get("stacks") == "python", "recording started once: %r" % (recorded,))
        check([n for _, n in m.history.marks] == ["load", "load/eager", "load", "isolate"],
              "marks name what each peak is credited to: %r" % (m.history.marks,))
        dumps = os.listdir(hist)
        check(dumps == ["mem-%d.pickle" % os.getpid()], "resources dumps the trace: %r" % (dumps,))
        d = pickle.load(open(os.path.join(hist, dumps[0]), "rb"))
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
        import mem_peak  # noqa: E402
        peaks, rpeaks, unknown = mem_peak.replay(d["snapshot"]["device_traces"][0], d["marks"])
        check({k: v[0] for k, v in peaks.items()} == {"load": 100, "load/eager": 500, "isolate": 350} and unknown == 0,
              "mem_peak credits each allocation to the step then running: %r" % (peaks,))
        live = mem_peak.replay(trace, d["marks"], stop=peaks["load/eager"][1])
        check(sorted(b for b, _ in live.values()) == [100, 400], "the blocks live at a step's peak: %r" % (live,))
    finally:
        os.environ.pop("KOPT_MEM_HISTORY", None)
        for k, f in saved.items():
            setattr(torch.cuda, k, f)
        for k, f in saved_mem.items():
            setattr(torch.cuda.memory, k, f)

# memory outside the caching allocator at the end of each op (a stand-in device of 10000 bytes):
# `compile` grows it by 300 (a library's workspace), a later `compile` by less is not the largest
def stand_in_device(total):
    """torch.cuda's memory queries replaced by a device of `total` bytes whose use the test sets
    in the returned dict ({"used", "reserved"}); returns (the originals to restore, the dict)."""
    saved = {k: getattr(torch.cuda, k)
             for k in ("mem_get_info", "memory_reserved", "synchronize", "empty_cache", "reset_peak_memory_stats")}
    dev = {"used": 0, "reserved": 0}
    torch.cuda.mem_get_info = lambda: (total - dev["used"], total)
    torch.cuda.memory_reserved = lambda: dev["reserved"]
    torch.cuda.synchronize = torch.cuda.empty_cache = torch.cuda.reset_peak_memory_stats = lambda: None
    return saved, dev


def stand_in_memory():
    """A Memory that believes CUDA is up and folds nothing (peaks are not what these tests read)."""
    m = Memory()
    m._cuda = lambda: True
    m.fold = lambda: None
    return m


saved, dev = stand_in_device(10000)
try:
    m = stand_in_memory()
    m.begin_op("compile")
    dev.update(used=1500, reserved=1000)   # 500 outside the allocator
    m.end_op()
    m.begin_op("isolate")
    dev.update(used=1700, reserved=1200)   # still 500
    m.end_op()
    m.begin_op("compile")
    dev.update(used=1600, reserved=1200)   # 400: not the largest for compile
    m.end_op()
    check(m.outside_by_op == {"compile": 500, "isolate": 500}, "outside the allocator per op: %r" % (m.outside_by_op,))
    m.begin_op("load")
    with m.within("f64"):
        dev.update(used=2000, reserved=1200)
    m.end_op()
    check(m.outside_by_op["load"] == 800, "the op's own name at its end: %r" % (m.outside_by_op,))
    check(m.report()["outside_allocator_by_op"] == m.outside_by_op, "reported as outside_allocator_by_op")
finally:
    for k, f in saved.items():
        setattr(torch.cuda, k, f)


# local memory (kopt.memory, "Local memory"): an op that raises the context's stack limit has its
# outside-the-allocator figure recorded first (peaks keep it), then the limit goes back to the
# base and the reservation is freed; the context the core adds to peaks stays the largest seen.
class FakeStack:
    def __init__(self):
        self.limit, self.sets, self.refuse = 1024, [], False

    def get(self):
        return self.limit

    def set(self, n):
        self.sets.append(n)
        if self.refuse:
            return False
        dev["used"] -= (self.limit - n) * 100   # the stand-in device's reservation: 100 threads
        self.limit = n
        return True


saved, dev = stand_in_device(10 ** 7)
try:
    m = stand_in_memory()
    m.stack = FakeStack()
    m.begin_op("load")
    dev.update(used=1500, reserved=1000)
    check(m.end_op() is None and m.stack_base == 1024, "no rise at load: nothing released, base 1024")
    m.begin_op("compile")
    m.stack.limit = 10416                       # an autotuning choice with a 10 KB stack
    dev["used"] += (10416 - 1024) * 100
    rec = m.end_op()
    check(rec == {"op": "compile", "stack_bytes": 10416, "freed_bytes": (10416 - 1024) * 100},
          "the release's record: %r" % (rec,))
    check(m.stack.limit == 1024 and m.stack.sets == [1024], "set back to the base: %r" % (m.stack.sets,))
    check(m.outside_by_op["compile"] == 500 + (10416 - 1024) * 100,
          "compile's own figure holds the reservation: %r" % (m.outside_by_op,))
    check(m.measure_context() == 500 + (10416 - 1024) * 100,
          "the context stays the largest seen (an earlier peak does not shrink): %r" % (m.context,))
    m.begin_op("isolate")
    rec = m.end_op()
    check(rec is None and m.outside_by_op["isolate"] == 500, "later ops run without it: %r" % (m.outside_by_op,))
    m.begin_op("time")
    m.stack.limit, m.stack.refuse = 4096, True
    check(m.end_op() is None and m.stack.limit == 4096, "a refused set: no record")
    check(m.report()["stack_released"] == [{"op": "compile", "stack_bytes": 10416, "freed_bytes": 939200}],
          "reported as stack_released: %r" % (m.report()["stack_released"],))
    m2 = stand_in_memory()
    m2.stack = None                             # no driver library: nothing is tried
    m2.begin_op("compile")
    check(m2.end_op() is None and m2.report()["stack_released"] == [], "without the driver library: no release")
finally:
    for k, f in saved.items():
        setattr(torch.cuda, k, f)
# ---------------------------------------------------------------- the memory cap (kopt.memory, kopt.room)
# On a stand-in allocator: memory_allocated is what the test says is live; the context is 100.
import kopt.memory as M  # noqa: E402
from kopt import isolate, room  # noqa: E402

live = {"base": 1000}


def allocated():
    return sum(live.values())


saved = {"alloc": torch.cuda.memory_allocated, "empty": torch.cuda.empty_cache, "up": M._cuda_up}
torch.cuda.memory_allocated = allocated
torch.cuda.empty_cache = lambda: None
M._cuda_up = lambda: True
try:
    logs = []
    ctx = types.SimpleNamespace(memory=Memory(), kept={}, launches=None, log=logs.append)
    ctx.memory.measure_context = lambda: 100
    check(M.alloc_cap(ctx) is None and not M.over_cap(ctx, 1 << 40), "no cap: nothing is over it")
    check(M.compare_chunk(ctx, 1 << 23) == 1 << 23, "no cap: the default comparison chunk")
    M.op_limits(ctx, {"memory_cap_bytes": 3100})
    check(M.alloc_cap(ctx) == 3000, "the allocator's share is the cap less the context")
    check(not M.over_cap(ctx, 2000) and M.over_cap(ctx, 2001), "over_cap at its edge (1000 live + 2000 = 3000)")
    ctx.memory.enter("eager")
    check(not M.over_cap(ctx, 10 ** 9), "the eager phase is not kopt's to shape")
    ctx.memory.enter("main")
    for bad_cap in (-1, "3", True):
        try:
            M.op_limits(ctx, {"memory_cap_bytes": bad_cap})
            check(False, "limits accepted %r" % (bad_cap,))
        except Exception as e:
            check(type(e).__name__ == "BadRequest", "limits refuses %r" % (bad_cap,))
    # comparison chunks: a power of two whose temporaries fit what the cap leaves, at least 2^20;
    # the rooms below are in bytes of the old 128-a-element estimate, and the chunks half of what
    # it took (the estimate is 256 bytes an element)
    M.op_limits(ctx, {"memory_cap_bytes": 100 + 1000 + 128 * (6 << 20)})
    check(M.compare_chunk(ctx, 1 << 23) == 1 << 21, "chunk within half the old room: %d" % M.compare_chunk(ctx, 1 << 23))
    M.op_limits(ctx, {"memory_cap_bytes": 100 + 1000 + 128 * (8 << 20)})
    check(M.compare_chunk(ctx, 1 << 23) == 1 << 22, "half the old room takes 2^22 exactly: %d" % M.compare_chunk(ctx, 1 << 23))
    M.op_limits(ctx, {"memory_cap_bytes": 100 + 1000 + 128 * (8 << 20) - 2})
    check(M.compare_chunk(ctx, 1 << 23) == 1 << 21, "a byte short of it: 2^21")
    check(M.compare_chunk(ctx, 1 << 20) == 1 << 20, "never above the default")
    live["base"] = 10 ** 12
    check(M.compare_chunk(ctx, 1 << 23) == 1 << 20, "no room: the smallest chunk")
    live["base"] = 1000
    # gate 2's comparison picks its chunk when the candidate's outputs are live, not before
    seen = []
    orig_stats = isolate.compare_stats
    isolate.compare_stats = lambda r, g, a, rt, chunk: seen.append(chunk) or {}
    try:
        isolate._compare_run(ctx, [torch.zeros(3)], [None, torch.zeros(3)], [1], {})
        live["run"] = 10 ** 12   # the run's outputs now fill the room
        isolate._compare_run(ctx, [torch.zeros(3)], [None, torch.zeros(3)], [1], {})
        del live["run"]
    finally:
        isolate.compare_stats = orig_stats
    check(seen == [isolate.CHUNK if isolate.CHUNK <= 1 << 21 else 1 << 21, 1 << 20],
          "isolate's comparison chunk follows the memory live at the comparison: %r" % (seen,))
    M.op_limits(ctx, {"memory_cap_bytes": None})
    check(ctx.memory.cap is None, "limits with null lifts the cap")

    # make_room: captured launches go first, then kept outputs to the host, largest first,
    # only as far as needed
    class FakeLaunches:
        def __init__(self):
            self.forgot = []

        def forget_all(self, keep=None):
            live.pop("launch", None)
            self.forgot.append(keep)
            return 1

    M.op_limits(ctx, {"memory_cap_bytes": 3100})
    small, large = torch.zeros(4), torch.zeros(64)
    ctx.kept = {"small": kept.Kept([small], False), "large": kept.Kept([large], False)}
    live.update(launch=500, small=16, large=256)
    ctx.launches = FakeLaunches()
    orig_stage = kept.stage

    def stage_and_free(c, name):
        orig_stage(c, name)
        live.pop(name)
    kept.stage = stage_and_free
    try:
        done = room.make_room(ctx, 1500, keep_launch="k")
        check(done == {"launches": 1, "staged": []} and ctx.launches.forgot == ["k"],
              "forgetting the captured launches was enough: %r" % (done,))
        done = room.make_room(ctx, 1800)
        check(done["staged"] == ["large"] and ctx.kept["large"].staged and not ctx.kept["small"].staged,
              "then the largest kept output is staged: %r" % (done,))
        check(room.make_room(ctx, 10) == {"launches": 0, "staged": []}, "nothing when the step fits")
        done = room.make_room(ctx, 10 ** 9)
        check(done["staged"] == ["small"], "never stages twice; stops when nothing is left: %r" % (done,))
        check(any("memory cap" in m for m in logs), "make_room says what it did in the worker log")
    finally:
        kept.stage = orig_stage
    M.op_limits(ctx, {"memory_cap_bytes": None})
finally:
    torch.cuda.memory_allocated = saved["alloc"]
    torch.cuda.empty_cache = saved["empty"]
    M._cuda_up = saved["up"]

# gate 2's redraw: in place into the capture's clones gives the same values as fresh storage
from kopt.tensors import storage as modules_storage  # noqa: E402
x_own = torch.randn(6, 5)
clone = torch.randn(4, 8)[:, 2:]        # a view: its whole storage is redrawn
scratch = torch.zeros(3, dtype=torch.int64)
entry = [x_own, clone, scratch, 7]
roles = ["in", "inout", "in", "scalar"]
fresh = isolate._redraw(entry, roles, 11)
ptr = modules_storage(clone).data_ptr()
inplace = isolate._redraw(entry, roles, 11, in_place=frozenset([1]))
check(modules_storage(inplace[1]).data_ptr() == ptr, "in place: the clone's own storage")
check(modules_storage(fresh[1]).data_ptr() != ptr, "otherwise a fresh storage")
check(modules_storage(inplace[0]).data_ptr() != modules_storage(x_own).data_ptr(),
      "the problem's own tensor is never overwritten")
check(torch.equal(fresh[0], inplace[0]) and torch.equal(fresh[1], inplace[1]), "the same draw either way")
check(inplace[2] is scratch and inplace[3] == 7, "integer inputs and scalars are kept")
check(abs(float(inplace[1].std()) - 1) < 0.6 and inplace[1].shape == clone.shape, "N(0,1) in the clone's layout")
check(isolate._draw_bytes(entry, roles) == 6 * 5 * 4 + 4 * 8 * 4 + 2 * isolate.fence_bytes(6 * 5 * 4)
      + 2 * isolate.fence_bytes(4 * 8 * 4), "draw bytes: the floating inputs' storages with their room around")
r0 = isolate.fence_bytes(6 * 5 * 4)
check(modules_storage(fresh[0]).nbytes() == 6 * 5 * 4 + 2 * r0 and fresh[0].storage_offset() == r0 // 4
      and fresh[1].storage_offset() == clone.storage_offset() + isolate.fence_bytes(4 * 8 * 4) // 4
      and fresh[1].stride() == clone.stride() and inplace[1].storage_offset() == clone.storage_offset(),
      "a fresh draw sits between room before and after it, in its storage; an in-place one as it was")
lay = isolate._Layout.__new__(isolate._Layout)
lay.nbytes = 1000
check(isolate._run_bytes([x_own, clone, lay, 7], ["in", "inout", "out", "scalar"])
      == 4 * 8 * 4 + 1000 + 2 * isolate.fence_bytes(1000),
      "run bytes: in-place copies and fresh outputs with their fences")

# what a capture keeps (isolate._CaptureProf): call()'s own arguments and the module's constants
# are never handed out to be written (read-only ones shared, others copied); an intermediate
# of call() is kept as it is (call() stops at the launch: nothing else holds it), no copy
saved_sync = torch.cuda.synchronize
torch.cuda.synchronize = lambda: None
try:
    x_arg = torch.randn(8)
    const = torch.randn(4)
    inter = torch.randn(16)
    out_t = torch.empty(8)
    fake_mod = types.SimpleNamespace(_tensor_constant0=const, other=3)
    prof = isolate._CaptureProf(0, [x_arg, 5], ["in", "in", "out", "inout", "scalar"], fake_mod)
    try:
        prof.pre(0, lambda: (x_arg, inter, out_t, const, 8))
        check(False, "the capture stops call()")
    except isolate._Captured:
        pass
    e = prof.entry
    check(e[0] is x_arg, "a read-only argument of call() is shared")
    check(e[1] is inter, "an intermediate is kept as it is, not copied")
    check(isinstance(e[2], isolate._Layout), "an output is kept by its layout")
    check(e[3] is not const and modules_storage(e[3]).data_ptr() != modules_storage(const).data_ptr()
          and torch.equal(e[3], const), "a module constant written in place is copied")
    check(e[4] == 8 and prof.cloned == {1, 3}, "private to the capture: the intermediate and the copy (%r)"
          % (prof.cloned,))
    prof.pre(1, lambda: (inter,))   # another launch: nothing taken
    check(prof.entry is e, "only the target launch is captured")
finally:
    torch.cuda.synchronize = saved_sync

# settle: a multi-config Inductor kernel (stand-in with CachingAutotuner's attributes) is tuned
# once on throwaway arguments with no clone of what it writes in place; its in-place names are
# put back; a single-config kernel, a kernel without in-place arguments and a launcher-form
# candidate are not run at all; the candidate behind kopt's guard is reached


class FakeTuner:
    def __init__(self, nconf, mutated):
        self.configs = list(range(nconf))
        self.launchers = []
        self.mutated_arg_names = list(mutated)
        self.fn = types.SimpleNamespace(arg_names=["in_out_ptr0", "in_ptr0", "xnumel"])
        self.calls = []

    def autotune_to_one_config(self, *a, **k):
        pass

    def run(self, *args, stream=None):
        self.calls.append((list(self.mutated_arg_names), args))


saved_sync = torch.cuda.synchronize
torch.cuda.synchronize = lambda: None
try:
    buf, x = torch.randn(64), torch.randn(64)
    s_entry, s_roles = [buf, x, 64], ["inout", "in", "scalar"]
    k = FakeTuner(3, ["in_out_ptr0"])
    avoided = isolate.settle(k, s_entry, s_roles, 0)
    check(len(k.calls) == 1 and k.calls[0][0] == [], "tuned once with no in-place clone (%r)" % (k.calls,))
    check(k.mutated_arg_names == ["in_out_ptr0"], "the in-place names are put back")
    check(k.calls[0][1][0] is not buf and k.calls[0][1][1] is x, "on a private copy of the in-place buffer")
    check(avoided == 64 * 4, "the clone avoided is reported (%d)" % avoided)
    for quiet in (FakeTuner(1, ["in_out_ptr0"]), FakeTuner(4, [])):
        check(isolate.settle(quiet, s_entry, s_roles, 0) == 0 and not quiet.calls,
              "nothing to tune: not run")
    launcher_form = types.SimpleNamespace(launch=lambda *a: None, run=lambda *a, **k: check(False, "run"))
    check(isolate.settle(launcher_form, s_entry, s_roles, 0) == 0, "a launcher-form candidate is not tuned")
    inner = FakeTuner(2, ["in_out_ptr0"])
    guard = types.SimpleNamespace(_kopt_scope={"_kopt_cand_k": inner}, _kopt_cand="_kopt_cand_k",
                                  run=lambda *a, **kw: inner.run(*a, **kw))
    isolate.settle(guard, s_entry, s_roles, 0)
    check(len(inner.calls) == 1 and inner.calls[0][0] == [] and inner.mutated_arg_names == ["in_out_ptr0"],
          "the candidate behind the guard is tuned through the guard")
    failing = FakeTuner(2, ["in_out_ptr0"])
    failing.run = lambda *a, **kw: (_ for _ in ()).throw(RuntimeError("boom"))
    try:
        isolate.settle(failing, s_entry, s_roles, 0)
        check(False, "a failing tuning run raises")
    except RuntimeError:
        check(failing.mutated_arg_names == ["in_out_ptr0"], "put back after a failure too")
finally:
    torch.cuda.synchronize = saved_sync

# gate 4's warm-up poisons its outputs like the timed runs (kopt.timing.warm_up): no timed run
# can find a warm-up's correct results in recycled memory
from kopt import timing  # noqa: E402


class WarmVariant:
    def __init__(self):
        self.outs = []

    def prepare(self):
        return None

    def run(self, p):
        o = (torch.ones(4), torch.arange(3), torch.zeros(2, dtype=torch.bool))
        self.outs.append(o)
        return o


saved_sync = torch.cuda.synchronize
torch.cuda.synchronize = lambda: None
try:
    va, vb = WarmVariant(), WarmVariant()
    enq = timing.warm_up([va, vb], 3, True)
    check(len(enq) == 2 and all(len(e) == 3 and all(x >= 0 for x in e) for e in enq), "an enqueue time per run")
    check(len(va.outs) == 3 and len(vb.outs) == 3, "every variant warmed up 3 times")
    check(all(torch.isnan(o[0]).all() and (o[1] == torch.iinfo(torch.int64).min).all() and o[2].all()
              for o in va.outs + vb.outs), "every warm-up output poisoned (NaN, the int minimum, True)")
    vc = WarmVariant()
    timing.warm_up([vc], 1, False)
    check((vc.outs[0][0] == 1).all(), "poison_outputs=false leaves them")
    check(timing.warm_up([vc], 0, True) == [[]], "no warm-up: no runs")
finally:
    torch.cuda.synchronize = saved_sync

# gate 3's adversarial transforms (kopt.targets.transformed): floating inputs only, new tensors
from kopt import targets  # noqa: E402

xs = [torch.tensor([[-2.0, 0.5, 3.0], [1.0, -0.25, 0.0]]), torch.tensor([1, 2, 3]), torch.tensor([True, False])]
for kind, val, want in [("scale", 1e3, xs[0] * 1e3), ("shift", 1e3, xs[0] + 1e3),
                        ("const_rows", 0, torch.tensor([[-2.0, -2.0, -2.0], [1.0, 1.0, 1.0]])),
                        ("negative", 1, torch.tensor([[-3.0, -1.5, -4.0], [-2.0, -1.25, -1.0]]))]:
    tr = targets.transformed(xs, targets.check_transform({"kind": kind, "value": val}))
    check(torch.equal(tr[0], want), "transform %s: %r" % (kind, tr[0]))
    check(tr[1] is xs[1] and tr[2] is xs[2] and tr[0] is not xs[0], "transform %s: integers and masks kept" % kind)
check(bool((targets.transformed(xs, {"kind": "negative", "value": 1})[0] <= -1).all()), "negative: every element <= -1")
big = [torch.arange(24, dtype=torch.float32).reshape(4, 6), torch.tensor([1, 2, 3])]
tn = targets.transformed(big, targets.check_transform({"kind": "nan", "value": 5}))[0].view(-1)
check([i for i in range(24) if torch.isnan(tn[i])] == [2, 7, 12, 17, 22], "nan: every 5th element from 2: %r" % tn)
check(torch.equal(tn[~torch.isnan(tn)], big[0].view(-1)[~torch.isnan(tn)]) and not torch.isnan(big[0]).any(),
      "nan: the other elements kept, the input itself untouched")
ti = targets.transformed(big, targets.check_transform({"kind": "inf", "value": 6}))[0].view(-1)
check([i for i in range(24) if ti[i] == float("inf")] == [2, 8, 14, 20] and
      [i for i in range(24) if ti[i] == float("-inf")] == [4, 10, 16, 22], "inf: +inf and -inf positions: %r" % ti)
check(targets.transformed(big, {"kind": "nan", "value": 5})[1] is big[1], "nan: integer inputs kept")
for bad_period in (2, 4.5, -7):
    try:
        targets.check_transform({"kind": "nan", "value": bad_period})
        check(False, "nan with period %r accepted" % (bad_period,))
    except Exception as e:  # noqa: BLE001
        check("period" in str(e), "nan refuses period %r: %s" % (bad_period, e))
try:
    targets.check_transform({"kind": "negate", "value": 1})
    check(False, "an unknown transform is refused")
except Exception as e:  # noqa: BLE001
    check("negative" in str(e), "the refusal lists the kinds: %s" % e)

# comparison statistics do not depend on the chunk size
a = torch.randn(1000, dtype=torch.float64)
b = a + torch.randn(1000, dtype=torch.float64) * 1e-3
b[17] = float("nan")
s1, s2 = C.compare_stats(a, b, 1e-3, 1e-3), C.compare_stats(a, b, 1e-3, 1e-3, chunk=7)
check(s1["n_mismatch"] == s2["n_mismatch"] and s1["max_abs_index"] == s2["max_abs_index"]
      and abs(s1["sum_sq_diff"] - s2["sum_sq_diff"]) < 1e-12 and s1["first_mismatch"] == s2["first_mismatch"],
      "chunked statistics equal the whole-tensor ones")

# the launch configuration each Inductor kernel settled on (kopt.profile.chosen_configs), on
# stand-ins laid out as Inductor's CachingAutotuner: counted before the first run, read after
from kopt import profile as P  # noqa: E402


class _Cfg:
    def __init__(self, kwargs, nw, ns, coordesc=None):
        self.kwargs, self.num_warps, self.num_stages = kwargs, nw, ns
        if coordesc is not None:
            self.found_by_coordesc = coordesc


class _Autotuner:
    def __init__(self, configs):
        self.configs, self.launchers, self.mutated_arg_names = configs, [], []

    def autotune_to_one_config(self):
        pass

    def settle(self, i):   # what Inductor's first run leaves: one launcher, the configs pruned
        self.launchers = [types.SimpleNamespace(config=self.configs[i])]
        self.configs = [self.configs[i]]


m = types.ModuleType("fake_output_module")
m.triton_red_fused_sum_0 = _Autotuner([_Cfg({"XBLOCK": 1, "R0_BLOCK": 2048}, 16, 1),
                                       _Cfg({"XBLOCK": 64, "R0_BLOCK": 64}, 8, 1, True),
                                       _Cfg({"XBLOCK": 8, "R0_BLOCK": 512}, 4, 2)])
m.triton_poi_fused_relu_1 = _Autotuner([_Cfg({"XBLOCK": 1024}, 4, 1)])
m.triton_poi_not_run_2 = _Autotuner([_Cfg({"XBLOCK": 256}, 4, 1), _Cfg({"XBLOCK": 512}, 8, 1)])
m.triton_per_odd_3 = _Autotuner([_Cfg({"XBLOCK": 2}, 2, 1)])
m.triton_helper = object()                 # not a kernel
m.other_kernel = _Autotuner([_Cfg({"XBLOCK": 4}, 1, 1)])   # not a triton_ global
counts = P.config_counts(m)
check(counts.get("triton_red_fused_sum_0") == 3 and "triton_helper" not in counts and "other_kernel" not in counts,
      "configurations counted per kernel: %r" % counts)
m.triton_red_fused_sum_0.settle(1)
m.triton_poi_fused_relu_1.settle(0)
m.triton_per_odd_3.settle(0)
m.triton_per_odd_3.launchers[0].config.num_warps = "four"   # not as expected: left out
got = P.chosen_configs(m, counts)
check(got.get("triton_red_fused_sum_0") == {"XBLOCK": 64, "R0_BLOCK": 64, "num_warps": 8, "num_stages": 1,
                                             "choices": 3, "found_by_coordesc": True},
      "the autotuned kernel's choice among 3: %r" % got.get("triton_red_fused_sum_0"))
check(got.get("triton_poi_fused_relu_1") == {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1, "choices": 1,
                                              "found_by_coordesc": False},
      "a one-configuration kernel: %r" % got.get("triton_poi_fused_relu_1"))
check(set(got) == {"triton_red_fused_sum_0", "triton_poi_fused_relu_1"},
      "kernels that did not run or are not laid out as expected are left out: %r" % sorted(got))

# ---------------------------------------------------------------- gate 2's order (kopt.isolate)
# Every run of the candidate on an input set comes before the original's, so a candidate that
# copies the reference from memory, or writes into it, has nothing of this set to reach; the
# original's kept outputs are summed when kept and after the comparisons. On stand-ins: the
# original doubles its input into its output and leaves that tensor where "memory" can reach it
# (LAST); the candidates either compute it, or copy LAST (a kernel reading the process's memory),
# or write into LAST whenever it is there. ORDER records who ran when.
LAST = {}
ORDER = []


class _Run:
    def __init__(self, how):
        self.how, self.calls = how, 0

    def run(self, x, out, stream=None):
        self.calls += 1
        ORDER.append("orig" if self.how == "orig" else "cand")
        if self.how == "orig":
            out.copy_(x * 2)
            LAST["ref"], LAST["x"] = out, x.clone()
        elif self.how == "copies" and "ref" in LAST:
            out.copy_(LAST["ref"])
        elif self.how == "copies":
            out.zero_()
        elif self.how == "raises":
            raise RuntimeError("an illegal memory access (stand-in)")
        else:
            out.copy_(x * 2)
            if self.how == "tampers" and "ref" in LAST:
                LAST["ref"].add_(1.0)


def _isolate(how):
    LAST.clear()
    del ORDER[:]
    x = torch.randn(64)
    entry = [x, torch.empty(64)]
    mods = {"orig.py": types.SimpleNamespace(k=_Run("orig")), "cand.py": types.SimpleNamespace(k=_Run(how))}
    fake_cache = types.SimpleNamespace(get_full=lambda ctx, spec: ("key", entry, None, set()), forget=lambda k: None)
    patches = {"launches": lambda ctx: fake_cache,
               "cache": lambda ctx: types.SimpleNamespace(module=lambda p: mods[p]),
               "make_room": lambda *a, **k: None, "over_cap": lambda *a, **k: False,
               "free_bytes": lambda: 1 << 40, "compare_chunk": lambda ctx, c: c,
               "settle": lambda *a, **k: None}
    saved = {k: getattr(isolate, k) for k in patches}
    cuda_saved = {k: getattr(torch.cuda, k) for k in ("synchronize", "current_stream")}
    try:
        for k, f in patches.items():
            setattr(isolate, k, f)
        torch.cuda.synchronize = lambda *a: None
        torch.cuda.current_stream = lambda *a: types.SimpleNamespace(cuda_stream=0)
        ctx = types.SimpleNamespace(launches=fake_cache, problem=None, memory=Memory(), kept={}, log=lambda m: None)
        # every set uses the same captured tensors (no seeds: _redraw would need the real cache)
        return isolate.op_isolate(ctx, {"orig": "orig.py", "cand": "cand.py", "kernel": "k",
                                        "launch_args": {}, "roles": ["in", "out"], "seeds": [],
                                        "tol": {"float32": [0, 0]}, "repeat": 2})
    finally:
        for k, f in saved.items():
            setattr(isolate, k, f)
        for k, f in cuda_saved.items():
            setattr(torch.cuda, k, f)


res = _isolate("right")
st = res["sets"][0]
check(not st["reference_changed"] and all(r["n_mismatch"] == 0 for r in st["args"][0]["runs"])
      and len(st["args"][0]["runs"]) == 2, "a right candidate: two runs, both matching (%r)" % st)
check(ORDER == ["cand", "cand", "orig"], "both runs of the candidate come before the original's: %r" % ORDER)
res = _isolate("copies")
runs = res["sets"][0]["args"][0]["runs"]
check(runs[0]["n_mismatch"] == 64 and runs[1]["n_mismatch"] == 64,
      "a candidate copying the reference: no run of it finds this set's reference, both are wrong (%r)"
      % [r["n_mismatch"] for r in runs])
res = _isolate("tampers")
check(res["sets"][0]["reference_changed"] is False and torch.equal(LAST["ref"], LAST["x"] * 2)
      and all(r["n_mismatch"] == 0 for r in res["sets"][0]["args"][0]["runs"]),
      "a candidate that would write into the reference finds none while it runs (%r)" % res["sets"][0])
try:
    _isolate("raises")
    check(False, "a candidate that raises is an error")
except Exception as e:
    check(getattr(e, "code", None) == "module_failed" and "the candidate raised on input set captured" in str(e),
          "a candidate that raises: module_failed, naming the set (%s: %s)" % (type(e).__name__, e))

print("worker tensors (cpu): %d checks passed" % passed())
