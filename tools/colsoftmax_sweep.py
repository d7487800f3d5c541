"""Developer sweep (GPU): time the column-softmax templates' variants against Inductor on the
suite's middle-dimension shapes, to pick the variants builtin_colsoftmax.c offers and their order.
Each variant is checked against torch.softmax first (fresh randn input, output poisoned with NaN),
then timed with CUDA events, L2 flushed before every run, median of 25 after warm-up; the split
template's scratch (its zero-filled counters) is reset inside the timed region, as the plan does.
usage: python3 tools/colsoftmax_sweep.py [--dtype float32|bfloat16|float16] [OUTER C INNER ...]
(default 64 2048 4096, float32). The 16-bit types store half the bytes a tile, so their grid
reaches tiles twice as many elements."""
import torch

from sweeplib import print_best, shape_args, shapes, template_module, timeit, try_variant


def load(name):
    """The template's kernels, unscaled (SCALED off: plain softmax)."""
    return template_module(name, {"SCALED": False, "SCALE": "1.0"})


def main():
    dtype, dims, esize = shape_args(torch.float32, [64, 2048, 4096])
    max_tile = 16384 * 4 // esize
    cs, sp = load("col_softmax"), load("col_split_softmax")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for outer, c, inner, x, ref in shapes(dims, dtype, torch.softmax):
        y = torch.empty_like(x)
        gb = 2 * x.numel() * esize / 1e9
        comp = torch.compile(lambda t: torch.softmax(t, dim=1), dynamic=False)
        comp(x)
        t0 = timeit(lambda: comp(x), flush)
        print("shape %d x %d x %d (%s): inductor %.3f ms (%.0f GB/s)" % (outer, c, inner, str(dtype), t0,
                                                                         gb / t0 * 1e3), flush=True)
        res = []
        bc = 1 << (c - 1).bit_length()
        # split tiles: builtin_colsoftmax.c's variants first, then the rest of the grid; each as a
        # pair (the wait an acquire atomic every spin, then POLL: plain loads and one acquire read
        # after them), so that a run cut off by a time limit still compares the two waits on the
        # first tiles. (Session 51 compared the block held through the exchange with REREAD, the
        # block loaded again after it: REREAD was slower at the best tiles.)
        grid = [(256, 32, 4), (128, 32, 2), (128, 64, 4), (128, 32, 4), (256, 16, 2), (512, 16, 8)]
        grid += [(cb, ib, nw) for cb in (8, 16, 32, 64, 128, 256, 512) for ib in (16, 32, 64, 128, 256)
                 for nw in (2, 4, 8, 16) if (cb, ib, nw) not in grid]
        for cb, ib, nw in grid:
            nseg = -(-c // cb)
            if nseg > sms or nseg < 2 or cb * ib > max_tile or cb * ib // (nw * 32) > 64 or cb * ib // (nw * 32) < 4:
                continue
            nit = -(-inner // ib)
            part = torch.empty(2 * outer * nit * nseg * ib, device="cuda")
            sync = torch.zeros(1 + outer * nit, dtype=torch.int32, device="cuda")
            nsegp = 1 << (nseg - 1).bit_length()
            for poll in (False, True):

                def f(part=part, sync=sync, cb=cb, ib=ib, nw=nw, nseg=nseg, nit=nit, nsegp=nsegp, poll=poll):
                    sync.zero_()
                    sp._col_split_softmax[(outer * nit * nseg,)](x, y, part, sync, c, inner, nit, nseg, NSEG=nsegp,
                                                                 CB=cb, IB=ib, LOG=False, REREAD=False, POLL=poll,
                                                                 num_warps=nw)
                res.append((("poll" if poll else "split", cb, ib, nw), f))
        # one program a tile of whole columns (col_softmax), last
        for bi in (4, 8, 16, 32, 64):
            for nw in (4, 8, 16, 32):
                if bc * bi > 32768 or bc * bi // (nw * 32) > 128 or bc * bi // (nw * 32) < 4:
                    continue
                nib = -(-inner // bi)

                def f(bi=bi, nw=nw, nib=nib):
                    cs._col_softmax[(outer * nib,)](x, y, c, inner, nib, BLOCK_C=bc, BLOCK_I=bi, LOG=False, num_warps=nw)
                res.append((("reg", bc, bi, nw), f))
        out = []
        for key, f in res:
            t = try_variant(key, f, y, ref, 1e-5 if esize == 4 else 1e-2, flush)
            if t is not None:   # printed as measured: a run cut off by a time limit keeps what it measured
                print("  %-26s %.3f ms" % (key, t), flush=True)
                out.append((t, key))
        print_best(out, t0, gb, 25)
        x = ref = y = None   # free the GPU memory before the next shape
        torch.cuda.empty_cache()


main()
