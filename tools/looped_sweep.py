"""Developer sweep (GPU): a looped layer norm that reads each row from DRAM once -- the first loop
merges per-chunk statistics (each chunk's mean and centred sum of squares from registers, merged
with Chan's formula, one division a chunk instead of Welford's one an element), the second loop
re-reads the row, which is meant to come from the L2 -- timed against Inductor on the suite's
wide layer norms, over chunk sizes, warps, the grid (a program a row, or a persistent grid of
1, 2 or 4 programs an SM looping over rows, which bounds the rows in flight so that they fit the
L2), the second loop's order (forwards, or backwards: the chunks read last first) and eviction
hints. Each variant is checked against a float64 layer norm first (output poisoned with NaN),
then timed with CUDA events, L2 flushed before every run, median of 25 after warm-up.
usage: python3 tools/looped_sweep.py [ln11|ln06 ...]  (default: both)"""
import sys

import torch

from sweeplib import inductor_ms, module_from_source, print_best, try_variant

SRC = '''
import triton
import triton.language as tl


@triton.jit
def _ln_looped(x_ptr, w_ptr, b_ptr, y_ptr, rows, n, eps, BLOCK: tl.constexpr, REV: tl.constexpr,
               EVICT: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    nchunk = tl.cdiv(n, BLOCK)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = (row + tl.zeros([], tl.int64)) * n
        mean = tl.zeros([], tl.float32)
        m2 = tl.zeros([], tl.float32)
        cnt = tl.zeros([], tl.float32)
        for k in range(0, nchunk):
            c = k * BLOCK + cols
            msk = c < n
            if EVICT:
                v = tl.load(x_ptr + base + c, msk, other=0.0, eviction_policy="evict_last").to(tl.float32)
            else:
                v = tl.load(x_ptr + base + c, msk, other=0.0).to(tl.float32)
            nc = tl.minimum(n - k * BLOCK, BLOCK).to(tl.float32)
            cm = tl.sum(v, 0) / nc
            d = tl.where(msk, v - cm, 0.0)
            tot = cnt + nc
            delta = cm - mean
            mean = mean + delta * (nc / tot)
            m2 = m2 + tl.sum(d * d, 0) + delta * delta * (cnt * nc / tot)
            cnt = tot
        rstd = tl.rsqrt(m2 / n + eps)
        for k in range(0, nchunk):
            if REV:
                kk = nchunk - 1 - k
            else:
                kk = k
            c = kk * BLOCK + cols
            msk = c < n
            if EVICT:
                v = tl.load(x_ptr + base + c, msk, other=0.0, eviction_policy="evict_first").to(tl.float32)
            else:
                v = tl.load(x_ptr + base + c, msk, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, msk, other=0.0, eviction_policy="evict_last").to(tl.float32)
            b = tl.load(b_ptr + c, msk, other=0.0, eviction_policy="evict_last").to(tl.float32)
            tl.store(y_ptr + base + c, ((v - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), msk)
'''


def main():
    which = sys.argv[1:] or ["ln11", "ln06"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    m = module_from_source(SRC, "kopt_looped_sweep")
    for w in which:
        rows, n, dt = {"ln11": (16384, 65536, torch.bfloat16), "ln06": (32768, 16384, torch.float32)}[w]
        x = torch.randn(rows, n, device="cuda", dtype=dt) * 2.0 + 0.5
        wt = torch.empty(n, device="cuda", dtype=dt).uniform_(0.5, 1.5)
        bs = torch.empty(n, device="cuda", dtype=dt).uniform_(-0.5, 0.5)
        ref = torch.empty_like(x)
        for i in range(0, rows, 1024):   # float64 in slices: the whole would not fit beside the rest
            ref[i:i + 1024] = torch.nn.functional.layer_norm(x[i:i + 1024].double(), (n,), wt.double(), bs.double(),
                                                             1e-5).to(dt)
        eager = lambda t: torch.nn.functional.layer_norm(t, (n,), wt, bs, 1e-5)
        tol = 0.01 if dt == torch.bfloat16 else 1e-4
        y = torch.empty_like(x)
        gb = 2 * x.numel() * x.element_size() / 1e9
        t0 = inductor_ms(eager, x, flush, gb, "%s %d x %d %s" % (w, rows, n, dt))
        out = []
        for block in (2048, 4096, 8192):
            for nw in (4, 8, 16):
                per = block // (nw * 32)
                if per < 4 or per > 32:
                    continue
                for grid in (sms, 2 * sms, 4 * sms, rows):
                    for rev in (0, 1):
                        for ev in (0, 1):
                            def f(block=block, nw=nw, grid=grid, rev=rev, ev=ev):
                                m._ln_looped[(grid,)](x, wt, bs, y, rows, n, 1e-5, BLOCK=block, REV=rev, EVICT=ev,
                                                      num_warps=nw)
                            key = (block, nw, "rows" if grid == rows else "%dxSM" % (grid // sms), "rev" if rev else "fwd",
                                   "evict" if ev else "-")
                            t = try_variant(key, f, y, ref, tol, flush)
                            if t is not None:
                                out.append((t, key))
        print_best(out, t0, gb, 16)
        x = y = ref = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
