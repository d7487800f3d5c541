"""Developer sweep (GPU): time the pool template's tiles (templates/kernels/pool.py.tmpl: the plain
kernels and the sliding one) on the suite's pooling problems, to pick the variants
builtin_pool.c offers and their order. Each variant is checked against PyTorch's own pooling
first (fresh randn input, output poisoned with NaN; max pooling exact, average within 1e-5), then
timed with CUDA events, L2 flushed before every run, median of 25 after warm-up
(tools/sweeplib.py). Variants whose tile gives a thread fewer than one output are skipped.
usage: python3 tools/pool_sweep.py [NAME ...] (default: every case below; NAME one of them)."""
import os
import sys
import time

import torch
import torch.nn.functional as F

from sweeplib import inductor_ms, print_best, template_module, try_variant

# name: (3-D?, max?, dtype, input shape, kernel, stride, padding, count_include_pad)
CASES = {
    "mp3": (True, True, torch.float16, (24, 32, 64, 128, 128), 3, 2, 1, True),     # level1/35
    "ap3": (True, False, torch.float32, (16, 32, 64, 128, 128), 3, 2, 1, False),   # level1/38
    "mp2": (False, True, torch.float32, (64, 96, 256, 256), 3, 2, 1, True),        # level1/34
    "ap2": (False, False, torch.float32, (64, 64, 320, 320), 5, 3, 2, True),       # level1/37
}


def pool_fn(d3, mx, k, s, p, cip):
    if mx:
        return (lambda t: F.max_pool3d(t, k, s, p)) if d3 else (lambda t: F.max_pool2d(t, k, s, p))
    if d3:
        return lambda t: F.avg_pool3d(t, k, s, p, count_include_pad=cip)
    return lambda t: F.avg_pool2d(t, k, s, p, count_include_pad=cip)


def cdiv(a, b):
    return -(-a // b)


def run_case(name, budget_s):
    d3, mx, dtype, shape, k, s, p, cip = CASES[name]
    x = torch.randn(*shape, device="cuda").to(dtype)
    op = pool_fn(d3, mx, k, s, p, cip)
    ref = op(x)
    y = torch.empty_like(ref)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    gb = (x.numel() + ref.numel()) * x.element_size() / 1e9
    t0 = inductor_ms(op, x, flush, gb, "%s %s %s k%d s%d p%d" % (name, tuple(shape), str(dtype), k, s, p))
    plain = template_module("pool", {"SLIDE": False, "MAX": mx})
    slide = template_module("pool", {"SLIDE": True, "MAX": mx})
    if d3:
        D, H, W = shape[-3:]
        OD, OH, OW = ref.shape[-3:]
    else:
        D, H, W = 1, shape[-2], shape[-1]
        OD, OH, OW = 1, ref.shape[-2], ref.shape[-1]
    planes = ref.numel() // (OD * OH * OW)
    tol = 0.0 if mx else 1e-5
    pair = k == 3 and s == 2 and p == 1
    can_slide = k == s + 1
    variants = []
    if can_slide:
        for bh in ((1, 2, 4) if d3 else (1,)):
            for bw in (16, 32, 64, 128, 256):
                for nw in (1, 2, 4, 8):
                    for odc in (4, 8, 16, 32, 64):
                        if bh * bw >= 32 * nw and bw <= 2 * OW and bh <= OH:
                            variants.append(("slide", bh, bw, nw, odc))
    for bh in (1, 2, 4, 8):
        for bw in (16, 32, 64, 128):
            for nw in (1, 2, 4):
                if bh * bw >= 32 * nw and bw <= 2 * OW:
                    variants.append(("plain", bh, bw, nw, 0))
    out = []
    start = time.time()
    for kind, bh, bw, nw, odc in variants:
        if time.time() - start > budget_s:
            print("  (time: %d variants left)" % (len(variants) - len(out)), flush=True)
            break
        if kind == "slide":
            if d3:
                dd, hh, oh, od, kd, sd, pd, kh, sh, ph = D, H, OH, OD, k, s, p, k, s, p
            else:   # ROWS: the depth is the height, planes single rows
                dd, hh, oh, od, kd, sd, pd, kh, sh, ph = H, 1, 1, OH, k, s, p, 1, 1, 0
            nbh, nbw, ndc = cdiv(oh, bh), cdiv(OW, bw), cdiv(od, odc)

            def f(bh=bh, bw=bw, nw=nw, odc=odc, dd=dd, hh=hh, oh=oh, od=od, kd=kd, sd=sd, pd=pd, kh=kh, sh=sh,
                  ph=ph, nbh=nbh, nbw=nbw, ndc=ndc):
                slide._pool_slide[(planes * ndc * nbh * nbw,)](
                    x, y, dd, hh, W, od, oh, OW, nbh, nbw, ndc, KD=kd, KH=kh, KW=k, SD=sd, SH=sh, SW=s, PD=pd,
                    PH=ph, PW=p, DH=1, DW=1, PAIR=pair, MAX=mx, COUNT_PAD=cip, DIVISOR=0, BH=bh, BW=bw, ODC=odc,
                    SHARE=1, num_warps=nw)
        else:
            nbh, nbw = cdiv(OH, bh), cdiv(OW, bw)
            kd, sd, pd = (k, s, p) if d3 else (1, 1, 0)

            def f(bh=bh, bw=bw, nw=nw, nbh=nbh, nbw=nbw, kd=kd, sd=sd, pd=pd):
                if mx:
                    plain._max_pool[(planes * OD * nbh * nbw,)](
                        x, y, D, H, W, OD, OH, OW, nbh, nbw, KD=kd, KH=k, KW=k, SD=sd, SH=s, SW=s, PD=pd, PH=p,
                        PW=p, DD=1, DH=1, DW=1, BH=bh, BW=bw, num_warps=nw)
                else:
                    plain._avg_pool[(planes * OD * nbh * nbw,)](
                        x, y, D, H, W, OD, OH, OW, nbh, nbw, KD=kd, KH=k, KW=k, SD=sd, SH=s, SW=s, PD=pd, PH=p,
                        PW=p, COUNT_PAD=cip, DIVISOR=0, BH=bh, BW=bw, num_warps=nw)
        key = (kind, bh, bw, nw, odc)
        t = try_variant(key, f, y, ref, tol, flush)
        if t is not None:
            print("  %-30s %.4f ms" % (key, t), flush=True)
            out.append((t, key))
    print_best(out, t0, gb, 12)


def main():
    names = sys.argv[1:] or list(CASES)
    per = float(os.environ.get("POOL_SWEEP_S", "100"))
    for n in names:
        run_case(n, per)


if __name__ == "__main__":
    main()
