"""The split softmax templates on the GPU with several programs a row or column (the interpreter
runs programs one after another, so it can only run them with one segment: a program waiting for
a later one would wait for ever): templates/kernels/row_split_softmax.py.tmpl (through
split_softmax_kernel.part) and col_split_softmax.py.tmpl, rendered as kopt renders them and run
as the text kopt judges for them, against float64 PyTorch, on random rows and on rows with the
values the kept-exponential rescaling must get right: a whole segment of -inf (0 out, not NaN),
a whole row or column of -inf (NaN, as ATen), +inf (NaN), NaN, and magnitudes of 1e3.

usage: python3 tests/gpu/check_split_softmax.py (`make gpu-test`, suite `templates`); one line,
exit 0 when every case matches, 1 otherwise.
"""
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interp"))
from interp_util import ROOT, load_judged, render  # noqa: E402

ROW = os.path.join(ROOT, "templates", "kernels", "row_split_softmax.py.tmpl")
COL = os.path.join(ROOT, "templates", "kernels", "col_split_softmax.py.tmpl")


def special(x, dim, seg):
    """x with, along `dim`: a segment of -inf in slice 1, the whole slice 2 -inf, a +inf in slice
    3, a NaN in slice 4, slice 5 scaled by 1e3 (slices along the other dimensions)."""
    x = x.movedim(dim, -1).clone()
    flat = x.reshape(-1, x.shape[-1])
    n = flat.shape[-1]
    flat[1, seg:min(2 * seg, n)] = float("-inf")
    flat[2, :] = float("-inf")
    flat[3, n // 3] = float("inf")
    flat[4, n // 2] = float("nan")
    flat[5] *= 1e3
    return flat.reshape(x.shape).movedim(-1, dim).contiguous()


def same(out, ref):
    """The largest difference where both are numbers, relative to 1 + |reference| (log-softmax of
    x1e3 reaches -1e4, where an fp32 ulp is 1e-3); None when NaN or inf do not match."""
    if not torch.equal(out.isnan(), ref.isnan()) or not torch.equal(out.isinf(), ref.isinf()):
        return None
    fin = torch.isfinite(ref)
    return ((out.double()[fin] - ref[fin]).abs() / (1 + ref[fin].abs())).max().item() if fin.any() else 0.0


def main():
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    torch.manual_seed(0)
    bad, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        # rows: (rows, cols, SEG, LOG, warps): segments that divide the row and ones that do not
        for k, (rows, cols, seg, log, nw) in enumerate([(8, 40000, 4096, False, 4), (8, 40000, 4096, True, 4),
                                                        (6, 393216, 16384, False, 16), (7, 8192 * 3, 8192, False, 8)]):
            mod = load_judged(render(open(ROW).read(), dict(OUT="out_ptr0", SEG=seg, LOG=log, NUM_WARPS=nw)),
                              "row%d" % k, tmp)
            for kind in ("randn", "special"):
                x = torch.randn(rows, cols, device="cuda") * 3
                if kind == "special":
                    x = special(x, 1, seg)
                out = torch.full_like(x, float("nan"))
                mod.launch(x, out, rows, cols)
                torch.cuda.synchronize()
                ref = (torch.log_softmax if log else torch.softmax)(x.double(), -1)
                err = same(out, ref)
                n += 1
                if err is None or err > 1e-5:
                    bad.append("row_split %dx%d seg %d log %s %s: %s" % (rows, cols, seg, log, kind,
                                                                        "NaN/inf differ" if err is None else err))
        # columns: (shape, dim, CB, IB, LOG, warps, scale, reread): scale None is the unscaled form;
        # reread True: the block loaded again after the exchange; "poll": the POLL wait
        for k, (shape, dim, cb, ib, log, nw, scale, rr) in enumerate([
                ((4, 700, 96), 1, 128, 32, False, 4, None, False), ((4, 700, 96), 1, 128, 32, True, 4, None, False),
                ((3, 2048, 64), 1, 256, 16, False, 4, None, False), ((700, 40), 0, 64, 8, False, 2, None, False),
                ((4, 700, 96), 1, 128, 32, False, 4, 1 / 0.7, False), ((4, 700, 96), 1, 128, 32, True, 4, 2.5, False),
                ((4, 700, 96), 1, 128, 32, False, 4, None, True), ((4, 700, 96), 1, 128, 32, True, 4, 2.5, True),
                ((3, 2048, 64), 1, 256, 16, False, 4, 1 / 0.7, True), ((700, 40), 0, 64, 8, False, 2, None, True),
                # "poll": the kernel's POLL wait (plain loads, then the acquire read), set in the plan here
                ((4, 700, 96), 1, 128, 32, False, 4, None, "poll"), ((3, 2048, 64), 1, 256, 16, True, 4, 2.5, "poll"),
                ((700, 40), 0, 64, 8, False, 2, 1 / 0.7, "poll")]):
            src = render(open(COL).read(), dict(IN="in_ptr0", OUT="out_ptr1", DIM=dim, LOG=log, CB=cb, IB=ib,
                                                 NUM_WARPS=nw, SCALED=scale is not None, SCALE=repr(scale),
                                                 REREAD=rr is True))
            mod = load_judged(src.replace('"POLL": False', '"POLL": True') if rr == "poll" else src, "col%d" % k, tmp)
            for kind in ("randn", "special"):
                x = torch.randn(*shape, device="cuda") * 3
                if kind == "special":
                    x = special(x, dim, cb)
                out = torch.full_like(x, float("nan"))
                mod.launch(x, out, x.numel() // shape[dim], shape[dim])
                torch.cuda.synchronize()
                ref = (torch.log_softmax if log else torch.softmax)(x.double() * (scale or 1.0), dim)
                err = same(out, ref)
                n += 1
                if err is None or err > 1e-5:
                    bad.append("col_split %s dim %d cb %d log %s scale %s reread %s %s: %s" % (shape, dim, cb, log, scale, rr, kind,
                                                                           "NaN/inf differ" if err is None else err))
    if bad:
        print("split softmax on the GPU: %d of %d cases wrong: %s" % (len(bad), n, "; ".join(bad)))
        return 1
    print("split softmax on the GPU: %d cases (several segments a row or column; -inf, inf, NaN, x1e3) match "
          "float64 PyTorch" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
