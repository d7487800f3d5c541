"""column_reuse (src/agents/builtin_colreuse.c) run by Triton's interpreter on the CPU against
float64 PyTorch: the golden candidate tests/unit/test_colreuse.c emits for a reduced layer norm's
normalisation (tests/fixtures/colreuse/candidate_small.py: Inductor's pointwise kernel over 4 rows
of 262,144 with its weight and bias, walked by blocks of 1024 columns that load them once).
Every element must match (x - mean) * rsqrt(m2 / N + eps) * w + b within 1e-5 of its scale; a
copy of the candidate whose rows start one element off must not (the test can fail).

usage: TRITON_INTERPRET=1 PY tests/interp/test_colreuse_interp.py (`make interp-check`); exit 0
when the candidate matches and the mutant does not, 1 otherwise; skipped (exit 0, one line) when
triton does not import. Run as the text kopt judges for it (its plan lowered to kopt's launcher;
KOPT=... names the binary).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
from interp_util import ROOT, load_judged  # noqa: E402
from test_aligned_interp import inductor_stand_ins  # noqa: E402

ROWS, N, EPS = 4, 262144, 1e-5


def max_error(mod):
    """The largest error of mod's normalisation of a fresh draw, relative to the output's scale."""
    torch.manual_seed(0)
    x = torch.randn(ROWS, N) * torch.tensor([[1.0], [3.0], [0.5], [10.0]]) + torch.tensor([[0.0], [5.0], [-2.0], [100.0]])
    x64 = x.double()
    mean64 = x64.mean(1)
    m2_64 = ((x64 - mean64[:, None]) ** 2).sum(1)
    w, b = torch.randn(N), torch.randn(N)
    out = torch.full((ROWS * N,), float("nan"))
    mod.launch(x.reshape(-1), mean64.float(), m2_64.float(), w, b, out, ROWS * N)
    ref = (x64 - mean64[:, None]) * torch.rsqrt(m2_64[:, None] / N + EPS) * w.double() + b.double()
    return ((out.double().reshape(ROWS, N) - ref).abs().max() / ref.abs().max()).item()


def main():
    inductor_stand_ins()
    text = open(os.path.join(ROOT, "tests", "fixtures", "colreuse", "candidate_small.py")).read()
    mutant = text.replace("xindex = kopt_row * 262144 + kopt_col", "xindex = kopt_row * 262143 + kopt_col")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        err = max_error(load_judged(text, "colreuse", tmp))
        ok = err <= 1e-5
        bad += not ok
        print("%s column_reuse, 4 rows of 262144 in blocks of 1024: max error %.3g of the output's scale" % (
            "ok  " if ok else "FAIL", err))
        err = max_error(load_judged(mutant, "colreuse_mutant", tmp))
        ok = mutant != text and not err <= 1e-5
        bad += not ok
        print("%s the mutant whose rows start one element off is caught: max error %.3g" % ("ok  " if ok else "FAIL", err))
    print("column_reuse interp: 2 cases, %d failed" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
