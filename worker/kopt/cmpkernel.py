"""The Triton kernels of kopt.compare's one-pass comparison (imported only where Triton is:
compare.py keeps its torch ops without it). Both read each element once, in float64, and write
one row of partial results per program; compare.py reduces the rows (a few small torch ops) and
reads them back once.

kopt_compare: program i covers elements i*BLOCK .. i*BLOCK+BLOCK-1 of the flat chunk (global
index = base + offset). It stores at ints[k * nparts + part0 + i] (int64), k =
  0 mismatches, 1 non-finite mismatches, 2 first mismatch's index (NONE when none),
  3 first non-finite mismatch's index, 4 index of the block's largest absolute error (first of
  ties), 5 index of its largest relative error, 6 elements off by more than the relative rule,
and at flts[k * nparts + part0 + i] (float64), k =
  0 largest absolute error over finite pairs, 1 largest relative error (ref != 0), 2 sum of
  squared differences, 3 sum of squared finite references, 4 max |ref| over finite references.
tol holds atol, rtol, rel_thr, rel_floor as float64 (a scalar launch parameter would be float32).
The rules are compare.py's (its module docstring): finite iff |x| < inf; a finite pair matches
iff |got - ref| <= atol + rtol * |ref|; non-finite values match only the same value (NaN with NaN).

kopt_abs_max: program i stores max |x| over the finite elements of its block (0 when none) at
out[part0 + i].
"""
import triton
import triton.language as tl

NONE_INDEX = 1 << 62            # "no such index": above any element's (compare.py reads it back)
NONE = tl.constexpr(NONE_INDEX)


@triton.jit
def kopt_compare(r_ptr, g_ptr, tol_ptr, ints_ptr, flts_ptr, n, base, nparts, part0,
                 HAS_REL: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    atol = tl.load(tol_ptr)
    rtol = tl.load(tol_ptr + 1)
    rel_thr = tl.load(tol_ptr + 2)
    rel_floor = tl.load(tol_ptr + 3)
    r = tl.load(r_ptr + offs, mask=mask, other=0).to(tl.float64)
    g = tl.load(g_ptr + offs, mask=mask, other=0).to(tl.float64)
    idx = offs + base
    big = tl.full([BLOCK], NONE, tl.int64)
    rabs_all = tl.abs(r)
    rf = rabs_all < float("inf")
    gf = tl.abs(g) < float("inf")
    fin = rf & gf & mask
    same_nonfinite = (r == g) | ((r != r) & (g != g))
    nonfin_bad = (~(rf & gf)) & (~same_nonfinite) & mask
    diff = tl.where(fin, tl.abs(g - r), 0.0)
    rabs = tl.where(rf & mask, rabs_all, 0.0)
    bad = (fin & (diff > atol + rtol * rabs)) | nonfin_bad
    nz = fin & (r != 0)
    rel = tl.where(nz, diff / tl.where(nz, rabs, 1.0), 0.0)
    max_abs = tl.max(diff, axis=0)
    max_rel = tl.max(rel, axis=0)
    if HAS_REL:
        n_rel = tl.sum((fin & (diff > tl.maximum(rabs * rel_thr, rel_floor))).to(tl.int64), axis=0)
    else:
        n_rel = tl.sum(tl.zeros([BLOCK], tl.int64), axis=0)
    rr = tl.where(fin, r, 0.0)
    at = part0 + pid
    tl.store(ints_ptr + at, tl.sum(bad.to(tl.int64), axis=0))
    tl.store(ints_ptr + nparts + at, tl.sum(nonfin_bad.to(tl.int64), axis=0))
    tl.store(ints_ptr + 2 * nparts + at, tl.min(tl.where(bad, idx, big), axis=0))
    tl.store(ints_ptr + 3 * nparts + at, tl.min(tl.where(nonfin_bad, idx, big), axis=0))
    tl.store(ints_ptr + 4 * nparts + at, tl.min(tl.where(fin & (diff == max_abs), idx, big), axis=0))
    tl.store(ints_ptr + 5 * nparts + at, tl.min(tl.where(nz & (rel == max_rel), idx, big), axis=0))
    tl.store(ints_ptr + 6 * nparts + at, n_rel)
    tl.store(flts_ptr + at, max_abs)
    tl.store(flts_ptr + nparts + at, max_rel)
    tl.store(flts_ptr + 2 * nparts + at, tl.sum(diff * diff, axis=0))
    tl.store(flts_ptr + 3 * nparts + at, tl.sum(rr * rr, axis=0))
    tl.store(flts_ptr + 4 * nparts + at, tl.max(rabs, axis=0))


@triton.jit
def kopt_abs_max(x_ptr, out_ptr, n, part0, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    x = tl.abs(tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float64))
    x = tl.where(mask & (x < float("inf")), x, 0.0)
    tl.store(out_ptr + part0 + pid, tl.max(x, axis=0))
