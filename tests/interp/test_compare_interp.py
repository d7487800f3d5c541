"""The one-pass comparison kernels (worker/kopt/cmpkernel.py) run by Triton's interpreter on the
CPU, through kopt.compare.compare_stats and abs_max as the worker calls them, against the same
functions' torch ops (what the CPU tests check): every statistic must agree -- counts, first
indices and the values there, the largest errors with their indices and values exactly; the sums
of squares to 1e-12 relative (the kernel adds in another order). Cases: matching and mismatching
outputs of each dtype the kernel takes, NaN/inf in either side at the same and at different
places, a largest error of which only the first occurrence counts, a partial last block, the
relative-error count, an all-non-finite pair, chunked passes (the host-staged path: positions
offset by each chunk's start) and content sums fed from the pass.

usage: TRITON_INTERPRET=1 PY tests/interp/test_compare_interp.py (`make interp-check`); exit 0
when every case agrees, 1 otherwise; skipped (exit 0, one line) when triton does not import.
"""
import math
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import ROOT, require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from kopt import compare  # noqa: E402

SUMS = ("sum_sq_ref", "sum_sq_diff")


def both(fn):
    """fn() with the torch ops, then with the kernels."""
    compare.KERNEL_ON_CPU = False
    want = fn()
    compare.KERNEL_ON_CPU = True
    try:
        got = fn()
    finally:
        compare.KERNEL_ON_CPU = False
    return got, want


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def diffs(got, want):
    """The keys whose values differ (sums: beyond 1e-12 relative)."""
    out = []
    for k in sorted(set(got) | set(want)):
        a, b = got.get(k, "<missing>"), want.get(k, "<missing>")
        if k in SUMS and isinstance(a, float) and isinstance(b, float):
            if abs(a - b) > 1e-12 * max(abs(a), abs(b), 1e-300):
                out.append((k, a, b))
        elif not same(a, b):
            out.append((k, a, b))
    return out


def cases():
    g = torch.Generator().manual_seed(7)
    n = 2 * compare.BLOCK + 333          # two whole blocks and a partial one
    x = torch.randn(n, generator=g, dtype=torch.float64)
    near = x + 1e-9 * torch.randn(n, generator=g, dtype=torch.float64)
    off = x.clone()
    off[[5, compare.BLOCK + 4, n - 1]] += torch.tensor([0.5, -2.0, 2.0], dtype=torch.float64)   # tie: BLOCK+4 and n-1
    nonfin_r, nonfin_g = x.clone(), x.clone()
    nonfin_r[[1, 2, 3, 2 * compare.BLOCK + 200]] = torch.tensor([float("nan"), float("inf"), -float("inf"), float("nan")],
                                             dtype=torch.float64)
    nonfin_g[[1, 2, 3]] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=torch.float64)
    nonfin_g[[17, compare.BLOCK + 1]] = torch.tensor([float("nan"), float("inf")], dtype=torch.float64)
    small = x.clone()
    small[::97] *= 0.25                  # off by a large fraction of their own value
    yield "match f64", x, x.clone(), 0.0, 0.0, None
    yield "near f64", x, near, 1e-12, 1e-12, None
    yield "off f64 (tied largest error)", x, off, 1e-5, 1e-5, None
    yield "non-finite", nonfin_r, nonfin_g, 1e-5, 1e-5, None
    yield "all non-finite", torch.full((50,), float("nan"), dtype=torch.float64), \
        torch.full((50,), float("inf"), dtype=torch.float64), 0.0, 0.0, None
    yield "rel count", x, small, 1e-3, 1e-3, (0.01, 1e-6, 1e-3)
    yield "f32 vs f64 ref", x, x.to(torch.float32), 1e-6, 1e-6, (0.01, 0.0, 0.01)
    yield "bf16 vs f32", x.to(torch.float32), x.to(torch.bfloat16), 1e-2, 1e-2, (0.01, 0.0, 0.01)
    yield "f16 exact", x.to(torch.float16), x.to(torch.float16), 0.0, 0.0, None
    ints = torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int64)
    ints2 = ints.clone()
    ints2[[0, 77]] += 1
    yield "int64 off", ints, ints2, 0.0, 0.0, None
    yield "int32 vs int8", ints.to(torch.int8).to(torch.int32), ints.to(torch.int8), 0.0, 0.0, None
    b = ints > 0
    b2 = b.clone()
    b2[compare.BLOCK + 3] = ~b2[compare.BLOCK + 3]
    yield "bool off", b, b2, 0.0, 0.0, None
    yield "uint8/int16", (ints % 200).to(torch.uint8), (ints % 200).to(torch.int16), 0.0, 0.0, None
    yield "2-D strided", x[:4000].view(40, 100).t(), x[:4000].view(40, 100).t().contiguous(), 0.0, 0.0, None


def main():
    warnings.filterwarnings("ignore", category=RuntimeWarning)   # numpy's inf - inf in the interpreter
    failed = total = 0
    for name, ref, got, atol, rtol, rel in cases():
        for chunk in (compare.CHUNK, compare.BLOCK + 900, compare.BLOCK):
            total += 1
            a, b = both(lambda: compare.compare_stats(ref, got, atol, rtol, chunk=chunk, rel_err=rel))
            d = diffs(a, b)
            failed += bool(d)
            print("%s %s chunk=%d mismatches=%s %s" % ("ok  " if not d else "FAIL", name, chunk,
                                                         b.get("n_mismatch"), d if d else ""))
        total += 1
        a, b = both(lambda: compare.abs_max(ref, chunk=3000))
        failed += a != b
        print("%s abs_max %s kernel=%r torch=%r" % ("ok  " if a == b else "FAIL", name, a, b))
    # content sums fed from the pass: the same sums as the torch pass feeds (the CPU tests tie
    # those to checksum(); here the interpreter's storage shim stands in the way of checksum)
    x = torch.randn(3 * compare.BLOCK + 5, dtype=torch.float32)
    y = x.clone()
    y[100] += 1
    for chunk in (compare.CHUNK, compare.BLOCK, 1000):
        total += 1

        def fed():
            sums = (compare.ChunkSum(x), compare.ChunkSum(y))
            st = compare.compare_stats(x, y, 0.0, 0.0, chunk=chunk, sums=sums)
            return [s.complete for s in sums], [s.value() for s in sums], st["first_mismatch"]
        a, b = both(fed)
        ok = a == b and all(a[0]) and a[1][0] != a[1][1] and a[2] == 100
        failed += not ok
        print("%s fed content sums chunk=%d kernel=%s torch=%s" % ("ok  " if ok else "FAIL", chunk, a, b))
    # the check can fail: a kernel that missed a mismatch would differ from the torch ops
    total += 1
    compare.KERNEL_ON_CPU = True
    try:
        st = compare.compare_stats(x, y, 0.0, 0.0)
    finally:
        compare.KERNEL_ON_CPU = False
    ok = st["n_mismatch"] == 1 and st["max_abs_index"] == 100 and st["got_at_max_abs"] == float(y[100])
    failed += not ok
    print("%s kernel finds a single changed element" % ("ok  " if ok else "FAIL"))
    print("compare interp: %d cases, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
