"""Form P end to end on the CPU: the one-program-per-row templates written as kernel + launch plan
(templates/kernels/row_softmax, row_layer_norm, row_cumsum, row_softmax_stats, row_logsumexp, pool,
cl_group_stats), the launcher kopt writes from each
plan (`kopt lint --show-launcher --json`: the very text kopt judges and ships), run by Triton's
interpreter against a float64 PyTorch reference, for row lengths that are and are not powers of
two. The templates whose programs wait for each other (the row_split_* and region templates)
cannot run with more than one program a row in the interpreter (it runs programs one after
another): row_split_softmax (fp32, fp16, bf16), row_split_normalize, row_split_instance_norm and
row_split_layer_norm, and the region templates region_softmax and region_layer_norm (the same
kernels behind a region's launcher), run here with one
segment a row (their arithmetic, tickets and plans; sm_count() answered as an H200's 132), the
GPU covers the rest.

usage: TRITON_INTERPRET=1 [KOPT=...] PY tests/interp/test_plan_interp.py   (PY: a python with torch
and triton; KOPT: the kopt binary, default build/kopt; `make interp-check`). Exit 0 when every
case is within 1e-5 of float64, 1 otherwise; skipped (exit 0, one line) when triton does not
import.
"""
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
from interp_util import ROOT, judged, load_judged, render  # noqa: E402


def case_softmax(mod, rows, n, log):
    x = torch.randn(rows, n) * 3
    out = torch.full((rows, n), float("nan"))
    mod.launch(x, out, rows, n)
    ref = torch.log_softmax(x.double(), 1) if log else torch.softmax(x.double(), 1)
    return (out.double() - ref).abs().max().item()


def case_split_softmax(mod, rows, n, log, dtype, region=False):
    """row_split_softmax over fp32 or 16-bit rows: computed in fp32, stored in the rows' type. A
    16-bit output is held to one unit of its last place (eps x |ref|, subnormals at eps x tiny),
    scaled so that one unit reads as 1e-5. region: region_softmax's launcher (x, out)."""
    x = (torch.randn(rows, n) * 3).to(dtype)
    out = torch.full((rows, n), float("nan"), dtype=dtype)
    mod.launch(x, out) if region else mod.launch(x, out, rows, n)
    ref = torch.log_softmax(x.double(), 1) if log else torch.softmax(x.double(), 1)
    err = (out.double() - ref).abs()
    if dtype == torch.float32:
        return err.max().item()
    fi = torch.finfo(dtype)
    return 1e-5 * (err / (fi.eps * ref.abs().clamp(min=fi.tiny))).max().item()


def case_layer_norm(mod, rows, n, eps):
    x, w, b = torch.randn(rows, n) + 2, torch.randn(n), torch.randn(n)
    x[1] = 0.1234567   # a constant row: Inductor's Welford gives exactly b there, so must the kernel
    out = torch.full((rows, n), float("nan"))
    mod.launch(x, w, b, out, rows, n)
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), eps)
    if not bool((out[1] == b).all()):
        return float("inf")
    return (out.double() - ref).abs().max().item()


def case_cumsum(mod, rows, n):
    x = torch.randn(rows, n)
    out = torch.full((rows, n), float("nan"))
    mod.launch(x, out, rows, n)
    return (out.double() - torch.cumsum(x.double(), 1)).abs().max().item() / max(1.0, n ** 0.5)


def case_normalize(mod, rows, n, p, eps):
    x = torch.randn(rows, n) + 0.25
    out = torch.full((rows, n), float("nan"))
    mod.launch(x, out, rows, n)
    xd = x.double()
    norm = xd.abs().sum(1, keepdim=True) if p == 1 else xd.pow(2).sum(1, keepdim=True).sqrt()
    return (out.double() - xd / (norm + eps)).abs().max().item()


def case_instance_norm(mod, rows, n, c, eps, affine):
    x = torch.randn(rows, n) * 2 + 1
    out = torch.full((rows, n), float("nan"))
    xd = x.double()
    y = (xd - xd.mean(1, keepdim=True)) / (xd.var(1, unbiased=False, keepdim=True) + eps).sqrt()
    if affine:
        w, b = torch.rand(c) + 0.5, torch.randn(c)
        mod.launch(x, w, b, out, rows, n)
        idx = torch.arange(rows) % c
        y = y * w.double()[idx][:, None] + b.double()[idx][:, None]
    else:
        mod.launch(x, out, rows, n)
    return (out.double() - y).abs().max().item()


def case_split_layer_norm(mod, rows, n, region=False, dtype=torch.float32):
    """row_split_layer_norm; region: region_layer_norm's launcher (x, w, b, out), its weight and
    bias of the rows' type, a 16-bit output held to one unit of its last place (read as 1e-5)."""
    x, w, b = (torch.randn(rows, n) * 2 + 1).to(dtype), (torch.rand(n) + 0.5).to(dtype), torch.randn(n).to(dtype)
    out = torch.full((rows, n), float("nan"), dtype=dtype)
    mod.launch(x, w, b, out) if region else mod.launch(x, w, b, out, rows, n)
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5)
    err = (out.double() - ref).abs()
    if dtype == torch.float32:
        return err.max().item()
    fi = torch.finfo(dtype)
    return 1e-5 * (err / (fi.eps * ref.abs().clamp(min=fi.tiny))).max().item()


def case_softmax_stats(mod, rows, n):
    x = torch.randn(rows, n) * 3
    x[0, n // 2] = float("-inf")   # a -inf element is a zero term
    mx, sm = torch.full((rows,), float("nan")), torch.full((rows,), float("nan"))
    mod.launch(x, mx, sm, rows, n)
    xd = x.double()
    rmax = xd.max(1).values
    rsum = (xd - rmax[:, None]).exp().sum(1)
    return max((mx.double() - rmax).abs().max().item(), ((sm.double() - rsum) / rsum).abs().max().item())


def case_softmax_lsum(mod, rows, n):
    """row_softmax_stats with LSUM (a label-smoothed cross-entropy's first kernel): the max, the
    sum of exponentials and the row's sum of log-probabilities against float64, on rows of randn x
    3 and Inductor's special rows: a -inf element (the sum -inf), a row all -inf (NaN), a row
    holding +inf (NaN), a row holding NaN (NaN), rows of x 1e3 and + 1e3 (the shift must not
    cancel)."""
    x = torch.randn(rows, n) * 3
    x[0, n // 2] = float("-inf")
    x[1] = float("-inf")
    x[2, n // 3] = float("inf")
    x[3, n - 1] = float("nan")
    x[4] *= 1e3
    x[5] += 1e3
    mx, sm, ls = (torch.full((rows,), float("nan")) for _ in range(3))
    mod.launch(x, mx, sm, ls, rows, n)
    xd = x.double()
    rmax = xd.max(1).values
    rsum = (xd - rmax[:, None]).exp().sum(1)
    rls = (xd - rmax[:, None] - rsum.log()[:, None]).sum(1)   # Inductor's elementwise form
    got = ls.double()
    if not (torch.equal(got.isnan(), rls.isnan()) and torch.equal(got.isinf(), rls.isinf())
            and torch.equal(got[got.isinf()], rls[rls.isinf()])):
        print("  special rows differ: got %s, want %s" % (got[:6].tolist(), rls[:6].tolist()))
        return float("inf")
    fin = rls.isfinite()
    ok = slice(6, None)   # the max and sum on the ordinary rows (the special ones: row_softmax_stats' own cases)
    return max((mx.double() - rmax)[ok].abs().max().item(), ((sm.double() - rsum) / rsum)[ok].abs().max().item(),
               ((got - rls)[fin] / rls[fin].abs()).abs().max().item())


def case_logsumexp(mod, rows, n, out_first, dtype=torch.float32, scale=1.0):
    """Rows of randn x 3 with Inductor's special rows: a -inf element (a zero term), a row all -inf
    (-inf out), a row holding +inf (+inf out), a row holding NaN (NaN out), a row of large values
    (x 1e3: the max shift matters). scale: the logsumexp of x * scale (the template's SCALED)."""
    x = (torch.randn(rows, n) * 3).to(dtype)
    x[0, n // 2] = float("-inf")
    if rows >= 5:
        x[1] = float("-inf")
        x[2, n // 3] = float("inf")
        x[3, n - 1] = float("nan")
        x[4] *= 1e3
    out = torch.full((rows,), float("nan"), dtype=dtype)
    if out_first:
        mod.launch(out, x, rows, n)
    else:
        mod.launch(x, out, rows, n)
    ref = torch.logsumexp(x.double() * scale, 1)
    got = out.double()
    if dtype != torch.float32:   # rounded once to the output's type, as Inductor's store does
        ref = ref.to(dtype).double()
    same_special = torch.equal(got.isnan(), ref.isnan()) and torch.equal(got.isinf() & (got > 0), ref.isinf() & (ref > 0)) \
        and torch.equal(got.isinf() & (got < 0), ref.isinf() & (ref < 0))
    fin = ref.isfinite()
    return (got[fin] - ref[fin]).abs().div(ref[fin].abs().clamp(min=1)).max().item() if same_special else float("inf")


def case_avg_pool(mod, shape, k, st, pad, count_pad, divisor, form="vendor"):
    """form: "vendor" (a library call's launcher: x, out), "kernel_inout" (Inductor's persistent
    reduction: out first, then x, xnumel, r0_numel) or "one_d" (x of (N, C, L), out (N, C, 1, OL),
    launched as Inductor's pointwise kernel: x, out, xnumel)."""
    x = torch.randn(*shape)
    if form == "one_d":
        ref = torch.nn.functional.avg_pool1d(x.double(), k[1], st[1], pad[1], False, count_pad).unsqueeze(-2)
        out = torch.full(ref.shape, float("nan"))
        mod.launch(x, out, out.numel())
        return (out.double() - ref).abs().max().item()
    nd = len(shape) - 2
    f = torch.nn.functional.avg_pool3d if nd == 3 else torch.nn.functional.avg_pool2d
    ref = f(x.double(), k, st, pad, False, count_pad, divisor or None)
    out = torch.full(ref.shape, float("nan"))
    if form == "kernel_inout":
        mod.launch(out, x, out.numel(), 1)
    else:
        mod.launch(x, out)
    return (out.double() - ref).abs().max().item()


def case_max_pool(mod, shape, k, st, pad, dil, dtype, one_d):
    """Inductor's max pooling kernel's launch (x, out, xnumel); one_d: x of (N, C, L), out
    (N, C, 1, OL). A NaN and a -inf planted in the input: NaN propagates as ATen's does, -inf is a
    value like any other. Exact: a maximum is one of its inputs."""
    x = torch.randn(*shape).to(dtype)
    flat = x.view(-1)
    flat[7] = flat[shape[-1] + 7] = float("nan")   # rows 0 and 1: one of them in some window
    flat[flat.numel() // 2] = float("-inf")
    if one_d:
        ref = torch.nn.functional.max_pool1d(x.float(), k[1], st[1], pad[1], dil[1]).unsqueeze(-2).to(dtype)
    else:
        f = torch.nn.functional.max_pool3d if len(shape) == 5 else torch.nn.functional.max_pool2d
        ref = f(x.float(), k, st, pad, dil).to(dtype)
    out = torch.full(ref.shape, 7.0).to(dtype)
    mod.launch(x, out, out.numel())
    same = (out == ref) | (out.isnan() & ref.isnan())
    if not ref.isnan().any():
        return float("inf")   # the planted NaN must reach an output
    return 0.0 if bool(same.all()) else float("inf")


def pool_run(mx, shape, k, st, pad, dil, cp, div, dt):
    """A sliding pool case's run: max pooling on Inductor's kernel's launch (x, out, xnumel), or
    average pooling on a vendor region's (x, out)."""
    if mx:
        return lambda m: case_max_pool(m, shape, k, st, pad, dil, dt, False)
    return lambda m: case_avg_pool(m, shape, k, st, pad, cp, div, "vendor")


def case_group_stats(mod, n, c, g, h, w, bias, offset, dtype=torch.float32, layout="channels_last"):
    """Group-norm statistics of an (N, C, H, W) tensor laid out channels-last (mean and Welford's
    m2 per (sample, group)); a channels-first tensor must be refused by the plan's checks."""
    x = (torch.randn(n, h, w, c) + offset).to(dtype).permute(0, 3, 1, 2)
    if layout != "channels_last":
        x = x.contiguous()
    b = torch.randn(c).to(dtype)
    mean, m2 = torch.full((n * g,), float("nan")), torch.full((n * g,), float("nan"))
    args = (x, b, mean, m2) if bias else (x, mean, m2)
    try:
        mod.launch(*args, n * g, c // g * h * w)
    except ValueError:
        return 0.0 if layout != "channels_last" else float("inf")
    if layout != "channels_last":
        return float("inf")   # launched on a layout it does not read
    v = x.double() + (b.double()[None, :, None, None] if bias else 0)
    v = v.reshape(n, g, c // g, h * w)
    rmean = v.mean(dim=(2, 3)).reshape(-1)
    rm2 = ((v - v.mean(dim=(2, 3), keepdim=True)) ** 2).sum(dim=(2, 3)).reshape(-1)
    return max(((mean.double() - rmean).abs() / (1 + rmean.abs())).max().item(),
               ((m2.double() - rm2).abs() / rm2).max().item())


def integer_forms_match_triton():
    """The launcher writes a plan's cdiv(a, b) and next_pow2(n) as plain arithmetic
    (src/gates/plan.c, plan_expr_emit); they must be the pinned Triton's own functions."""
    import triton
    bad = 0
    for n in list(range(-3, 2100)) + [393215, 393216, 393217, (1 << 31) - 1, 1 << 31, (1 << 31) + 1]:
        bad += (1 << (n - 1).bit_length() if n > 0 else 0) != triton.next_power_of_2(n)
        for b in (1, 2, 3, 64, 512, 2048, 8192):
            bad += ((n + b - 1) // b) != triton.cdiv(n, b)
    print("%s the launcher's cdiv and next_pow2 against triton's (%d differ)" % ("ok  " if not bad else "FAIL", bad))
    return bad


def main():
    bad = integer_forms_match_triton()
    # the interpreter has no GPU to ask for its SM count (sm_count() in a plan's checks)
    torch.cuda.get_device_properties = lambda d: types.SimpleNamespace(multi_processor_count=132)
    cases = []
    for log in (False, True):
        for rows, n in ((3, 100), (4, 256)):
            cases.append(("row_softmax", dict(OUT="out_ptr0", LOG=log, NUM_WARPS=4),
                          lambda m, r=rows, n=n, lg=log: case_softmax(m, r, n, lg), "log=%s %dx%d" % (log, rows, n)))
    for log in (False, True):   # one segment a row (SEG >= n): the interpreter runs programs in turn
        for rows, n, seg, dt in ((3, 100, 128, torch.float32), (2, 300, 512, torch.float16),
                                 (2, 300, 512, torch.bfloat16)):
            cases.append(("row_split_softmax", dict(OUT="out_ptr2", SEG=seg, LOG=log, NUM_WARPS=4),
                          lambda m, r=rows, n=n, lg=log, d=dt: case_split_softmax(m, r, n, lg, d),
                          "log=%s %dx%d %s" % (log, rows, n, str(dt)[6:])))
    for rows, n in ((3, 100), (2, 512)):
        cases.append(("row_layer_norm", dict(OUT="out_ptr0", EPS="1e-05", NUM_WARPS=4),
                      lambda m, r=rows, n=n: case_layer_norm(m, r, n, 1e-5), "%dx%d" % (rows, n)))
    for rows, n in ((3, 100), (2, 300)):
        cases.append(("row_cumsum", dict(OUT="out_ptr0", CHUNK=64, NUM_WARPS=4),
                      lambda m, r=rows, n=n: case_cumsum(m, r, n), "%dx%d" % (rows, n)))
    for p, eps in ((1, 0.0), (2, 1e-12), (2, 0.5)):
        for rows, n, seg in ((3, 100, 128), (2, 256, 256)):
            cases.append(("row_split_normalize", dict(OUT="out_ptr1", SEG=seg, P=p, EPS=repr(eps), NUM_WARPS=4),
                          lambda m, r=rows, n=n, p=p, e=eps: case_normalize(m, r, n, p, e),
                          "p=%d eps=%g %dx%d" % (p, eps, rows, n)))
    for affine in (True, False):
        for rows, n, seg in ((6, 100, 128), (3, 256, 256)):   # rows: a multiple of C = 3 (the plan checks it)
            cases.append(("row_split_instance_norm",
                          dict(OUT="out_ptr2" if affine else "out_ptr0", SEG=seg, C=3 if affine else 1, EPS="1e-05",
                               AFFINE=affine, NUM_WARPS=4),
                          lambda m, r=rows, n=n, a=affine: case_instance_norm(m, r, n, 3, 1e-5, a),
                          "affine=%s %dx%d" % (affine, rows, n)))
    for rows, n, seg in ((3, 100, 128), (2, 256, 256)):
        cases.append(("row_split_layer_norm", dict(OUT="out_ptr2", SEG=seg, EPS="1e-05", NUM_WARPS=4),
                      lambda m, r=rows, n=n: case_split_layer_norm(m, r, n), "%dx%d" % (rows, n)))
    # the region templates, the same kernels behind a region's launcher (x, out) / (x, w, b, out),
    # one segment a row
    for log in (False, True):
        for rows, n, seg in ((3, 100, 128), (2, 256, 256)):
            cases.append(("region_softmax", dict(SEG=seg, LOG=log, NUM_WARPS=4),
                          lambda m, r=rows, n=n, lg=log: case_split_softmax(m, r, n, lg, torch.float32, region=True),
                          "log=%s %dx%d" % (log, rows, n)))
    for rows, n, seg, dt in ((3, 100, 128, torch.float32), (2, 256, 256, torch.float32), (3, 300, 512, torch.float16)):
        cases.append(("region_layer_norm", dict(N=n, EPS="1e-05", SEG=seg, NUM_WARPS=4),
                      lambda m, r=rows, n=n, d=dt: case_split_layer_norm(m, r, n, region=True, dtype=d),
                      "%dx%d %s" % (rows, n, str(dt)[6:])))
    for rows, n, chunk, tr in ((3, 100, 32, 1), (2, 1000, 256, 1), (4, 64, 64, 1), (3, 1000, 256, 4), (2, 100, 128, 8)):
        cases.append(("row_softmax_stats", dict(MAX="out_ptr0", SUM="out_ptr1", LSUM=False, LSUM_OUT="out_ptr2",
                                                CHUNK=chunk, ROWS=tr, SCALED=False, SCALE="1.0", NUM_WARPS=4),
                      lambda m, r=rows, n=n: case_softmax_stats(m, r, n), "%dx%d chunk %d rows %d" % (rows, n, chunk, tr)))
    for rows, n, chunk, tr in ((8, 100, 32, 1), (9, 1000, 256, 1), (8, 1000, 256, 4), (8, 300, 128, 8)):
        cases.append(("row_softmax_stats", dict(MAX="out_ptr0", SUM="out_ptr1", LSUM=True, LSUM_OUT="out_ptr2",
                                                CHUNK=chunk, ROWS=tr, SCALED=False, SCALE="1.0", NUM_WARPS=4),
                      lambda m, r=rows, n=n: case_softmax_lsum(m, r, n), "lsum %dx%d chunk %d rows %d" % (rows, n, chunk, tr)))
    # scale: logsumexp(x * c) (Inductor's mul by a constant fused in front; fp32 only)
    for rows, n, chunk, tr, first, dt, sc in ((6, 100, 32, 1, True, torch.float32, 1.0),
                                              (5, 1000, 256, 1, False, torch.float32, 1.0),
                                              (2, 64, 64, 1, True, torch.float32, 1.0),
                                              (5, 300, 128, 1, False, torch.float16, 1.0),
                                              (6, 1000, 256, 4, True, torch.float32, 1.0),
                                              (5, 300, 128, 8, False, torch.float16, 1.0),
                                              (6, 1000, 256, 4, True, torch.float32, 0.5),
                                              (5, 300, 128, 1, False, torch.float32, 1 / 0.7)):
        cases.append(("row_logsumexp", dict(OUT="in_out_ptr0" if first else "out_ptr2", OUT_FIRST=first, CHUNK=chunk,
                                            ROWS=tr, SCALED=sc != 1.0, SCALE=repr(sc), NUM_WARPS=4),
                      lambda m, r=rows, n=n, f=first, d=dt, c=sc: case_logsumexp(m, r, n, f, d, c),
                      "%dx%d chunk %d rows %d out_first=%s %s scale %.17g" % (rows, n, chunk, tr, first, str(dt)[6:], sc)))
    # average pooling: a vendor region's launcher, and Inductor's own kernels (the output first, and
    # 1-D pooling through unsqueeze); odd sizes so that tiles and windows are masked
    vendor = dict(IN="in_ptr0", OUT="out_ptr0", OUT_FIRST=False, XNUMEL=False, R0NUMEL=False, IN3=False)
    inout = dict(IN="in_ptr0", OUT="in_out_ptr0", OUT_FIRST=True, XNUMEL=True, R0NUMEL=True, IN3=False)
    one_d = dict(IN="in_ptr0", OUT="out_ptr0", OUT_FIRST=False, XNUMEL=True, R0NUMEL=False, IN3=True)
    for shape, k, st, pad, cp, div, bh, bw, form, sig in (
            ((2, 3, 5, 9, 11), [3, 3, 3], [2, 2, 2], [1, 1, 1], False, 0, 2, 4, "vendor", vendor),
            ((2, 3, 5, 9, 11), [3, 3, 3], [2, 2, 2], [1, 1, 1], True, 0, 1, 8, "vendor", vendor),
            ((1, 2, 4, 7, 6), [2, 3, 2], [1, 2, 2], [1, 1, 0], False, 5, 4, 2, "vendor", vendor),
            ((2, 3, 13, 12), [7, 7], [2, 2], [3, 3], True, 0, 2, 4, "vendor", vendor),
            ((2, 3, 13, 12), [5, 3], [3, 1], [2, 1], False, 0, 1, 16, "vendor", vendor),
            ((2, 3, 17, 11), [5, 5], [3, 3], [2, 2], True, 0, 2, 8, "kernel_inout", inout),
            ((2, 3, 37), [1, 8], [1, 4], [0, 2], True, 0, 1, 8, "one_d", one_d),
            ((2, 3, 37), [1, 3], [1, 2], [0, 1], False, 0, 1, 4, "one_d", one_d)):
        d3 = len(shape) == 5
        kk, ss, pp = ([1] + k, [1] + st, [0] + pad) if not d3 else (k, st, pad)
        prm = dict(sig, MAX=False, ND3=d3, KD=kk[0], KH=kk[1], KW=kk[2], SD=ss[0], SH=ss[1], SW=ss[2], PD=pp[0],
                   PH=pp[1], PW=pp[2], DD=1, DH=1, DW=1, EKD=kk[0], EKH=kk[1], EKW=kk[2], COUNT_PAD=cp, DIVISOR=div,
                   BH=bh, BW=bw, NUM_WARPS=1, SLIDE=False, PAIR=False, ODC=1, SHARE=1, ROWS=False)
        cases.append(("pool", prm,
                      lambda m, sh=shape, k=k, st=st, pad=pad, cp=cp, div=div, fm=form:
                      case_avg_pool(m, sh, k, st, pad, cp, div, fm),
                      "%s %s k%s s%s p%s count_pad=%s divisor=%d" % (form, shape, k, st, pad, cp, div)))
    # max pooling on Inductor's kernels (x, out, xnumel): 3-D, 2-D with dilation, 1-D dilated
    # through unsqueeze; NaN and -inf planted in the input, fp16 too (bf16: the interpreter has no
    # bf16 constants)
    poi = dict(IN="in_ptr0", OUT="out_ptr0", OUT_FIRST=False, XNUMEL=True, R0NUMEL=False, IN3=False)
    for shape, k, st, pad, dil, bh, bw, dt, sig in (
            ((2, 3, 5, 9, 11), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], 2, 4, torch.float32, poi),
            ((2, 2, 6, 8, 9), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], 4, 8, torch.float16, poi),
            ((2, 3, 13, 12), [3, 2], [2, 1], [1, 1], [2, 3], 2, 4, torch.float32, poi),
            ((2, 3, 37), [1, 4], [1, 2], [0, 2], [1, 3], 1, 8, torch.float32, one_d),
            ((2, 3, 40), [1, 3], [1, 2], [0, 1], [1, 1], 1, 4, torch.float16, one_d)):
        d3 = len(shape) == 5
        kk, ss, pp, dd = ([1] + k, [1] + st, [0] + pad, [1] + dil) if not d3 else (k, st, pad, dil)
        prm = dict(sig, MAX=True, ND3=d3, KD=kk[0], KH=kk[1], KW=kk[2], SD=ss[0], SH=ss[1], SW=ss[2], PD=pp[0],
                   PH=pp[1], PW=pp[2], DD=dd[0], DH=dd[1], DW=dd[2], EKD=dd[0] * (kk[0] - 1) + 1,
                   EKH=dd[1] * (kk[1] - 1) + 1, EKW=dd[2] * (kk[2] - 1) + 1, COUNT_PAD=False, DIVISOR=0,
                   BH=bh, BW=bw, NUM_WARPS=1, SLIDE=False, PAIR=False, ODC=1, SHARE=1, ROWS=False)
        cases.append(("pool", prm,
                      lambda m, sh=shape, k=k, st=st, pad=pad, dil=dil, dt=dt, one=sig is one_d:
                      case_max_pool(m, sh, k, st, pad, dil, dt, one),
                      "max %s k%s s%s p%s d%s %s" % (shape, k, st, pad, dil, dt)))
    # the sliding strategy (3-D windows sharing one plane, k = s + 1 in depth): output depths per
    # program that do not divide the output's depth, paired row loads (width k3 s2 p1) or not (a
    # k2 s1 width window; dilated height), max with NaN and -inf planted (fp16 too), average with
    # the padding counted, not counted, and a divisor override
    for shape, k, st, pad, dil, mx, cp, div, bh, bw, odc, dt, sig in (
            ((2, 3, 9, 9, 11), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 0, 2, 4, 2, torch.float32, poi),
            ((2, 2, 7, 8, 9), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 0, 1, 8, 4, torch.float16, poi),
            ((2, 3, 8, 9, 7), [2, 3, 2], [1, 1, 1], [1, 1, 0], [1, 2, 1], True, False, 0, 2, 4, 4, torch.float32, poi),
            ((2, 3, 9, 9, 11), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], False, False, 0, 2, 4, 2, torch.float32,
             vendor),
            ((2, 3, 9, 10, 12), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], False, True, 0, 1, 8, 8, torch.float32,
             vendor),
            ((1, 2, 6, 7, 6), [3, 2, 3], [2, 1, 2], [1, 1, 1], [1, 1, 1], False, False, 5, 4, 2, 2, torch.float32,
             vendor),
            # SHARE 2: a depth window of 3 at stride 1 (two planes kept for the next depth)
            ((2, 2, 7, 8, 9), [3, 3, 3], [1, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 0, 2, 4, 3, torch.float32, poi),
            ((2, 3, 6, 7, 9), [3, 3, 2], [1, 1, 2], [0, 1, 1], [1, 1, 1], False, True, 0, 2, 8, 4, torch.float32,
             vendor)):
        pair = k[2] == 3 and st[2] == 2 and pad[2] == 1
        prm = dict(sig, MAX=mx, ND3=True, KD=k[0], KH=k[1], KW=k[2], SD=st[0], SH=st[1], SW=st[2], PD=pad[0],
                   PH=pad[1], PW=pad[2], DD=dil[0], DH=dil[1], DW=dil[2], EKD=dil[0] * (k[0] - 1) + 1,
                   EKH=dil[1] * (k[1] - 1) + 1, EKW=dil[2] * (k[2] - 1) + 1, COUNT_PAD=cp, DIVISOR=div,
                   BH=bh, BW=bw, NUM_WARPS=1, SLIDE=True, PAIR=pair, ODC=odc,
                   SHARE=1 if k[0] == st[0] + 1 else 2, ROWS=False)
        run = pool_run(mx, shape, k, st, pad, dil, cp, div, dt)
        cases.append(("pool", prm, run, "slide %s %s k%s s%s p%s d%s count_pad=%s divisor=%d odc %d pair=%s %s"
                      % ("max" if mx else "avg", shape, k, st, pad, dil, cp, div, odc, pair, dt)))
    # 2-D pooling slid down its rows (ROWS: the template's depth is the height, its planes single
    # rows): a window of 3 at stride 1 (SHARE 2: hy05's 3x3 s1 p1), of 3 at stride 2 with paired
    # row loads (level1/34's 3x3 s2 p1), of 2 at stride 1; rows per program that do not divide the
    # output's height, tiles narrower than a row; max with NaN and -inf planted (fp16 too), average
    # with the padding counted, not counted, and a divisor override
    for shape, k, st, pad, dil, mx, cp, div, bw, odc, dt, sig in (
            ((2, 3, 13, 11), [3, 3], [1, 1], [1, 1], [1, 1], True, False, 0, 16, 4, torch.float32, poi),
            ((2, 2, 9, 20), [3, 3], [1, 1], [1, 1], [1, 2], True, False, 0, 8, 8, torch.float16, poi),
            ((2, 3, 13, 12), [3, 3], [2, 2], [1, 1], [1, 1], True, False, 0, 8, 2, torch.float32, poi),
            ((2, 3, 10, 9), [2, 2], [1, 1], [0, 1], [1, 1], True, False, 0, 4, 4, torch.float16, poi),
            ((2, 3, 10, 9), [3, 3], [1, 1], [1, 1], [1, 1], False, False, 0, 16, 4, torch.float32, vendor),
            ((2, 3, 11, 10), [3, 3], [1, 1], [1, 0], [1, 1], False, True, 0, 4, 8, torch.float32, vendor),
            ((2, 3, 12, 13), [3, 3], [2, 2], [1, 1], [1, 1], False, False, 0, 4, 2, torch.float32, vendor),
            ((1, 2, 9, 7), [2, 3], [1, 2], [1, 1], [1, 1], False, True, 5, 8, 4, torch.float32, vendor)):
        pair = k[1] == 3 and st[1] == 2 and pad[1] == 1 and dil[1] == 1
        share = 1 if k[0] == st[0] + 1 else 2
        prm = dict(sig, MAX=mx, ND3=False, ROWS=True, KD=k[0], KH=1, KW=k[1], SD=st[0], SH=1, SW=st[1], PD=pad[0],
                   PH=0, PW=pad[1], DD=1, DH=1, DW=dil[1], EKD=k[0], EKH=1, EKW=dil[1] * (k[1] - 1) + 1,
                   COUNT_PAD=cp, DIVISOR=div, BH=1, BW=bw, NUM_WARPS=1, SLIDE=True, PAIR=pair, ODC=odc, SHARE=share)
        run = pool_run(mx, shape, k, st, pad, dil, cp, div, dt)
        cases.append(("pool", prm, run, "rows %s %s k%s s%s p%s d%s count_pad=%s divisor=%d odc %d share %d pair=%s %s"
                      % ("max" if mx else "avg", shape, k, st, pad, dil, cp, div, odc, share, pair, dt)))
    # group-norm statistics over channels-last data: with and without a bias, an offset far from
    # zero (the shifted sums must hold), one chunk or several a sample, fp16, and a channels-first
    # tensor the launch must refuse
    for n, c, g, h, w, bias, off, ns, sb, dt, lay in (
            (2, 16, 4, 4, 8, True, 0.0, 2, 8, torch.float32, "channels_last"),
            (3, 32, 8, 6, 4, False, 300.0, 1, 8, torch.float32, "channels_last"),
            (2, 16, 2, 8, 8, True, 50.0, 4, 4, torch.float16, "channels_last"),
            (2, 16, 4, 4, 8, True, 0.0, 2, 8, torch.float32, "channels_first")):
        cases.append(("cl_group_stats", dict(MEAN="out_ptr0", M2="out_ptr1", BIAS=bias, C=c, G=g, SB=sb, NSPLIT=ns,
                                             NUM_WARPS=2),
                      lambda m, a=(n, c, g, h, w, bias, off, dt, lay): case_group_stats(m, *a[:7], dtype=a[7], layout=a[8]),
                      "%dx%dx%dx%d G=%d bias=%s offset=%g nsplit=%d %s %s" % (n, c, h, w, g, bias, off, ns,
                                                                           str(dt)[6:], lay)))
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for k, (tmpl, params, run, what) in enumerate(cases):
            text = render(open(os.path.join(ROOT, "templates", "kernels", tmpl + ".py.tmpl")).read(), params)
            if judged(text, os.path.join(tmp, "form_%d.py" % k))[1] != "P":
                raise SystemExit("%s is not a form-P template" % tmpl)
            mod = load_judged(text, "plan_%d" % k, tmp)
            try:
                err = run(mod)
            except Exception as exc:  # one case failing in the interpreter must not hide the others
                print("FAIL %s %s raised %s" % (tmpl, what, repr(exc)[:300]))
                bad += 1
                continue
            ok = err <= 1e-5
            bad += not ok
            print("%s %s %s max_err=%.3g" % ("ok  " if ok else "FAIL", tmpl, what, err))
    print("plan interp: %d cases, %d failed" % (len(cases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
