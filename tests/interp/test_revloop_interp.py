"""revloop (src/agents/revloop.c) run by Triton's interpreter on the CPU: the golden candidates
tests/unit/test_revloop.c emits for a small looped layer norm (tests/fixtures/inductor/
handmade_layer_norm_looped_small.py: Inductor's kernel for 6 rows of 1000 fp32, chunks of 256, the
last one cut at 232) with its last pass forward (candidate_forward.py) and backward
(candidate_reversed.py). The two outputs must be equal bit for bit (each chunk computes the same
values in either order) and within 1e-4 of float64 PyTorch; a mutant whose backward walk misses
chunks (it steps half a chunk) must be caught.

usage: TRITON_INTERPRET=1 PY tests/interp/test_revloop_interp.py (`make interp-check`); with
TRITON_INTERPRET=0 on a machine with a CUDA GPU the same cases run compiled on the GPU (the device
session's check of the real kernel; unset, interp_util turns the interpreter on); exit 0 when
every case holds, 1 otherwise; skipped (exit 0, one line) when triton does not import. Run as the
text kopt judges for each candidate (its plan lowered to kopt's launcher; KOPT=... names the
binary). Inductor's helpers get stand-ins where torch has no Inductor.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from interp_util import ROOT, load_judged  # noqa: E402
from test_aligned_interp import inductor_stand_ins  # noqa: E402

R, C = 6, 1000
INTERP = os.environ.get("TRITON_INTERPRET") == "1"   # require_triton() sets it unless it is set
DEV = "cpu" if INTERP or not torch.cuda.is_available() else "cuda"
FORMULA = "r0_offset = ((r0_numel - 1) // R0_BLOCK) * R0_BLOCK - kopt_rev"


@triton.jit
def _welford_reduce(value, mean, m2, weight, first_iteration):
    """Stand-in for triton_helpers.welford_reduce: one value folded into a lane's running mean,
    sum of squared deviations and count (the count starts at 1 on the first chunk)."""
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


def stand_ins():
    inductor_stand_ins()
    th = sys.modules["torch._inductor.runtime.triton_helpers"]
    if not hasattr(th, "welford_reduce"):
        th.welford_reduce = _welford_reduce
    if INTERP:
        # a torch with Inductor: its libdevice is CUDA's library, which the interpreter cannot run;
        # triton.language's own rsqrt instead (a module, so that the interpreter patches it)
        th.libdevice = tl


def layer_norm64(x, w, b):
    x = x.double()
    mean = x.mean(1, keepdim=True)
    var = ((x - mean) ** 2).mean(1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * w.double() + b.double()


def run(mod, x, w, b):
    x, w, b = x.to(DEV), w.to(DEV), b.to(DEV)
    out = torch.full((R, C), float("nan"), device=DEV)
    mod.launch(x, w, b, out, R, C)
    return out.cpu()


def main():
    stand_ins()
    fx = os.path.join(ROOT, "tests", "fixtures", "revloop")
    fwd_text = open(os.path.join(fx, "candidate_forward.py")).read()
    rev_text = open(os.path.join(fx, "candidate_reversed.py")).read()
    if FORMULA not in rev_text:
        print("FAIL candidate_reversed.py has no reversed header")
        return 1
    bad = 0
    torch.manual_seed(0)
    cases = [("randn", torch.randn(R, C)),
             ("x 3 + 10, rows of their own scale", torch.randn(R, C) * torch.arange(1, R + 1).view(R, 1) + 10),
             ("a large value in the cut last chunk", torch.randn(R, C))]
    cases[2][1][:, -1] = 1e3
    with tempfile.TemporaryDirectory() as tmp:
        fwd = load_judged(fwd_text, "fwd", tmp)
        rev = load_judged(rev_text, "rev", tmp)
        mutant = load_judged(rev_text.replace(FORMULA, FORMULA.replace("- kopt_rev", "- kopt_rev // 2")), "mutant", tmp)
        for name, x in cases:
            w, b = torch.rand(C) + 0.5, torch.randn(C)
            of, orv = run(fwd, x, w, b), run(rev, x, w, b)
            same = torch.equal(of, orv)
            err = (orv.double() - layer_norm64(x, w, b)).abs().max().item()
            ok = same and err <= 1e-4
            bad += not ok
            print("%s %s: forward and backward %s, max error against float64 %.3g" %
                  ("ok  " if ok else "FAIL", name, "bit-identical" if same else "DIFFER", err))
        x = cases[0][1]
        w, b = torch.rand(C) + 0.5, torch.randn(C)
        caught = not torch.equal(run(mutant, x, w, b), run(fwd, x, w, b))
        bad += not caught
        print("%s mutant whose backward walk misses chunks: %s" % ("ok  " if caught else "FAIL", "caught" if caught else "not caught"))
    print("revloop %s: %d cases, %d failed" % ("interp" if DEV == "cpu" else "on the GPU", len(cases) + 1, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
