"""GPU checks of the worker's own helpers that the CPU tests cannot reach (run by tests/gpu/run.sh,
suite "worker"): the content checksum of a CUDA tensor (Triton kernel), of its host copy (chunks
hashed on the GPU at their positions) and of the torch mix on the CPU must agree; a changed word
must change all three; a comparison of two host tensors (both sides staged) must give the GPU's
statistics, and the comparison kernel the torch ops' (timed, both); gate 4's input rotations (kopt.fresh) are torch.roll's and are undone exactly.
Prints one line; exit 1 on a failed check."""
import functools
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kopt import compare  # noqa: E402

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


torch.manual_seed(0)
# three hash chunks and a partial one: the host path's chunk offsets are exercised
n = 3 * compare.HASH_CHUNK + 12345
dev = torch.randn(n, device="cuda")
host = dev.cpu()
# every specialisation the timed calls launch compiled outside the timings (Triton specialises
# the word count and the program count: a small warm-up tensor would be another kernel)
compare.checksum(dev)
compare.checksum(host)
gpu_s = []
for _ in range(5):
    t0 = time.perf_counter()
    on_gpu = compare.checksum(dev)   # an int on the host: the call has synchronised
    gpu_s.append(time.perf_counter() - t0)
gpu_s = sorted(gpu_s)[len(gpu_s) // 2]
t1 = time.perf_counter()
on_host = compare.checksum(host)
t2 = time.perf_counter()
saved = compare._HASH_KERNEL
compare._HASH_KERNEL = False      # the torch mix on the CPU, as without Triton
cpu_mix = compare.checksum(host)
t3 = time.perf_counter()
check(on_gpu == on_host == cpu_mix, "GPU %x, host via GPU %x, CPU mix %x differ" % (on_gpu, on_host, cpu_mix))
host[2 * compare.HASH_CHUNK + 7] += 1.0   # a word in the third chunk
dev[2 * compare.HASH_CHUNK + 7] += 1.0
check(compare.checksum(host) == compare.checksum(dev), "the changed tensors' CPU-mix sums differ")
check(compare.checksum(host) != cpu_mix, "a changed word did not change the CPU mix")
compare._HASH_KERNEL = saved
check(compare.checksum(host) != on_host, "a changed word did not change the host sum")
check(compare.checksum(dev) != on_gpu, "a changed word did not change the GPU sum")
check(compare.checksum(host) == compare.checksum(dev), "the changed tensors' sums differ")
# the key's words reach the kernel as scalars of every width Triton gives them (1 is a constant
# there, below 2^31 an i32, above an i64): the GPU sum is the torch mix's for each key
small = dev[: 3 * 4096 + 11].clone()
for key in [(1, 2, 3, 4, 5, 6), (0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xDEADBEEF, 1, 0), compare.new_key()]:
    g = compare.checksum(small, key=key)
    compare._HASH_KERNEL = False
    c = compare.checksum(small.cpu(), key=key)
    compare._HASH_KERNEL = saved
    check(g == c, "key %r: GPU %x, CPU mix %x" % (key, g, c))
check(compare.checksum(small, key=(1, 2, 3, 4, 5, 6)) != compare.checksum(small, key=(1, 2, 3, 4, 5, 7)),
      "the sum does not depend on the key")
# gate 2 stages both sides of a comparison to host memory when the cap is tight (isolate.py):
# the statistics must be the ones the GPU computes from GPU copies, with the chunks on the GPU
ref = torch.randn(1 << 22, device="cuda")
got = ref + 1e-3 * torch.randn(1 << 22, device="cuda")
got[12345] = float("nan")
both_gpu = compare.compare_stats(ref, got, 1e-4, 1e-4, chunk=1 << 20)
both_host = compare.compare_stats(ref.cpu(), got.cpu(), 1e-4, 1e-4, chunk=1 << 20)
check(both_gpu == both_host, "host/host comparison differs from GPU/GPU: %r vs %r"
      % ({k: v for k, v in both_host.items() if both_gpu.get(k) != v}, both_gpu))
check(both_gpu["n_mismatch"] > 0 and both_gpu["first_nonfinite_mismatch"] is not None,
      "the comparison saw no mismatch: %r" % (both_gpu,))
# the one-pass comparison kernel (kopt.cmpkernel, compiled here) against compare's torch ops on
# a 256M-element float64 reference and a bfloat16 output with NaN, inf and elements off by 1: the
# same statistics (sums of squares to 1e-9 relative: another order of addition); each one's time
big_r = torch.randn(1 << 28, dtype=torch.float64, device="cuda")
big_g = big_r.to(torch.bfloat16)
big_g[[3, 1 << 27, (1 << 28) - 1]] = torch.tensor([float("nan"), float("inf"), 0.0], dtype=torch.bfloat16,
                                                  device="cuda")
big_r[1 << 27] = float("inf")
big_g[5000:5100] = big_r[5000:5100] + 1.0   # 100 elements off by 1: past both tolerances


def timed_stats(r, g):
    torch.cuda.synchronize()
    t = time.perf_counter()
    s = compare.compare_stats(r, g, 1e-2, 1e-2, rel_err=(1 / 16, 1e-6, 1e-6))
    torch.cuda.synchronize()
    return s, time.perf_counter() - t


timed_stats(big_r, big_g)         # compiles the kernels
st_k, sec_k = timed_stats(big_r, big_g)
saved_k = compare._CMP_KERNELS
compare._CMP_KERNELS = False       # the torch ops, as without Triton
st_t, sec_t = timed_stats(big_r, big_g)
compare._CMP_KERNELS = saved_k
off = {k: (st_k.get(k), v) for k, v in st_t.items()
       if (abs(st_k.get(k) - v) > 1e-9 * abs(v) if k in ("sum_sq_ref", "sum_sq_diff") else st_k.get(k) != v)}
check(not off and st_k["n_mismatch"] >= 101 and st_k["n_rel_err"] >= 100 and st_k["first_mismatch"] == 3,
      "the comparison kernel's statistics differ from the torch ops' (kernel, torch): %r" % off)
del big_r, big_g
# the content sum taken in a comparison's own pass (ChunkSum, the Triton kernel on the chunks
# moved to the GPU) is checksum's, for a host-staged float64 reference and a GPU bfloat16 output;
# and through `compare` (kopt.kept) with the reference kept staged: unchanged, compared; one word
# of it changed on the host, reference_changed
from kopt import kept as kept_mod  # noqa: E402
import types  # noqa: E402
r64 = torch.randn(3 * (1 << 20) + 6, dtype=torch.float64, device="cuda")
ob16 = r64.to(torch.bfloat16)
for t in (r64.cpu(), ob16):
    cs = compare.ChunkSum(t)
    flat = t.reshape(-1)
    for lo in range(0, flat.numel(), 1 << 20):
        cs.add(flat[lo:lo + (1 << 20)].to("cuda"), lo)
    check(cs.complete and cs.value() == compare.checksum(t), "ChunkSum of a %s %s tensor is not checksum's"
          % (t.device.type, t.dtype))
kctx = types.SimpleNamespace(kept={}, run_need=0, log=lambda m: None, memory=None)
kept_mod.keep(kctx, "ref", [r64.clone()], low_memory=True)
kept_mod.keep(kctx, "got", [ob16.clone()])
creq = {"ref": "ref", "got": "got", "atol": 0, "rtol": 0, "rel_err": [1 / 16, 1e-6, 1e-6]}
cres = kept_mod.op_compare(kctx, dict(creq))
check(kctx.kept["ref"].staged and kctx.kept["ref"].abs_max.get(0) == float(r64.abs().max()),
      "the staged reference's maximum was not found before staging: %r" % kctx.kept["ref"].abs_max)
check(cres["reference_changed"] is False and cres["outputs"][0]["n_rel_err"] == 0,
      "an unchanged staged reference: %r" % {k: v for k, v in cres.items() if k != "outputs"})
kctx.kept["ref"].items[0][(1 << 20) + 17] += 1.0
cres = kept_mod.op_compare(kctx, dict(creq))
check(cres["reference_changed"] is True and cres["changed"] == ["ref"], "a changed staged reference was not seen")
kept_mod.drop(kctx, ["ref", "got"])
del r64, ob16
# gate 4's fresh contents (kopt.fresh) on the GPU: a rotation is torch.roll's, in blocks, and a
# Rotator's step is the flat roll; a 1 GB input rotated 10 times and
# restored holds its bytes again (the keyed checksum); the time a round's rotation takes at that size
from kopt import fresh  # noqa: E402
a = torch.randn(301 * 1000, device="cuda")
for k in (1, 150, 299, 999, 300999):
    x = a.clone()
    fresh.rotate(x, k, budget=777)
    check(torch.equal(x, torch.roll(a, -k)), "rotate by %d is not roll's" % k)
small = torch.randn(37, 1000, device="cuda")
small0 = small.clone()
srot = fresh.Rotator([small], fresh.new_rng(), budget=777)
srot.step()
check(torch.equal(small.view(-1), torch.roll(small0.view(-1), -srot.items[0].offset)), "a step is not the flat roll")
srot.restore()
check(torch.equal(small, small0), "a small input is not restored")
big = torch.randn(4096, 65536, device="cuda")             # 1 GiB
few = torch.randn(8, 3, 100000, device="cuda")
before = [compare.checksum(big), compare.checksum(few)]
rot = fresh.Rotator([big, few], fresh.new_rng())
check(rot.rotated == [0, 1], "not both rotated: %s" % rot.skipped)


def median_step_s(step, n, after=lambda: None):
    """Median wall time of n calls of step() to the end of their GPU work; after() runs untimed
    after each."""
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
        after()
    return sorted(ts)[n // 2]


rot_s = median_step_s(rot.step, 10)
check(compare.checksum(big) != before[0] and compare.checksum(few) != before[1], "a step changed nothing")
rot.restore()
check([compare.checksum(big), compare.checksum(few)] == before, "restore did not bring back every byte")
del big, few
# a strided slice alone on its storage (fresh._Elems, since the forty-second session) on the GPU:
# its elements rotate as the Rotator says, the storage's others stay, restore is exact; timed at
# 256 MiB of slice in a 512 MiB storage
whole = torch.randn(8192, 16384, device="cuda")
sl = whole[:, ::2]
inside = torch.zeros(8192, 16384, dtype=torch.bool, device="cuda")
inside[:, ::2] = True
rest, order, wsum = whole[~inside].clone(), sl.reshape(-1).clone(), compare.checksum(whole)
srot = fresh.Rotator([sl], fresh.new_rng())
check(srot.rotated == [0], "the strided slice was not rotated: %s" % srot.skipped)


def slice_checks(sl, order, item, whole, inside, rest):
    check(torch.equal(sl.reshape(-1), torch.roll(order, -item.offset)), "a slice step is not its roll")
    check(torch.equal(whole[~inside], rest), "a slice step moved an element outside the slice")


sl_s = median_step_s(srot.step, 3, functools.partial(slice_checks, sl, order, srot.items[0], whole, inside, rest))
srot.restore()
check(compare.checksum(whole) == wsum, "the strided slice was not restored exactly")
del whole, inside, rest, order, sl
# gate 2's fences (kopt.isolate._Fence) on the GPU: an output allocated between them keeps the
# allocator's alignment; a write of one element past its end breaks them, its own elements do not
from kopt import isolate  # noqa: E402
lay = isolate._Layout(torch.empty(3000, 777, device="cuda"))
y, fence = lay.new(isolate.new_seed())
y.fill_(1.0)
torch.cuda.synchronize()
check(not fence.broken() and y.data_ptr() % 512 == 0 and y.data_ptr() == fence.raw.data_ptr() + fence.r,
      "an output's own writes broke its fences, or it lost its alignment")
y.as_strided((1,), (1,), y.storage_offset() + y.numel()).fill_(2.0)
check(fence.broken(), "a write past the output's end left its fences as drawn")
del y, fence
if fails:
    print("; ".join(fails))
    sys.exit(1)
print("a comparison of 256M elements (float64 vs bfloat16): kernel %.1f ms, torch ops %.1f ms, same "
      "statistics; " % (1e3 * sec_k, 1e3 * sec_t), end="")
print("a round's rotation of 1.0 GiB + 9.2 MiB: %.1f ms (median of 10), restored exactly; " % (rot_s * 1e3), end="")
print("a strided slice's (256 MiB of a 512 MiB storage): %.1f ms (median of 3), restored exactly; "
      "gate 2's fences see a write past an output; " % (sl_s * 1e3), end="")
print("checksums agree on %d MB (GPU %.2f ms = %.0f GB/s, median of 5; host via GPU %.3f s, CPU mix %.3f s); "
      "a changed word changes them" % (n * 4 >> 20, gpu_s * 1e3, n * 4 / gpu_s / 1e9, t2 - t1, t3 - t2))
