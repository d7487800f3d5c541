"""The middle-dimension softmax templates (templates/kernels/col_softmax.py.tmpl and
col_split_softmax.py.tmpl) run by Triton's interpreter on the CPU against float64 PyTorch: softmax
and log-softmax over a first or middle dimension, with reduced lengths and inner sizes that leave
partial tiles; fp32, and fp16/bf16 computed in fp32 and stored in their own type, with a positive
scale (softmax(x * c): exp((x - max) * c), c rounded to fp32 as Inductor's tl.full) or without. The
interpreter runs programs one after another, so col_split_softmax runs here with one segment a tile
(its arithmetic, ticket, partials and plan; also with its POLL wait); the GPU covers several. A candidate rendered with a
scale 2% off must fail (the check can).

usage: TRITON_INTERPRET=1 PY tests/interp/test_col_softmax_interp.py (`make interp-check`);
exit 0 when every case is within 1e-5 of float64 (16-bit outputs: plus half a unit of the last place
for fp16, a whole one for bf16, which the interpreter truncates), 1 otherwise; skipped (exit 0, one line) when
triton does not import. Rendering: tests/interp/interp_util.py's mirror of template.c; run as the text kopt judges for
it (its plan lowered to kopt's launcher; KOPT=... names the binary).
"""
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
from interp_util import ROOT, load_judged, render  # noqa: E402

TEMPLATE = os.path.join(ROOT, "templates", "kernels", "col_softmax.py.tmpl")
SPLIT = os.path.join(ROOT, "templates", "kernels", "col_split_softmax.py.tmpl")


def run(mod, shape, dim, log, dt, scale):
    """The candidate's output for a random input against float64: the worst error over its tolerance."""
    x = (torch.randn(*shape) * 3).to(dt)
    out = torch.full(shape, float("nan"), dtype=dt)
    mod.launch(x, out, x.numel() // shape[dim], shape[dim])
    c32 = torch.tensor(scale, dtype=torch.float32).item()
    ref = (torch.log_softmax if log else torch.softmax)(x.double() * c32, dim)
    # a 16-bit output: the fp32 value rounded to its type, half a unit of its last place (fp16: numpy
    # rounds to nearest), a whole unit for bf16 (the interpreter truncates fp32 to bf16; the GPU rounds)
    ulps = {torch.float32: 0.0, torch.float16: 0.5, torch.bfloat16: 1.0}[dt]
    tol = 1e-5 + ulps * torch.finfo(dt).eps * ref.abs()
    return ((out.double() - ref).abs() / tol).max().item()


def main():
    # the interpreter has no GPU to ask for its SM count (sm_count() in col_split_softmax's checks)
    torch.cuda.get_device_properties = lambda d: types.SimpleNamespace(multi_processor_count=132)
    text = open(TEMPLATE).read()
    f32, f16, b16, t = torch.float32, torch.float16, torch.bfloat16, 1 / 0.7
    # (shape, dim, log, BLOCK_C >= the reduced length, BLOCK_I, dtype, scale: 1.0 none)
    cases = [((3, 70, 9), 1, False, 128, 8), ((3, 70, 9), 1, True, 128, 4), ((70, 9), 0, False, 128, 16),
             ((4, 33, 2, 5), 1, True, 64, 8), ((2, 5, 130), 1, False, 8, 32), ((2, 512, 40), 1, True, 512, 8)]
    cases = [c + (f32, 1.0) for c in cases]
    # col_split_softmax: (shape, dim, log, -CB with CB >= the reduced length, IB, dtype, scale)
    cases += [((3, 70, 9), 1, False, -128, 4, f32, 1.0), ((4, 33, 2, 5), 1, True, -64, 8, f32, 1.0),
              ((70, 9), 0, True, -128, 16, f32, 1.0)]
    # 16-bit values and a scale (hz01: bf16, x / 0.7), both templates, softmax and log-softmax
    cases += [((3, 70, 9), 1, False, 128, 8, b16, t), ((4, 33, 2, 5), 1, True, 64, 8, f16, 2.5),
              ((2, 130, 40), 1, False, 256, 16, f16, t), ((70, 9), 0, False, 128, 16, f32, 0.5),
              ((2, 130, 40), 1, False, 256, 8, b16, 1.0), ((3, 70, 9), 1, True, 128, 4, b16, t),
              ((3, 70, 9), 1, False, -128, 4, b16, t), ((4, 33, 2, 5), 1, True, -64, 8, b16, 2.5),
              ((70, 9), 0, False, -128, 16, f16, t), ((2, 130, 40), 1, False, -256, 8, f16, 1.0)]
    # col_split_softmax loading its block again after the exchange (REREAD): -CB - 10000
    cases += [((3, 70, 9), 1, False, -10128, 4, b16, t), ((4, 33, 2, 5), 1, True, -10064, 8, f16, 2.5),
              ((70, 9), 0, False, -10128, 16, f32, 1.0), ((2, 130, 40), 1, True, -10256, 8, f32, 1.0)]
    # and waiting on plain loads before its acquire read (the kernel's POLL, set in the plan here): -CB - 20000
    cases += [((3, 70, 9), 1, False, -20128, 4, b16, t), ((4, 33, 2, 5), 1, True, -20064, 8, f32, 1.0)]
    bad = 0
    torch.manual_seed(0)
    split_text = open(SPLIT).read()

    def source(dim, log, bc, bi, scale):
        p = dict(IN="in_ptr0", OUT="out_ptr2", DIM=dim, LOG=log, SCALED=scale != 1.0, SCALE="%.17g" % scale, NUM_WARPS=4)
        if bc < 0:
            src = render(split_text, dict(p, CB=-bc % 10000, IB=bi, REREAD=-20000 < bc <= -10000))
            return src.replace('"POLL": False', '"POLL": True') if bc <= -20000 else src
        return render(text, dict(p, BLOCK_C=bc, BLOCK_I=bi))

    with tempfile.TemporaryDirectory() as tmp:
        for n, (shape, dim, log, bc, bi, dt, scale) in enumerate(cases):
            mod = load_judged(source(dim, log, bc, bi, scale), "cs_%d" % n, tmp)
            err = run(mod, shape, dim, log, dt, scale)
            ok = err <= 1
            bad += not ok
            print("%s %s shape=%s dim=%d log=%s %s scale=%.17g max_err/tol=%.3g"
                  % ("ok  " if ok else "FAIL", "split" if bc < 0 else "tile ", shape, dim, log, str(dt)[6:], scale, err))
        # mutants: the scale 2% off in either template (and in the split one's REREAD form) must fail
        for n, bc in enumerate((128, -128, -10128)):
            mod = load_judged(source(1, False, bc, 8, t * 1.02), "cs_mutant_%d" % n, tmp)
            err = run(mod, (3, 70, 9), 1, False, b16, t)
            caught = err > 1
            bad += not caught
            print("%s mutant %s (scale 2%% off) max_err/tol=%.3g" % ("ok  " if caught else "FAIL", "split" if bc < 0 else "tile ", err))
    print("col_softmax interp: %d cases and 3 mutants, %d failed" % (len(cases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)   # log(0) in masked-off columns, never stored
    sys.exit(main())
