"""The middle-dimension logsumexp template (templates/kernels/col_logsumexp.py.tmpl) run by Triton's
interpreter on the CPU against float64 PyTorch: logsumexp over a first or middle dimension, with
reduced lengths and inner sizes that leave partial tiles (rows and columns), fp32, and fp16/bf16
computed in fp32 and stored in their own type; columns holding +inf, -inf everywhere, a NaN, or
-inf beside finite values, where ATen's result is +inf, -inf, NaN and finite; and the logsumexp of
x * c (SCALED: Inductor's mul by a constant fused in front); the reduced dimension cut into SPLIT
parts merged by a second kernel (an empty last part too). The mutants must fail (the check can):
the running sum not rescaled when the max rises, the max not added back, the scale 2% off, a row
of each part skipped, the parts' sums merged without rescaling.

usage: TRITON_INTERPRET=1 PY tests/interp/test_col_lse_interp.py (`make interp-check`); exit 0
when every case is within 1e-5 (relative and absolute) of float64 plus half a unit of the last
place for fp16, a whole one for bf16, and the special columns are exactly ATen's, 1 otherwise;
skipped (exit 0, one line) when triton does not import. Rendering: tests/interp/interp_util.py's
mirror of template.c; run as the text kopt judges for it (KOPT=... names the binary).
"""
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
from interp_util import ROOT, load_judged, render  # noqa: E402

TEMPLATE = os.path.join(ROOT, "templates", "kernels", "col_logsumexp.py.tmpl")


def run(mod, shape, dim, dt, out_first, special, scale=1.0):
    """The candidate's worst error over its tolerance on a random input (3 N(0,1) + 5: a shifted
    range, so a missing max is visible); with `special`, columns of infinities and NaN compared
    exactly (returns 1e9 when one differs)."""
    x = (torch.randn(*shape) * 3 + 5).to(dt)
    if special:
        xv = x.movedim(dim, -1)    # (..., C): a view, the writes land in x
        col = [xv[(0,) * (xv.dim() - 2) + (j,)] for j in range(4)]   # columns 0-3 of the first outer block
        col[0][3] = float("inf")        # +inf somewhere: +inf
        col[1][:] = float("-inf")       # -inf everywhere: -inf
        col[2][1] = float("nan")        # a NaN: NaN
        col[3][0] = float("-inf")       # -inf beside finite values: finite
    out_shape = list(shape)
    del out_shape[dim]
    out = torch.full(out_shape, float("nan"), dtype=dt)
    xn, rn = x.numel() // shape[dim], shape[dim]
    if out_first:
        mod.launch(out, x, xn, rn)
    else:
        mod.launch(x, out, xn, rn)
    ref = torch.logsumexp(x.double() * scale, dim)
    ulps = {torch.float32: 0.0, torch.float16: 0.5, torch.bfloat16: 1.0}[dt]
    fin = torch.isfinite(ref)
    if special:
        o, r = out.double()[~fin], ref[~fin]
        same = ((o == r) | (torch.isnan(o) & torch.isnan(r))).all().item()
        if not same or int((~fin).sum()) != 3:
            return 1e9
    if not torch.isfinite(out.double()[fin]).all():
        return 1e9
    tol = 1e-5 * (1 + ref[fin].abs()) + ulps * torch.finfo(dt).eps * ref[fin].abs()
    return ((out.double()[fin] - ref[fin]).abs() / tol).max().item()


def main():
    text = open(TEMPLATE).read()
    f32, f16, b16 = torch.float32, torch.float16, torch.bfloat16
    # (shape, dim, ROWS, BLOCK_I, dtype, output first, special columns)
    cases = [((3, 70, 9), 1, 16, 8, f32, True, False), ((3, 70, 9), 1, 32, 4, f32, False, True),
             ((70, 9), 0, 16, 16, f32, True, True), ((4, 33, 2, 5), 1, 8, 8, f32, True, False),
             ((2, 5, 130), 1, 4, 64, f32, False, False), ((2, 512, 40), 1, 64, 32, f32, True, True),
             ((3, 70, 9), 1, 16, 8, f16, True, True), ((4, 33, 2, 5), 1, 16, 4, b16, True, False),
             ((2, 130, 40), 1, 32, 16, b16, False, True), ((70, 9), 0, 8, 16, f16, True, False),
             ((6, 4, 3, 20), 0, 4, 32, f32, True, True), ((2, 300, 24), 1, 128, 8, f16, True, False)]
    cases = [c + (1.0, 1) for c in cases]
    # logsumexp(x * c) (Inductor's mul by a constant fused in front; fp32 only), special columns too
    cases += [((3, 70, 9), 1, 16, 8, f32, True, True, 0.5, 1), ((70, 9), 0, 16, 16, f32, False, False, 1 / 0.7, 1)]
    # SPLIT parts of the reduced dimension merged by the second kernel: parts that end inside a
    # ROWS step, an empty last part (70 rows in 4 parts of 24), the special columns across parts
    cases += [((70, 9), 0, 8, 16, f32, True, True, 1.0, 4), ((3, 70, 9), 1, 16, 8, f32, False, True, 1.0, 2),
              ((300, 24), 0, 16, 8, f16, True, False, 1.0, 8), ((2, 130, 40), 1, 8, 16, b16, False, True, 1.0, 16),
              ((70, 9), 0, 16, 16, f32, True, True, 0.5, 2)]
    bad = 0
    torch.manual_seed(0)

    def source(dim, rows, bi, out_first, body=text, scale=1.0, split=1):
        return render(body, dict(IN="in_ptr0", OUT="in_out_ptr0" if out_first else "out_ptr0", OUT_FIRST=out_first,
                                 DIM=dim, ROWS=rows, BLOCK_I=bi, SCALED=scale != 1.0, SCALE=repr(scale), NUM_WARPS=4,
                                 SPLIT=split, PARTS=split > 1))

    with tempfile.TemporaryDirectory() as tmp:
        for n, (shape, dim, rows, bi, dt, of, special, sc, split) in enumerate(cases):
            mod = load_judged(source(dim, rows, bi, of, scale=sc, split=split), "cl_%d" % n, tmp)
            err = run(mod, shape, dim, dt, of, special, sc)
            ok = err <= 1
            bad += not ok
            print("%s shape=%s dim=%d %dx%d split %d %s out_first=%s special=%s scale=%.17g max_err/tol=%.3g"
                  % ("ok  " if ok else "FAIL", shape, dim, rows, bi, split, str(dt)[6:], of, special, sc, err))
        # (text, its replacement, what it breaks, the scale the candidate is rendered with, special columns)
        mutants = [("s = tl.where(up, s * e + 1.0, s + e)", "s = tl.where(up, s + 1.0, s + e)", "no rescale", 1.0, False),
                   ("lse = tl.log(sc) + mc\n", "lse = tl.log(sc) + 0.0 * mc\n", "max not added", 1.0, False),
                   ("s * tl.exp(m - mc_fin[None, :]))", "s)", "rows not rescaled to the column's max", 1.0, False),
                   ("        d = tl.where(x == m, 0.0, d)\n", "", "x == m infinite: inf - inf", 1.0, True),
                   ("        x = x * 0.5   #", "        x = x * 0.51   #", "scale 2% off", 0.5, False, 1),
                   ("c_hi = tl.minimum(c_lo + CHUNK, C)", "c_hi = tl.minimum(c_lo + CHUNK - 1, C)", "a row of each part skipped",
                    1.0, False, 4),
                   ("mc, sc = _lse_merge(m, s)\n    tl.store(out_ptr + i", "mc, sc = tl.max(m, 0), tl.sum(s, 0)\n    tl.store(out_ptr + i",
                    "parts' sums not rescaled to the common max", 1.0, False, 4)]
        mutants = [mu if len(mu) == 6 else mu + (1,) for mu in mutants]
        for n, (a, b, what, sc, special, split) in enumerate(mutants):
            src = source(1, 16, 8, True, scale=sc, split=split)
            assert a in src, a
            mod = load_judged(src.replace(a, b), "cl_mutant_%d" % n, tmp)
            err = run(mod, (3, 70, 9), 1, f32, True, special, sc)
            caught = err > 1 or math.isnan(err)
            bad += not caught
            print("%s mutant (%s) max_err/tol=%.3g" % ("ok  " if caught else "FAIL", what, err))
    print("col_logsumexp interp: %d cases and %d mutants, %d failed" % (len(cases), len(mutants), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)   # log(0) in masked-off columns, never stored
    sys.exit(main())
