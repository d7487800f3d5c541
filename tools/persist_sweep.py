"""Developer sweep (GPU): persistent one-read split kernels. The shipped split kernels
(split_stats_norm_kernel.part, split_softmax_kernel.part, row_split_normalize) launch a program
per row segment; each waits for its row's other segments with nothing else to do, and the layer
norm's programs load their weight and bias segments from the L2 again for every row. Here a grid
of K programs an SM is launched once: program (g, s) owns segment s of rows g, g + G, g + 2G, ...
(G = K * SMs // nseg groups), so that
  - the next row's segment is loaded before the wait on the current row's partials (PRE=1), and
  - the layer norm's weight and bias segment can stay in registers for every row (WREG=1).
Every program of a group walks the same rows in the same order and publishes before it waits, so
nothing waits on a program that is not resident as long as the whole grid is: K is tried only
where the compiled kernel's registers and warps let K programs share an SM. The wait is bounded
(a program that polls 2^15 times goes on with what it has, so a variant that would hang gives a
wrong result instead, and the check refuses it).
Each variant is checked against PyTorch (fresh randn, output poisoned with NaN), then timed with
CUDA events, L2 flushed before every run, median of 25 after warm-up, counters zeroed inside the
timed region as a launch plan does; the shipped non-persistent kernel at its best segments is
timed in the same run.
usage: python3 tools/persist_sweep.py [ln|softmax|l1 ...]  (default: all three)"""
import sys

import torch
import triton
import triton.language as tl

from sweeplib import inductor_ms, ln11_inputs, print_best, try_variant
from split_sweep import load as load_shipped


@triton.jit
def _release(sync_ptr, row):
    """This program's partial for `row` is published (stored before): counted in the row's counter."""
    tl.debug_barrier()
    tl.atomic_add(sync_ptr + row, 1, sem="release")


@triton.jit
def _wait(sync_ptr, row, nseg):
    it = 0
    while (tl.atomic_add(sync_ptr + row, 0, sem="acquire") < nseg) & (it < 32768):
        it += 1


@triton.jit
def _seg_load(x_ptr, row, N, cols, mask, ROWS, OTHER: tl.constexpr):
    """Segment `cols` of row `row` (OTHER where masked or past the last row), streamed past the L1."""
    return tl.load(x_ptr + row.to(tl.int64) * N + cols, mask=mask & (row < ROWS), other=OTHER,
                   eviction_policy="evict_first")


@triton.jit
def _seg_of(nseg, N, SEG: tl.constexpr, NSEG: tl.constexpr):
    """This program's group g, its segment of the row, the segment's columns and their mask, and
    the row's segment indices (NSEG, a power of two) with their mask (the partials to combine)."""
    pid = tl.program_id(0)
    g = pid // nseg
    seg = pid - g * nseg
    cols = seg * SEG + tl.arange(0, SEG)
    ks = tl.arange(0, NSEG)
    return g, seg, cols, cols < N, ks, ks < nseg


@triton.jit
def _persist_ln(x_ptr, w_ptr, b_ptr, y_ptr, part_ptr, sync_ptr, ROWS, N, nseg, G, NSEG: tl.constexpr,
                SEG: tl.constexpr, EPS: tl.constexpr, PRE: tl.constexpr, WREG: tl.constexpr):
    g, seg, cols, mask, ks, km = _seg_of(nseg, N, SEG, NSEG)
    cnt = tl.minimum(N - seg * SEG, SEG) * 1.0
    pn = tl.where(km, tl.minimum(N - ks * SEG, SEG), 0) * 1.0
    nf = N * 1.0
    if WREG:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        bb = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    x = _seg_load(x_ptr, g, N, cols, mask, ROWS, 0.0)
    for i in range(0, tl.cdiv(ROWS - g, G)):
        row = g + i * G
        xf = x.to(tl.float32)
        mean_s = tl.sum(xf, 0) / cnt
        d = tl.where(mask, xf - mean_s, 0.0)
        slot = row * nseg + seg
        tl.store(part_ptr + 2 * slot, mean_s)
        tl.store(part_ptr + 2 * slot + 1, tl.sum(d * d, 0))
        _release(sync_ptr, row)
        nxt = row + G
        if PRE:
            x_next = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, 0.0)
        _wait(sync_ptr, row, nseg)
        pm = tl.load(part_ptr + 2 * (row * nseg + ks), mask=km, other=0.0, volatile=True)
        pq = tl.load(part_ptr + 2 * (row * nseg + ks) + 1, mask=km, other=0.0, volatile=True)
        mean = tl.sum(pn * pm, 0) / nf
        dm = pm - mean
        m2 = tl.sum(tl.where(km, pq + pn * dm * dm, 0.0), 0)
        rstd = 1.0 / tl.sqrt_rn(m2 / nf + EPS)
        y = (xf - mean) * rstd
        if WREG:
            y = y * w + bb
        else:
            y = y * tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32) \
                + tl.load(b_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(y_ptr + row.to(tl.int64) * N + cols, y, mask=mask)
        if PRE:
            x = x_next
        else:
            x = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, 0.0)


@triton.jit
def _persist_softmax(x_ptr, y_ptr, part_ptr, sync_ptr, ROWS, N, nseg, G, NSEG: tl.constexpr, SEG: tl.constexpr,
                     PRE: tl.constexpr):
    g, seg, cols, mask, ks, km = _seg_of(nseg, N, SEG, NSEG)
    x = _seg_load(x_ptr, g, N, cols, mask, ROWS, float("-inf"))
    for i in range(0, tl.cdiv(ROWS - g, G)):
        row = g + i * G
        m = tl.max(x, 0)
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        e = tl.where(mask, tl.exp(x - m_safe), 0.0)
        slot = row * nseg + seg
        tl.store(part_ptr + 2 * slot, m)
        tl.store(part_ptr + 2 * slot + 1, tl.sum(e, 0))
        _release(sync_ptr, row)
        nxt = row + G
        if PRE:
            x_next = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, float("-inf"))
        _wait(sync_ptr, row, nseg)
        pm = tl.load(part_ptr + 2 * (row * nseg + ks), mask=km, other=float("-inf"), volatile=True)
        ps = tl.load(part_ptr + 2 * (row * nseg + ks) + 1, mask=km, other=0.0, volatile=True)
        big = tl.max(pm, 0)
        big_safe = tl.where(big == float("-inf"), 0.0, big)
        total = tl.sum(tl.where(km, ps * tl.exp(pm - big_safe), 0.0), 0)
        scale = tl.exp(m_safe - big) / total
        scale = tl.where(m == float("-inf"), tl.where(big == float("-inf"), float("nan"), 0.0), scale)
        tl.store(y_ptr + row.to(tl.int64) * N + cols, e * scale, mask=mask)
        if PRE:
            x = x_next
        else:
            x = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, float("-inf"))


@triton.jit
def _persist_l1(x_ptr, y_ptr, part_ptr, sync_ptr, ROWS, N, nseg, G, NSEG: tl.constexpr, SEG: tl.constexpr,
                PRE: tl.constexpr):
    g, seg, cols, mask, ks, km = _seg_of(nseg, N, SEG, NSEG)
    x = _seg_load(x_ptr, g, N, cols, mask, ROWS, 0.0)
    for i in range(0, tl.cdiv(ROWS - g, G)):
        row = g + i * G
        tl.store(part_ptr + row * nseg + seg, tl.sum(tl.abs(x), 0))
        _release(sync_ptr, row)
        nxt = row + G
        if PRE:
            x_next = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, 0.0)
        _wait(sync_ptr, row, nseg)
        total = tl.sum(tl.load(part_ptr + row * nseg + ks, mask=km, other=0.0, volatile=True), 0)
        tl.store(y_ptr + row.to(tl.int64) * N + cols, x / total, mask=mask)
        if PRE:
            x = x_next
        else:
            x = _seg_load(x_ptr, nxt, N, cols, mask, ROWS, 0.0)


def fits(kern, nw, k):
    """Whether k programs of the compiled kernel share an SM (registers, threads, shared memory)."""
    regs = kern.n_regs * 32 * nw
    smem = kern.metadata.shared
    return k * regs <= 65536 and k * 32 * nw <= 2048 and k * smem <= 227 * 1024


def main():
    which = sys.argv[1:] or ["ln", "softmax", "l1"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for w in which:
        if w == "ln":    # level1/11_layer_norm_2d_bf16
            rows, n, dt, x, wt, bs, ref, eager = ln11_inputs()
            tol, knobs = 0.01, [(p, r) for p in (1, 0) for r in (1, 0)]
            shipped = load_shipped("split_stats_norm_kernel", False)
            shipped_cfgs = ((8192, 4), (16384, 8))
        elif w == "softmax":   # level1/01_softmax_wide_rows
            rows, n, dt = 1024, 393216, torch.float32
            x = torch.randn(rows, n, device="cuda", dtype=dt)
            ref = torch.softmax(x.double(), dim=1).float()
            eager = lambda t: torch.softmax(t, dim=1)
            tol, knobs = 1e-6, [(1, 0), (0, 0)]
            shipped = load_shipped("split_softmax_kernel", False)
            shipped_cfgs = ((8192, 4), (16384, 8))
        else:            # level1/12_l1_normalize
            rows, n, dt = 8192, 65536, torch.float32
            x = torch.randn(rows, n, device="cuda", dtype=dt)
            ref = (x.double() / x.double().abs().sum(1, keepdim=True)).float()
            eager = lambda t: t / t.abs().sum(1, keepdim=True)
            tol, knobs = 1e-5, [(1, 0), (0, 0)]
            shipped = None
            shipped_cfgs = ()
        y = torch.empty_like(x)
        gb = 2 * x.numel() * x.element_size() / 1e9
        t0 = inductor_ms(eager, x, flush, gb, "%s %d x %d %s, %d SMs" % (w, rows, n, dt, sms))
        out = []
        for seg, nw in shipped_cfgs:   # the shipped one-read kernel, a program a segment
            nseg = -(-n // seg)
            nsegp = 1 << (nseg - 1).bit_length()
            part = torch.empty(2 * rows * nseg, device="cuda")
            sync = torch.zeros(1 + rows, dtype=torch.int32, device="cuda")
            if w == "ln":
                def f(seg=seg, nw=nw, part=part, sync=sync, nseg=nseg, nsegp=nsegp):
                    sync.zero_()
                    shipped._rows_split_stats_norm[(rows * nseg,)](x, wt, bs, y, part, sync, n, nseg, NSEG=nsegp, SEG=seg,
                                                                   C=1, EPS=1e-5, AFFINE=2, num_warps=nw)
            else:
                def f(seg=seg, nw=nw, part=part, sync=sync, nseg=nseg, nsegp=nsegp):
                    sync.zero_()
                    shipped._rows_split_softmax[(rows * nseg,)](x, y, part, sync, n, nseg, NSEG=nsegp, SEG=seg, LOG=False,
                                                                num_warps=nw)
            t = try_variant(("shipped", seg, nw), f, y, ref, tol, flush)
            if t is not None:
                out.append((t, ("shipped", seg, nw)))
        for seg in (4096, 8192, 16384, 32768):
            nseg = -(-n // seg)
            if nseg > sms:
                continue
            nsegp = 1 << (nseg - 1).bit_length()
            part = torch.empty(2 * rows * nseg, device="cuda")
            sync = torch.zeros(rows, dtype=torch.int32, device="cuda")
            for nw in (4, 8, 16, 32):
                per = seg // (nw * 32)
                if per < 4 or per > 64:
                    continue
                for pre, wreg in knobs:
                    kern = None
                    for k in (1, 2, 3, 4):
                        G = k * sms // nseg
                        if G < 1:
                            continue
                        if kern is not None and not fits(kern, nw, k):
                            break
                        grid = (G * nseg,)
                        if w == "ln":
                            def f(grid=grid, G=G, seg=seg, nw=nw, nseg=nseg, nsegp=nsegp, pre=pre, wreg=wreg):
                                sync.zero_()
                                return _persist_ln[grid](x, wt, bs, y, part, sync, rows, n, nseg, G, NSEG=nsegp, SEG=seg,
                                                         EPS=1e-5, PRE=pre, WREG=wreg, num_warps=nw)
                        elif w == "softmax":
                            def f(grid=grid, G=G, seg=seg, nw=nw, nseg=nseg, nsegp=nsegp, pre=pre):
                                sync.zero_()
                                return _persist_softmax[grid](x, y, part, sync, rows, n, nseg, G, NSEG=nsegp, SEG=seg,
                                                              PRE=pre, num_warps=nw)
                        else:
                            def f(grid=grid, G=G, seg=seg, nw=nw, nseg=nseg, nsegp=nsegp, pre=pre):
                                sync.zero_()
                                return _persist_l1[grid](x, y, part, sync, rows, n, nseg, G, NSEG=nsegp, SEG=seg,
                                                         PRE=pre, num_warps=nw)
                        key = ("persist", seg, nw, "k%d" % k, "G%d" % G, "pre%d" % pre) + (("wreg%d" % wreg,) if w == "ln" else ())
                        if kern is None:
                            try:   # compile with one program an SM (always resident) to read its registers
                                kern = f()
                                torch.cuda.synchronize()
                            except Exception as ex:
                                print("  %s: %s" % (key, str(ex).splitlines()[0][:100]), flush=True)
                                break
                            print("  %s: %d registers, %d B shared" % (key, kern.n_regs, kern.metadata.shared), flush=True)
                        t = try_variant(key, f, y, ref, tol, flush)
                        if t is not None:
                            out.append((t, key))
        print_best(out, t0, gb, 20)
        x = y = ref = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
