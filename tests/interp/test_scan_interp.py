"""The scan template (templates/kernels/scan.py.tmpl) run by Triton's interpreter on the CPU
against a float64 PyTorch reference, for every reading the scan family makes (inclusive,
shifted by +1 / -1, reversed as a region, masked, masked + shifted + reversed) over the last,
a middle and the first dimension, with sizes that leave partial chunks and tiles; fp16 and bf16
values summed in fp32 and stored in their own type, held to one unit of their last place; the
logcumsumexp reading; and cummax's values (MAX) compared exactly, NaN and ties included, with two
mutants that must fail.

usage: TRITON_INTERPRET=1 PY tests/interp/test_scan_interp.py   (PY: a python with torch and
triton, any device; `make interp-check`). Exit 0 when every case is within 1e-4 of float64
(the sums here are at most 300 terms of randn), 1 otherwise; skipped (exit 0, one line) when
triton does not import.

The template is rendered by tests/interp/interp_util.py's mirror of src/agents/template.c and run
as the text kopt judges for it (its plan lowered to kopt's launcher by `kopt lint
--show-launcher`; KOPT=... names the binary, default build/kopt).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
from interp_util import ROOT, load_judged, render  # noqa: E402

TEMPLATE = os.path.join(ROOT, "templates", "kernels", "scan.py.tmpl")


def reference(x, dim, shift, reverse, mask):
    x = x.double()
    if mask is not None:
        x = torch.where(mask, x, torch.zeros_like(x))
    n = x.shape[dim]
    if shift == 1:
        x = torch.cat([torch.zeros_like(x.narrow(dim, 0, 1)), x.narrow(dim, 0, n - 1)], dim)
    elif shift == -1:
        x = torch.cat([x.narrow(dim, 1, n - 1), torch.zeros_like(x.narrow(dim, 0, 1))], dim)
    if reverse:
        return torch.cumsum(x.flip(dim), dim).flip(dim)
    return torch.cumsum(x, dim)


def main():
    text = open(TEMPLATE).read()
    cases = [(shape, dim, shift, rev, masked, region)
             for shape, dim in [((5, 300), 1), ((3, 70, 9), 1), ((70, 9), 0), ((4, 3, 33), 2), ((2, 50, 130), 1)]
             for shift, rev, masked, region in [(0, False, False, False), (1, False, False, False),
                                                (-1, False, False, False), (0, True, False, True),
                                                (0, False, True, False), (1, True, True, False)]]
    cases = [c + (torch.float32,) for c in cases]
    # 16-bit values summed in fp32 and stored in their own type (a single kernel's reading), rows
    # and columns, plain and masked
    cases += [(shape, dim, shift, rev, masked, False, dt)
              for shape, dim in [((5, 300), 1), ((2, 50, 130), 1)]
              for shift, rev, masked in [(0, False, False), (1, True, True)]
              for dt in (torch.float16, torch.bfloat16)]
    # the flip-cumsum-flip region of 16-bit tensors (held-out ha05: bf16), rows and columns
    cases += [(shape, dim, 0, True, False, True, dt) for shape, dim in [((5, 300), 1), ((3, 70, 9), 1)]
              for dt in (torch.float16, torch.bfloat16)]
    bad = 0
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for n, (shape, dim, shift, rev, masked, region, dt) in enumerate(cases):
            p = dict(IN0="in_ptr0", IN1="in_ptr1", OUT="out_ptr0", XARG="in_ptr1" if masked else "in_ptr0",
                     MARG="in_ptr0", MASKED=masked, REGION=region, DIM=dim, SHIFT=shift, REVERSE=rev,
                     CHUNK=64, BLOCK_S=16, BLOCK_I=8, NUM_WARPS=4,
                     ROWS=all(d == 1 for d in shape[dim + 1:]), LSE=False, MAX=False)
            mod = load_judged(render(text, p), "scan_%d" % n, tmp)
            x = torch.randn(*shape).to(dt)
            mk = torch.rand(*shape) < 0.5
            out = torch.full(shape, float("nan"), dtype=dt)
            args = ([mk, x] if masked else [x]) + [out]
            if not region:
                args += [x.numel() // shape[dim], shape[dim]]
            mod.launch(*args)
            ref = reference(x, dim, shift, rev, mk if masked else None)
            err = (out.double() - ref).abs()
            if dt != torch.float32:   # one unit of the output's last place + fp32's summation error, read as 1e-4
                tol = torch.finfo(dt).eps * ref.abs() + 3e-5 * reference(x.abs(), dim, shift, rev, None)
                err = 1e-4 * err / tol.clamp(min=1e-30)
            err = err.max().item()
            ok = err <= 1e-4
            bad += not ok
            print("%s shape=%s dim=%d shift=%d reverse=%s masked=%s region=%s %s max_err=%.3g"
                  % ("ok  " if ok else "FAIL", shape, dim, shift, rev, masked, region, str(dt)[6:], err))
    nlse, badlse = lse_cases(text)
    nmax, badmax = max_cases(text)
    bad += badlse + badmax
    print("scan interp: %d cases, %d failed" % (len(cases) + nlse + nmax, bad))
    return 1 if bad else 0


def lse_input(shape, kind, dt):
    """Values for a logcumsumexp case: randn, randn x 1e3 (an exp of them overflows fp32), or
    randn with -inf and +inf elements placed through it."""
    x = torch.randn(*shape)
    if kind == "wide":
        x = x * 1e3
    elif kind == "inf":
        flat = x.view(-1)
        flat[::7] = float("-inf")
        flat[5::97] = float("inf")
    return x.to(dt)


def lse_cases(text):
    """The LSE reading (logcumsumexp) over the last, a middle and the first dimension, chunks and
    tiles left partial, against float64: within 1e-5 of (1 + |ref|) in fp32 (base-2 exp and log,
    a few roundings an element), plus one unit of the last place of a 16-bit output; -inf where
    the reference is -inf, +inf where it is +inf. Returns (cases run, cases failed)."""
    bad = n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for shape, dim in [((5, 300), 1), ((3, 70, 9), 1), ((70, 9), 0), ((2, 50, 130), 1), ((4, 1, 33), 2)]:
            for kind in ("randn", "wide", "inf"):
                for dt in ((torch.float32, torch.float16, torch.bfloat16) if kind == "randn" else (torch.float32,)):
                    rows = all(d == 1 for d in shape[dim + 1:])
                    p = dict(IN0="in_ptr0", IN1="in_ptr0", OUT="out_ptr0", XARG="in_ptr0", MARG="in_ptr0",
                             MASKED=False, REGION=False, DIM=dim, SHIFT=0, REVERSE=False, CHUNK=64, BLOCK_S=16,
                             BLOCK_I=8, NUM_WARPS=4, ROWS=rows, LSE=True, MAX=False)
                    mod = load_judged(render(text, p), "lse_%d" % n, tmp)
                    n += 1
                    x = lse_input(shape, kind, dt)
                    out = torch.full(shape, float("nan"), dtype=dt)
                    mod.launch(x, out, x.numel() // shape[dim], shape[dim])
                    ref = torch.logcumsumexp(x.double(), dim)
                    o = out.double()
                    same_inf = torch.equal(torch.isinf(o) & (o > 0), torch.isinf(ref) & (ref > 0)) and \
                        torch.equal(torch.isinf(o) & (o < 0), torch.isinf(ref) & (ref < 0))
                    fin = torch.isfinite(ref)
                    tol = 1e-5 * (1 + ref[fin].abs())
                    if dt != torch.float32:
                        tol = tol + torch.finfo(dt).eps * ref[fin].abs()
                    err = ((o[fin] - ref[fin]).abs() / tol).max().item() if fin.any() else 0.0
                    ok = same_inf and err <= 1.0 and not torch.isnan(o).any()
                    bad += not ok
                    print("%s lse shape=%s dim=%d %s %s err/tol=%.3g infs %s"
                          % ("ok  " if ok else "FAIL", shape, dim, kind, str(dt)[6:], err,
                             "match" if same_inf else "DIFFER"))
    return n, bad


def max_input(shape, kind, dt):
    """Values for a cummax case: randn; randn with NaN placed through it; or few distinct values
    (ties), with -inf, +inf, -0.0 and 0.0 among them."""
    x = torch.randn(*shape)
    flat = x.view(-1)
    if kind == "nan":
        flat[3::41] = float("nan")
    elif kind == "ties":
        flat.copy_(torch.tensor([0.0, -0.0, 1.0, -1.0, float("-inf"), 2.0])[torch.randint(0, 6, flat.shape)])
        flat[::53] = float("inf")
    return x.to(dt)


def max_cases(text, mutate=None):
    """The MAX reading (cummax's values) over the last, a middle and the first dimension, chunks
    and tiles left partial: exactly ATen's torch.cummax values (a NaN where ATen has one), as the
    maximum rounds nothing. Two mutants must fail: NaN not kept over a later number, the carry
    from the chunks before dropped. Returns (cases run, cases failed)."""
    bad = n = 0
    mutants = [("take_a = tl.where(a != a, b == b, a > b)", "take_a = a > b", "NaN not sticky"),
               ("_max_combine(carry, tl.associative_scan(x, 0, _max_combine))",
                "tl.associative_scan(x, 0, _max_combine)", "no carry")]
    with tempfile.TemporaryDirectory() as tmp:
        for mut in [None] + mutants:
            caught = False
            for shape, dim in [((5, 300), 1), ((3, 70, 9), 1), ((70, 9), 0), ((2, 50, 130), 1), ((4, 1, 33), 2)]:
                for kind in ("randn", "nan", "ties"):
                    for dt in (torch.float32, torch.float16, torch.bfloat16):
                        if mut and dt != torch.float32:
                            continue
                        rows = all(d == 1 for d in shape[dim + 1:])
                        p = dict(IN0="in_ptr0", IN1="in_ptr0", OUT="out_ptr0", XARG="in_ptr0", MARG="in_ptr0",
                                 MASKED=False, REGION=False, DIM=dim, SHIFT=0, REVERSE=False, CHUNK=64, BLOCK_S=16,
                                 BLOCK_I=8, NUM_WARPS=4, ROWS=rows, LSE=False, MAX=True)
                        src = render(text, p)
                        if mut:
                            assert mut[0] in src, mut[0]
                            src = src.replace(mut[0], mut[1])
                        mod = load_judged(src, "max_%d" % n, tmp)
                        n += not mut
                        x = max_input(shape, kind, dt)
                        out = torch.full(shape, float("nan"), dtype=dt)
                        mod.launch(x, out, x.numel() // shape[dim], shape[dim])
                        ref = torch.cummax(x.double(), dim).values.to(dt).double()
                        o = out.double()
                        ok = bool(((o == ref) | (torch.isnan(o) & torch.isnan(ref))).all())
                        if mut:
                            caught |= not ok
                            continue
                        bad += not ok
                        print("%s max shape=%s dim=%d %s %s" % ("ok  " if ok else "FAIL", shape, dim, kind, str(dt)[6:]))
            if mut:
                bad += not caught
                print("%s mutant (%s)" % ("ok  " if caught else "FAIL", mut[2]))
    return n, bad


if __name__ == "__main__":
    sys.exit(main())
