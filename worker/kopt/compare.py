"""Element-wise comparison statistics and content checksums of tensors, computed where the
tensors live (GPU, or host for staged ones) in bounded chunks, so multi-GB outputs never cross
the protocol or touch the disk (PROTOCOL.md, `compare`).

compare_stats(ref, got, atol, rtol, chunk=CHUNK) -> dict, the sufficient statistics of tensor.h's rule,
from which the core decides (it passes the tolerances and applies every threshold itself):
  * shapes must match, else {"shape_mismatch": true, "shape": ref shape, "got_shape": ...};
  * both finite: match iff |got - ref| <= atol + rtol * |ref|;
  * non-finite values must sit at the same places (NaN only with NaN, +inf only with +inf,
    -inf only with -inf); any other pairing involving one is a non-finite mismatch;
  * max_abs_err / max_rel_err over finite pairs (rel: where ref != 0), with their flat indices
    and the values there; first mismatch and first non-finite mismatch (flat index, values);
  * ref_abs_max (max |ref| over finite ref), sum_sq_ref and sum_sq_diff over finite pairs
    (a relative-norm test), and counts;
  * with rel_err = (thr, floor_abs, floor_rel): n_rel_err, the finite pairs whose error exceeds
    both thr * |ref| and the floor max(floor_abs, floor_rel * ref_abs_max) -- elements off by a
    large fraction of their own value (gate 3's count rule: small outputs flushed or coarsely
    rounded, which a bound at the output's largest magnitude does not see); rel_err_floor is
    the floor used. ref_abs_max is then found in a first pass over ref (abs_max; kept outputs
    remember it, so the candidate's and the baseline's comparisons with one reference pay once).
Everything is computed in float64. On CUDA (with Triton) one kernel (kopt.cmpkernel) reads
each element once and leaves per-block partial results, reduced on the device and read back
with one sync: one launch for tensors on the GPU, one per moved chunk for host-staged ones
(device "cpu" while the other is on the GPU, moved `chunk` elements at a time). Elsewhere, or for
a dtype the kernel does not take, torch ops do the same chunk by chunk (about twenty ops and a
few syncs per chunk), so the extra memory is a few chunk-sized temporaries whatever the sizes.

checksum(t, key=None) -> int: a keyed, position-sensitive hash of a tensor's whole storage (all
its bytes), for "this input (or this kept reference) did not change" checks. The sum over the
storage's 32-bit words of a 64-bit keyed mix of (position, word), modulo 2^64. The key (six
32-bit words) is drawn from os.urandom once per worker process (`key=` overrides it, for tests)
and lives only in this process's pageable host memory and in the hashing kernel's launch
parameters: never in a device buffer, so a candidate's kernel, which can read device and pinned
host memory, cannot learn it, and a change it makes to a hashed storage keeps the sum only with
probability ~2^-64 however it is crafted. (The unkeyed sum this replaced could be kept by a
crafted change: two words moved to each other's place, each shifted by a known constant.) The
kernel's partial sums are read back to the host and their device buffer zeroed before it is
released. On CUDA a Triton kernel reads the storage once; elsewhere (or when Triton is
unavailable) the same function is computed with torch ops; a large host tensor is copied to the
GPU a chunk at a time and hashed there when a GPU is present. Sums are comparable within one
worker process only. ChunkSum takes the same sum from the chunks compare_stats moves anyway, so a
comparison with a host-staged reference checks its sum in the same pass (kopt.kept.op_compare).
"""

import os

import torch

from kopt.tensors import storage, whole_storage

CHUNK = 1 << 23       # elements per comparison chunk (8M: a few 64 MB float64 temporaries)
HASH_CHUNK = 1 << 24  # int32 words per torch-fallback checksum chunk

_F1 = 0x85EBCA6B      # the 32-bit finaliser's odd multipliers
_F2 = 0xC2B2AE35
_M32 = 0xFFFFFFFF


def _flat(t):
    t = t.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    return t.reshape(-1) if t.is_contiguous() else t.contiguous().reshape(-1)


def _move(t, lo, hi, device):
    """Elements lo..hi-1 of the flat tensor t on `device` (a view where t lives there)."""
    c = t[lo:hi]
    return c.to(device, non_blocking=False) if c.device != device else c


def _f64(c):
    return (c.to(torch.uint8) if c.dtype == torch.bool else c).to(torch.float64)


def _chunk(t, lo, hi, device):
    return _f64(_move(t, lo, hi, device))


def count_nonfinite(t, chunk=CHUNK, nan_only=False):
    """The non-finite (NaN and +-inf; with nan_only, NaN) elements of floating-point t, `chunk`
    elements at a time: a whole-tensor isfinite held several times t's size at once (4.8 GB
    beside heldout2/hx02's 1 GB output, the main phase's peak). A non-contiguous t is taken in
    slices along its first dimension, each copied contiguous at most `chunk` elements at a time
    (_flat would copy the whole tensor)."""
    if not t.is_contiguous() and t.dim() > 1 and t.numel() > chunk:
        row = max(1, t[0].numel())
        if row >= chunk:
            return sum(count_nonfinite(t[i], chunk, nan_only) for i in range(t.shape[0]))
        step = chunk // row
        return sum(count_nonfinite(t[i:i + step], chunk, nan_only) for i in range(0, t.shape[0], step))
    f = _flat(t)
    n = torch.zeros((), dtype=torch.int64, device=f.device)
    for lo in range(0, f.numel(), chunk):
        c = f[lo:lo + chunk]
        n += (torch.isnan(c) if nan_only else ~torch.isfinite(c)).sum()
    return int(n)


def abs_max(t, chunk=CHUNK):
    """max |t| over its finite elements (0 when none), in float64 chunks where t lives."""
    return _abs_max(_flat(t), t.device, max(1, int(chunk)))


def _abs_max(r_all, device, chunk):
    """max |r| over the finite elements of the flat tensor r_all (0 when none)."""
    kerns = _cmp_kernels(device, r_all, r_all)
    if kerns is not None and r_all.numel():
        return _abs_max_kernel(kerns, r_all, device, chunk)
    m = 0.0
    for lo in range(0, r_all.numel(), chunk):
        r = _chunk(r_all, lo, min(r_all.numel(), lo + chunk), device)
        r = torch.where(torch.isfinite(r), r.abs(), torch.zeros((), dtype=torch.float64, device=device))
        m = max(m, float(r.max()))
        del r
    return m


# ---------------------------------------------------------------- the one-pass kernel
#
# Where the pass runs on CUDA and Triton imports, kopt.cmpkernel's kernels read each element
# once and leave one row of partial results per block; the rows are reduced on the device and
# read back with one sync. Tensors on the device are covered by one launch, host-staged ones by
# one launch per moved chunk. Same rules and statistics as the torch ops (sums may differ in
# their last bits: another order of addition); the interpreter test checks the two agree.

KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.uint8,
                 torch.int16, torch.int32, torch.int64, torch.bool)
BLOCK = 2048          # elements per program of the comparison kernels (8 warps: 8 a thread)
_CMP_KERNELS = None
KERNEL_ON_CPU = False  # tests: run the kernels on host tensors (Triton's interpreter)


def _cmp_kernels(device, r_all, g_all):
    """(kopt_compare, kopt_abs_max, NONE_INDEX) when the pass on `device` can use them (CUDA,
    or KERNEL_ON_CPU; Triton imports; both dtypes in KERNEL_DTYPES), else None."""
    global _CMP_KERNELS
    if not (device.type == "cuda" or KERNEL_ON_CPU):
        return None
    if r_all.dtype not in KERNEL_DTYPES or g_all.dtype not in KERNEL_DTYPES:
        return None
    if _CMP_KERNELS is None:
        try:
            from kopt.cmpkernel import NONE_INDEX, kopt_abs_max, kopt_compare
            _CMP_KERNELS = (kopt_compare, kopt_abs_max, NONE_INDEX)
        except Exception:
            _CMP_KERNELS = False
    return _CMP_KERNELS or None


def _kview(c):
    """A chunk as the kernels load it (bool as its bytes)."""
    return c.view(torch.uint8) if c.dtype == torch.bool else c


def _spans(r_all, g_all, device, chunk, fed):
    """The (lo, hi) ranges of the kernel launches: the whole tensor where both sides are on
    `device` and no content sum is fed, else `chunk` elements at a time."""
    n = r_all.numel()
    step = n if (r_all.device == device and g_all.device == device and not fed) else chunk
    return [(lo, min(n, lo + step)) for lo in range(0, n, max(1, step))]


def _blocks(lo, hi):
    return (hi - lo + BLOCK - 1) // BLOCK


def _abs_max_kernel(kerns, r_all, device, chunk):
    spans = _spans(r_all, r_all, device, chunk, False)
    out = torch.empty(sum(_blocks(lo, hi) for lo, hi in spans), dtype=torch.float64, device=device)
    part0 = 0
    for lo, hi in spans:
        nb = _blocks(lo, hi)
        kerns[1][(nb,)](_kview(_move(r_all, lo, hi, device)), out, hi - lo, part0, BLOCK=BLOCK, num_warps=8)
        part0 += nb
    return float(out.max())


def _at(t, i):
    """Element i of the flat tensor t as a JSON-safe float64 number."""
    return _num(_f64(t[i:i + 1])[0])


def _pass_kernel(kerns, st, r_all, g_all, device, chunk, sums, rel_thr, rel_floor):
    """compare_stats' pass with kopt_compare (see above); accumulates into st."""
    kern, none = kerns[0], kerns[2]
    n = r_all.numel()
    if n == 0:
        return
    spans = _spans(r_all, g_all, device, chunk, any(cs is not None for cs in sums))
    nparts = sum(_blocks(lo, hi) for lo, hi in spans)
    ints = torch.empty(7 * nparts, dtype=torch.int64, device=device)
    flts = torch.empty(5 * nparts, dtype=torch.float64, device=device)
    tol = torch.tensor([st["atol"], st["rtol"], rel_thr or 0.0, rel_floor or 0.0], dtype=torch.float64,
                       device=device)
    part0 = 0
    for lo, hi in spans:
        r, g = _move(r_all, lo, hi, device), _move(g_all, lo, hi, device)
        for cs, c in zip(sums, (r, g)):
            if cs is not None:
                cs.add(c, lo)
        nb = _blocks(lo, hi)
        kern[(nb,)](_kview(r), _kview(g), tol, ints, flts, hi - lo, lo, nparts, part0,
                    HAS_REL=rel_thr is not None, BLOCK=BLOCK, num_warps=8)
        part0 += nb
        del r, g
    ints, flts = ints.view(7, nparts), flts.view(5, nparts)
    big = torch.full((), none, dtype=torch.int64, device=device)
    ma, mr = flts[0].max(), flts[1].max()
    i_ab = torch.where(flts[0] == ma, ints[4], big).min()
    i_rel = torch.where(flts[1] == mr, ints[5], big).min()
    # one read-back: the integers travel as the bits of float64s beside the floats
    host = torch.cat([torch.stack([ints[0].sum(), ints[1].sum(), ints[2].min(), ints[3].min(), i_ab, i_rel,
                                   ints[6].sum()]).view(torch.float64),
                      torch.stack([ma, mr, flts[2].sum(), flts[3].sum(), flts[4].max()])]).cpu()
    nbad, nnf, first, first_nf, i_ab, i_rel, nrel = host[:7].view(torch.int64).tolist()
    ma, mr, ssd, ssr, ram = host[7:].tolist()
    st["n_mismatch"] += int(nbad)
    st["n_nonfinite_mismatch"] += int(nnf)
    if first != none:
        st["first_mismatch"] = int(first)
        st["ref_at_first"], st["got_at_first"] = _at(r_all, first), _at(g_all, first)
    if first_nf != none:
        st["first_nonfinite_mismatch"] = int(first_nf)
        st["ref_at_first_nonfinite"], st["got_at_first_nonfinite"] = _at(r_all, first_nf), _at(g_all, first_nf)
    if ma > st["max_abs_err"] and i_ab != none:
        st["max_abs_err"], st["max_abs_index"] = ma, i_ab
        st["ref_at_max_abs"], st["got_at_max_abs"] = _at(r_all, i_ab), _at(g_all, i_ab)
    if mr > st["max_rel_err"] and i_rel != none:
        st["max_rel_err"], st["max_rel_index"] = mr, i_rel
    if rel_thr is not None:
        st["n_rel_err"] += int(nrel)
    st["sum_sq_diff"] += ssd
    st["sum_sq_ref"] += ssr
    st["ref_abs_max"] = max(st["ref_abs_max"], ram)


def compare_stats(ref, got, atol, rtol, chunk=CHUNK, rel_err=None, ref_abs_max=None, sums=(None, None)):
    """The statistics of got against ref (see the module docstring); a JSON-ready dict.
    ref_abs_max: abs_max(ref) when the caller has it (the first pass is then skipped). sums:
    a ChunkSum (or None) for ref and for got, fed every chunk of the pass as it was moved for
    the comparison (a host-staged tensor then crosses to the GPU once for both)."""
    shape = list(ref.shape)
    dtypes = {"dtype": str(ref.dtype).replace("torch.", ""),
              "got_dtype": str(got.dtype).replace("torch.", "")}
    if list(got.shape) != shape:
        return dict(dtypes, shape_mismatch=True, shape=shape, got_shape=list(got.shape),
                    numel=int(ref.numel()))
    r_all, g_all = _flat(ref), _flat(got)
    device = g_all.device if g_all.device.type == "cuda" else r_all.device
    if device.type == "cpu" and torch.cuda.is_available() and torch.cuda.is_initialized():
        device = torch.device("cuda")   # both sides staged to host memory: chunks go to the GPU
    n = r_all.numel()
    st = {"shape_mismatch": False, "shape": shape, "numel": int(n), "n_mismatch": 0,
          "n_nonfinite_mismatch": 0, "first_mismatch": None, "first_nonfinite_mismatch": None,
          "max_abs_err": 0.0, "max_abs_index": None, "ref_at_max_abs": None,
          "got_at_max_abs": None, "max_rel_err": 0.0, "max_rel_index": None,
          "ref_at_first": None, "got_at_first": None, "ref_at_first_nonfinite": None,
          "got_at_first_nonfinite": None, "ref_abs_max": 0.0, "sum_sq_ref": 0.0,
          "sum_sq_diff": 0.0, "atol": float(atol), "rtol": float(rtol)}
    st.update(dtypes)
    chunk = max(1, int(chunk))
    rel_thr = rel_floor = None
    if rel_err is not None:
        rel_thr = float(rel_err[0])
        if ref_abs_max is None:
            ref_abs_max = _abs_max(r_all, device, chunk)
        rel_floor = max(float(rel_err[1]), float(rel_err[2]) * ref_abs_max)
        st.update(n_rel_err=0, rel_err_thr=rel_thr, rel_err_floor=rel_floor)
    kerns = _cmp_kernels(device, r_all, g_all)
    if kerns is not None:
        _pass_kernel(kerns, st, r_all, g_all, device, chunk, sums, rel_thr, rel_floor)
    else:
        _pass_torch(st, r_all, g_all, device, chunk, sums, rel_thr, rel_floor)
    return st


def _pass_torch(st, r_all, g_all, device, chunk, sums, rel_thr, rel_floor):
    """compare_stats' pass in torch ops, `chunk` elements at a time (about twenty ops and a few
    host syncs per chunk): where there is no GPU or no Triton, or a dtype the kernel does not
    take. Accumulates into st."""
    atol, rtol, n = st["atol"], st["rtol"], r_all.numel()
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        r, g = _move(r_all, lo, hi, device), _move(g_all, lo, hi, device)
        for cs, c in zip(sums, (r, g)):
            if cs is not None:
                cs.add(c, lo)
        r, g = _f64(r), _f64(g)
        rf, gf = torch.isfinite(r), torch.isfinite(g)
        fin = rf & gf
        same_nonfinite = (r == g) | (torch.isnan(r) & torch.isnan(g))
        nonfin_bad = ~fin & ~same_nonfinite
        diff = torch.where(fin, (g - r).abs(), torch.zeros((), dtype=torch.float64, device=device))
        rabs = torch.where(rf, r.abs(), torch.zeros((), dtype=torch.float64, device=device))
        bad = (fin & (diff > atol + rtol * rabs)) | nonfin_bad
        nb = int(bad.sum())
        if nb:
            if st["first_mismatch"] is None:
                i = int(torch.nonzero(bad)[0])
                st["first_mismatch"] = lo + i
                st["ref_at_first"], st["got_at_first"] = _num(r[i]), _num(g[i])
            nnf = int(nonfin_bad.sum())
            if nnf and st["first_nonfinite_mismatch"] is None:
                i = int(torch.nonzero(nonfin_bad)[0])
                st["first_nonfinite_mismatch"] = lo + i
                st["ref_at_first_nonfinite"], st["got_at_first_nonfinite"] = _num(r[i]), _num(g[i])
            st["n_mismatch"] += nb
            st["n_nonfinite_mismatch"] += nnf
        if fin.any():
            m, i = torch.max(diff, 0)
            m = float(m)
            if m > st["max_abs_err"]:
                i = int(i)
                st["max_abs_err"], st["max_abs_index"] = m, lo + i
                st["ref_at_max_abs"], st["got_at_max_abs"] = _num(r[i]), _num(g[i])
            nz = fin & (r != 0)
            if nz.any():
                rel = torch.where(nz, diff / torch.where(nz, r.abs(), torch.ones_like(r)),
                                  torch.zeros((), dtype=torch.float64, device=device))
                m, i = torch.max(rel, 0)
                m = float(m)
                if m > st["max_rel_err"]:
                    st["max_rel_err"], st["max_rel_index"] = m, lo + int(i)
            if rel_thr is not None:
                st["n_rel_err"] += int((fin & (diff > torch.clamp(rabs * rel_thr, min=rel_floor))).sum())
            st["sum_sq_diff"] += float((diff * diff).sum())
            rr = torch.where(fin, r, torch.zeros((), dtype=torch.float64, device=device))
            st["sum_sq_ref"] += float((rr * rr).sum())
        st["ref_abs_max"] = max(st["ref_abs_max"], float(rabs.max())) if hi > lo else st["ref_abs_max"]
        del r, g, rf, gf, fin, same_nonfinite, nonfin_bad, diff, rabs, bad


def _num(x):
    """A JSON-safe number for a 0-d tensor (NaN/inf as the strings the protocol uses)."""
    v = float(x)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


# ---------------------------------------------------------------- checksums
#
# The mix, per 32-bit word w at position p (p_lo, p_hi its low and high 32 bits), with fmix the
# 32-bit finaliser (xor-shift 16, multiply, xor-shift 13, multiply, xor-shift 16) and k0..k5 the
# key:  u = fmix((p_lo ^ k0) + fmix(p_hi ^ k1)),  v = u ^ w,
#       h0 = fmix(fmix(v ^ k2) + k3),  h1 = fmix(fmix(v ^ k4) + k5),  word hash = h0 + 2^32 h1.
# A position's secret u makes a word's hash unpredictable from its value alone; v -> (h0, h1) is
# one-to-one, so any change of a word changes its hash.

_KEY = None
_HASH_KERNEL = None


def new_key():
    """Six random 32-bit words: a checksum key."""
    return tuple(int.from_bytes(os.urandom(4), "little") for _ in range(6))


def _process_key():
    global _KEY
    if _KEY is None:
        _KEY = new_key()
    return _KEY


def _hash_kernel():
    """The Triton checksum kernel (compiled on first use), or None without Triton."""
    global _HASH_KERNEL
    if _HASH_KERNEL is not None:
        return _HASH_KERNEL or None
    try:
        from kopt.hashkernel import kopt_checksum
    except Exception:
        _HASH_KERNEL = False
        return None
    _HASH_KERNEL = kopt_checksum
    return _HASH_KERNEL


def _words(t):
    """The whole storage of t as a flat int32 view (uint8 when its size is not a multiple of
    4 bytes: such storages are tiny)."""
    st = storage(t)
    nbytes = st.nbytes()
    raw = torch.empty(0, dtype=torch.uint8, device=t.device)
    raw.set_(st, 0, (nbytes,), (1,))
    if nbytes % 4 == 0:
        return raw.view(torch.int32)
    return raw


def _fmix_torch(h):
    """The 32-bit finaliser on int64 tensors holding values below 2^32 (products wrap in int64;
    their low 32 bits, all that is kept, are exact)."""
    h = h ^ (h >> 16)
    h = (h * _F1) & _M32
    h = h ^ (h >> 13)
    h = (h * _F2) & _M32
    return h ^ (h >> 16)


def _mix_torch(w, lo, key):
    """The kernel's (sum of h0, sum of h1) over a chunk at positions lo, lo+1, ..., with torch
    int64 ops."""
    k0, k1, k2, k3, k4, k5 = key
    w = w.to(torch.int64) & _M32
    pos = torch.arange(lo, lo + w.numel(), dtype=torch.int64, device=w.device)
    q = _fmix_torch((pos >> 32) ^ k1)
    u = _fmix_torch((((pos & _M32) ^ k0) + q) & _M32)
    v = u ^ w
    h0 = _fmix_torch((_fmix_torch(v ^ k2) + k3) & _M32)
    h1 = _fmix_torch((_fmix_torch(v ^ k4) + k5) & _M32)
    return int(h0.sum()), int(h1.sum())


def _hash_cuda(kern, w, base, key):
    """The kernel's (sum of h0, sum of h1) over the CUDA int32 words w, at positions base,
    base+1, ... (modulo 2^64; partial sums are below 2^44 each). The partial sums come back to
    the host and their device buffer is zeroed before release: nothing key-dependent stays in
    device memory."""
    block = 4096
    n = w.numel()
    nparts = (n + block - 1) // block
    part = torch.empty(2 * nparts, dtype=torch.int64, device=w.device)
    kern[(nparts,)](w, part, n, nparts, base, *key, BLOCK=block)
    host = part.cpu()
    sums = int(host[:nparts].sum()), int(host[nparts:].sum())
    part.zero_()   # after the sums: on a host tensor (the interpreter's tests) .cpu() is part itself
    return sums


def _combine(s0, s1):
    return (s0 + (s1 << 32)) & 0xFFFFFFFFFFFFFFFF


def _hash_words(w, base, key):
    """(sum of h0, sum of h1) of the words w (int32; uint8 storages hash each byte as a word) at
    positions base, base+1, ...: the Triton kernel where w is on CUDA, else the torch mix a
    HASH_CHUNK at a time."""
    kern = _hash_kernel() if w.dtype == torch.int32 else None
    if kern is not None and w.device.type == "cuda":
        return _hash_cuda(kern, w, base, key)
    if w.dtype != torch.int32:
        w = w.to(torch.int32)
    s0 = s1 = 0
    for lo in range(0, w.numel(), HASH_CHUNK):
        a, b = _mix_torch(w[lo:lo + HASH_CHUNK], base + lo, key)
        s0, s1 = s0 + a, s1 + b
    return s0, s1


def checksum(t, key=None):
    """Keyed checksum of t's whole storage (see the module docstring); key defaults to this
    process's. Non-tensors hash to 0."""
    if not isinstance(t, torch.Tensor):
        return 0
    key = _process_key() if key is None else key
    w = _words(t)
    n = w.numel()
    if n == 0:
        return 0
    if (w.dtype == torch.int32 and w.device.type == "cpu" and n > HASH_CHUNK and torch.cuda.is_available()
            and _hash_kernel() is not None):
        # a host-staged tensor: chunks hashed on the GPU (a copy's transfer is far faster than
        # the torch mix on the CPU); the CPU mix only where even a chunk does not fit
        try:
            s0 = s1 = 0
            for lo in range(0, n, HASH_CHUNK):
                a, b = _hash_words(w[lo:lo + HASH_CHUNK].to("cuda"), lo, key)
                s0, s1 = s0 + a, s1 + b
            return _combine(s0, s1)
        except torch.cuda.OutOfMemoryError:
            pass
    return _combine(*_hash_words(w, 0, key))


class ChunkSum:
    """checksum(t) of a tensor that is all of its storage (fusable), accumulated from its
    elements chunk by chunk wherever the chunks are (compare_stats' pass feeds it): the same
    value as checksum(t) once every element was added, once each (complete)."""

    def __init__(self, t, key=None):
        self.key = _process_key() if key is None else key
        self.size, self.numel = t.element_size(), t.numel()
        self.s0 = self.s1 = self.added = 0

    @staticmethod
    def fusable(t, chunk=CHUNK):
        """Whether t's checksum can be taken from chunks of `chunk` elements: t is all of its
        storage (kopt.tensors.whole_storage), and every chunk is whole 32-bit words."""
        if not isinstance(t, torch.Tensor) or not whole_storage(t):
            return False
        size = t.element_size()
        return (t.numel() * size) % 4 == 0 and (max(1, int(chunk)) * size) % 4 == 0

    def add(self, c, lo):
        """Elements lo, lo+1, ... of t (the 1-D contiguous chunk c, on any device)."""
        if c.numel() == 0:
            return
        a, b = _hash_words(c.reshape(-1).view(torch.uint8).view(torch.int32), lo * self.size // 4, self.key)
        self.s0, self.s1 = self.s0 + a, self.s1 + b
        self.added += c.numel()

    @property
    def complete(self):
        return self.added == self.numel

    def value(self):
        return _combine(self.s0, self.s1)


def checksums(items):
    """[checksum or None] for a list of arguments (None for non-tensors)."""
    return [checksum(a) if isinstance(a, torch.Tensor) else None for a in items]
