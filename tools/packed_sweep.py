"""Developer sweep (GPU): a whole 16-bit row held in one program's registers as packed pairs.

A bf16 row of 65,536 values (level1/11's layer norm, bench/heldout10/hc08's log-softmax) is 128 KiB:
as float32 it does not fit one program's registers (1,024 threads x 64 values), so kopt ships either
Inductor's looped kernel (the row read twice) or the one-read split kernel (segments in several
programs exchanging partials). Here one program a row loads the row as int32 words (two bf16 each:
32 registers a thread at 32 warps), takes the statistics from the halves unpacked on the fly, and
unpacks the words again for each later pass over the row (RECOMP 1: through `v | zero` and `v +
zero`, a runtime zero, so that the compiler cannot merge the unpackings and keep 64 float32
registers live across the reductions; RECOMP 0 lets it). Variants: warps, RECOMP, the layer norm's
last pass in two halves (its weight and bias spill less), and the row loaded in its dtype and
widened once ("plain", for comparison). For the layer norm also the split kernel that reads its
segment again after the exchange (from the L2), with the first read in registers or in chunks
("reread": on sm_90 the shipped split kernel takes 168-255 registers a thread at 8,192-element
segments, one or two programs an SM; the chunked reread 62 at 8,192 x 4 warps). Each is checked
against PyTorch first (fresh randn, output poisoned with NaN), then timed with CUDA events, L2
flushed before every run, median of 25 after warm-up, against torch.compile (default) in the same
process.
usage: python3 tools/packed_sweep.py [ln|lsm|sm ...]  (default: all three; a minute or more each)"""
import os
import sys

import torch

from sweeplib import inductor_ms, ln11_inputs, module_from_source, print_best, try_variant

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

SRC = '''
import triton
import triton.language as tl


@triton.jit
def _unpack(v):
    lo = (v << 16).to(tl.float32, bitcast=True)
    hi = (v & -65536).to(tl.float32, bitcast=True)
    return lo, hi


@triton.jit
def _load_row(x_ptr, N2, BLOCK2: tl.constexpr):
    # program_id(0)'s row of N2 int32 words: (offsets, mask, the row's base, the words)
    offs = tl.arange(0, BLOCK2)
    mask = offs < N2
    base = tl.program_id(0).to(tl.int64) * N2
    return offs, mask, base, tl.load(x_ptr + base + offs, mask=mask, other=0)


@triton.jit
def _pack(lo, hi):
    plo = lo.to(tl.bfloat16).to(tl.int16, bitcast=True).to(tl.int32) & 65535
    phi = hi.to(tl.bfloat16).to(tl.int16, bitcast=True).to(tl.int32) << 16
    return plo | phi


@triton.jit
def _ln_packed(x_ptr, w_ptr, b_ptr, y_ptr, N2, zero, EPS: tl.constexpr, BLOCK2: tl.constexpr, RECOMP: tl.constexpr):
    offs, mask, base, v = _load_row(x_ptr, N2, BLOCK2)
    lo, hi = _unpack(v)
    n = N2 * 2.0
    mean = (tl.sum(lo, 0) + tl.sum(hi, 0)) / n
    if RECOMP:
        lo, hi = _unpack(v | zero)
    dlo = tl.where(mask, lo - mean, 0.0)
    dhi = tl.where(mask, hi - mean, 0.0)
    var = (tl.sum(dlo * dlo, 0) + tl.sum(dhi * dhi, 0)) / n
    rstd = 1.0 / tl.sqrt_rn(var + EPS)
    if RECOMP:
        lo, hi = _unpack(v + zero)
    wlo, whi = _unpack(tl.load(w_ptr + offs, mask=mask, other=0))
    blo, bhi = _unpack(tl.load(b_ptr + offs, mask=mask, other=0))
    tl.store(y_ptr + base + offs, _pack((lo - mean) * rstd * wlo + blo, (hi - mean) * rstd * whi + bhi), mask=mask)


@triton.jit
def _ln_packed_halves(x_ptr, w_ptr, b_ptr, y_ptr, N2, zero, EPS: tl.constexpr, BLOCK2: tl.constexpr):
    # _ln_packed with the last pass in two halves of the row (tl.split of a [BLOCK2 / 2, 2] view),
    # the second half's weight and bias loaded after the first half is stored: fewer registers
    # live at once where the weight and bias would otherwise spill
    H: tl.constexpr = BLOCK2 // 2
    row = tl.program_id(0)
    hs = tl.arange(0, H)
    offs = hs[:, None] + H * tl.arange(0, 2)[None, :]
    mask = offs < N2
    base = row.to(tl.int64) * N2
    v = tl.load(x_ptr + base + offs, mask=mask, other=0)
    lo, hi = _unpack(v)
    n = N2 * 2.0
    mean = (tl.sum(tl.sum(lo, 1), 0) + tl.sum(tl.sum(hi, 1), 0)) / n
    lo, hi = _unpack(v | zero)
    dlo = tl.where(mask, lo - mean, 0.0)
    dhi = tl.where(mask, hi - mean, 0.0)
    var = (tl.sum(tl.sum(dlo * dlo, 1), 0) + tl.sum(tl.sum(dhi * dhi, 1), 0)) / n
    rstd = 1.0 / tl.sqrt_rn(var + EPS)
    va, vb = tl.split(v + zero)
    ma = hs < N2
    lo, hi = _unpack(va)
    wlo, whi = _unpack(tl.load(w_ptr + hs, mask=ma, other=0))
    blo, bhi = _unpack(tl.load(b_ptr + hs, mask=ma, other=0))
    tl.store(y_ptr + base + hs, _pack((lo - mean) * rstd * wlo + blo, (hi - mean) * rstd * whi + bhi), mask=ma)
    tl.debug_barrier()
    mb = H + hs < N2
    lo, hi = _unpack(vb)
    wlo, whi = _unpack(tl.load(w_ptr + H + hs, mask=mb, other=0))
    blo, bhi = _unpack(tl.load(b_ptr + H + hs, mask=mb, other=0))
    tl.store(y_ptr + base + H + hs, _pack((lo - mean) * rstd * wlo + blo, (hi - mean) * rstd * whi + bhi), mask=mb)


@triton.jit
def _sm_packed(x_ptr, y_ptr, N2, zero, BLOCK2: tl.constexpr, RECOMP: tl.constexpr, LOG: tl.constexpr):
    offs, mask, base, v = _load_row(x_ptr, N2, BLOCK2)
    lo, hi = _unpack(v)
    lo = tl.where(mask, lo, float("-inf"))
    hi = tl.where(mask, hi, float("-inf"))
    m = tl.maximum(tl.max(lo, 0), tl.max(hi, 0))
    if RECOMP:
        lo, hi = _unpack(v | zero)
        lo = tl.where(mask, lo, float("-inf"))
        hi = tl.where(mask, hi, float("-inf"))
    s = tl.sum(tl.exp(lo - m), 0) + tl.sum(tl.exp(hi - m), 0)
    if RECOMP:
        lo, hi = _unpack(v + zero)
    if LOG:
        ls = tl.log(s)
        ylo = lo - m - ls
        yhi = hi - m - ls
    else:
        r = 1.0 / s
        ylo = tl.exp(lo - m) * r
        yhi = tl.exp(hi - m) * r
    tl.store(y_ptr + base + offs, _pack(ylo, yhi), mask=mask)


@triton.jit
def _plain_row(x_ptr, w_ptr, b_ptr, y_ptr, N, EPS: tl.constexpr, BLOCK: tl.constexpr, OP: tl.constexpr):
    # the unpacked baseline: the row loaded in its dtype and widened once (OP 0 layer norm with
    # weight and bias, 1 log-softmax, 2 softmax)
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    base = row.to(tl.int64) * N
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    if OP == 0:
        mean = tl.sum(x, 0) / N
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt_rn(tl.sum(d * d, 0) / N + EPS)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = d * rstd * w + b
    else:
        x = tl.where(mask, x, float("-inf"))
        m = tl.max(x, 0)
        s = tl.sum(tl.exp(x - m), 0)
        if OP == 1:
            y = x - m - tl.log(s)
        else:
            y = tl.exp(x - m) / s
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
'''


# The split kernel reading its segment again after the exchange: templates/kernels/
# split_stats_norm_kernel.part with its first read optionally in chunks of CH (LOOP1: Chan's
# combination, in order; the segment not held in registers) and its last pass replaced by a second
# read of the segment from the L2, CH elements at a time (the weight and bias per column)
PHASE1 = """    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    cnt = tl.minimum(N - seg * SEG, SEG) * 1.0
    mean_s = tl.sum(x, 0) / cnt
    d = tl.where(mask, x - mean_s, 0.0)
    tl.store(part_ptr + 2 * t, mean_s)
    tl.store(part_ptr + 2 * t + 1, tl.sum(d * d, 0))
"""
PHASE1_REREAD = """    if LOOP1:
        na = 0.0
        mean_s = 0.0
        m2_s = 0.0
        for c in tl.range(0, SEG, CH):
            cc = seg * SEG + c + tl.arange(0, CH)
            mc = cc < N
            xc = tl.load(x_ptr + base + cc, mask=mc, other=0.0, eviction_policy="evict_last").to(tl.float32)
            nc = tl.sum(mc.to(tl.float32), 0)
            mean_c = tl.sum(xc, 0) / tl.maximum(nc, 1.0)
            dc = tl.where(mc, xc - mean_c, 0.0)
            nab = tl.maximum(na + nc, 1.0)
            delta = mean_c - mean_s
            mean_s += delta * nc / nab
            m2_s += tl.sum(dc * dc, 0) + delta * delta * na * nc / nab
            na += nc
    else:
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        cnt = tl.minimum(N - seg * SEG, SEG) * 1.0
        mean_s = tl.sum(x, 0) / cnt
        d = tl.where(mask, x - mean_s, 0.0)
        m2_s = tl.sum(d * d, 0)
    tl.store(part_ptr + 2 * t, mean_s)
    tl.store(part_ptr + 2 * t + 1, m2_s)
"""
LAST_PASS_REREAD = """    for c in tl.range(0, SEG, CH):
        cc = seg * SEG + c + tl.arange(0, CH)
        mc = cc < N
        xc = tl.load(x_ptr + base + cc, mask=mc, other=0.0, eviction_policy="evict_first").to(tl.float32)
        wc = tl.load(w_ptr + cc, mask=mc, other=0.0).to(tl.float32)
        bc = tl.load(b_ptr + cc, mask=mc, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cc, ((xc - mean) * rstd * wc + bc).to(y_ptr.dtype.element_ty), mask=mc)
"""


def reread_source():
    """The re-reading split kernel's text, `_ln_split_reread`, from the template's part."""
    body = "".join(l for l in open(os.path.join(ROOT, "templates", "kernels", "split_stats_norm_kernel.part"))
                   if not l.startswith("#@"))
    assert PHASE1 in body and body.count("    y = (x - mean) * rstd\n") == 1
    body = body.replace(PHASE1, PHASE1_REREAD).replace("AFFINE: tl.constexpr):", "AFFINE: tl.constexpr,\n"
                                                         "                           CH: tl.constexpr, LOOP1: tl.constexpr):")
    body = body[:body.index("    y = (x - mean) * rstd\n")] + LAST_PASS_REREAD
    return body.replace("_rows_split_stats_norm", "_ln_split_reread")


def main():
    which = sys.argv[1:] or ["ln", "lsm", "sm"]
    m = module_from_source(SRC + "\n\n" + reread_source(), "m_packed")
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for w in which:
        if w == "ln":   # level1/11_layer_norm_2d_bf16
            rows, n, dt, x, wt, bs, ref, eager = ln11_inputs()
            tol = 0.01
        else:           # bench/heldout10/hc08 (log-softmax), and softmax at the same shape
            rows, n, dt = 8192, 65536, torch.bfloat16
            x = torch.randn(rows, n, device="cuda", dtype=dt)
            wt = bs = x   # unused
            f = torch.log_softmax if w == "lsm" else torch.softmax
            ref = f(x.double(), dim=1).to(dt)
            eager = (lambda t, f=f: f(t, dim=1))
            tol = 0.01
        y = torch.empty_like(x)
        gb = 2 * x.numel() * x.element_size() / 1e9
        t0 = inductor_ms(eager, x, flush, gb, "%s %d x %d %s" % (w, rows, n, dt))
        xi, yi = x.view(torch.int32), y.view(torch.int32)
        wi, bi = wt.view(torch.int32), bs.view(torch.int32)
        n2 = n // 2
        out = []
        op = {"ln": 0, "lsm": 1, "sm": 2}[w]
        # (kind, warps, RECOMP): a compile of these whole-row kernels takes seconds, so a short list
        kinds = (("packed", 32, 1), ("packed", 16, 1), ("packed", 32, 0), ("plain", 32, 0))
        for kind, nw, recomp in kinds + ((("halves", 32, 1),) if w == "ln" else ()):
            if kind == "halves":
                def f(nw=nw):
                    m._ln_packed_halves[(rows,)](xi, wi, bi, yi, n2, 0, EPS=1e-5, BLOCK2=n2, num_warps=nw)
            elif kind == "plain":
                def f(nw=nw, op=op):
                    m._plain_row[(rows,)](x, wt, bs, y, n, EPS=1e-5, BLOCK=n, OP=op, num_warps=nw)
            elif w == "ln":
                def f(nw=nw, recomp=recomp):
                    m._ln_packed[(rows,)](xi, wi, bi, yi, n2, 0, EPS=1e-5, BLOCK2=n2, RECOMP=recomp, num_warps=nw)
            else:
                def f(nw=nw, recomp=recomp):
                    m._sm_packed[(rows,)](xi, yi, n2, 0, BLOCK2=n2, RECOMP=recomp, LOG=(w == "lsm"), num_warps=nw)
            key = (kind, nw) + (("recomp" if recomp else "cse",) if kind == "packed" else ())
            t = try_variant(key, f, y, ref, tol, flush)
            if t is not None:
                out.append((t, key))
        if w == "ln":   # the split kernel reading its segment again after the exchange (SEG, warps, CH)
            for seg, nw, ch, loop1 in ((8192, 4, 1024, 0), (4096, 4, 1024, 0), (8192, 8, 2048, 0), (8192, 4, 1024, 1),
                                       (16384, 4, 2048, 1), (32768, 8, 4096, 1)):
                nseg = -(-n // seg)
                part = torch.empty(2 * rows * nseg, device="cuda")
                sync = torch.zeros(1 + rows, dtype=torch.int32, device="cuda")

                def f(seg=seg, nw=nw, ch=ch, nseg=nseg, part=part, sync=sync, loop1=loop1):
                    sync.zero_()
                    m._ln_split_reread[(rows * nseg,)](x, wt, bs, y, part, sync, n, nseg, NSEG=1 << (nseg - 1).bit_length(),
                                                       SEG=seg, C=1, EPS=1e-5, AFFINE=2, CH=ch, LOOP1=loop1,
                                                       num_warps=nw)
                key = ("reread", seg, nw, ch) + (("loop1",) if loop1 else ())
                t = try_variant(key, f, y, ref, tol, flush)
                if t is not None:
                    out.append((t, key))
        print_best(out, t0, gb, 16)
        x = y = ref = xi = yi = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
