"""GPU check of a `kopt verify` output directory from a fresh Python process: the user's path.
usage: python3 tests/gpu/check_loader.py PROBLEM.py OUT_DIR
Builds the problem's Model (its own weights, seed 0 as kopt does), loads OUT_DIR through
kopt_loader.load_optimized, and compares against the eager model on the seed-0 inputs and on
fresh inputs (seed 7): fp32 atol = rtol = 1e-4, or, where that fails (a scan whose summation
order differs), the rule of gate 3: against the model run in float64, the loader's max error
at most 10x the eager fp32 model's and below 1e-2. Exit 1 on a mismatch."""
import copy
import importlib.util
import sys

import torch

prob_path, out_dir = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("problem", prob_path)
prob = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prob)
torch.manual_seed(0)
init = prob.get_init_inputs()
torch.manual_seed(0)
model = prob.Model(*init).cuda().eval()
sys.path.insert(0, out_dir)
from kopt_loader import load_optimized  # noqa: E402

fast = load_optimized(model)
worst = 0.0
for seed in (0, 7):
    torch.manual_seed(seed)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    with torch.no_grad():
        ref = model(*inputs)
        got = fast(*inputs)
    torch.cuda.synchronize()
    # a model returning several tensors (a tuple or list) is checked output by output
    many = isinstance(ref, (tuple, list))
    refs, gots = (list(ref), list(got)) if many else ([ref], [got])
    if len(refs) != len(gots):
        print("loader returns %d outputs, the eager model %d" % (len(gots), len(refs)))
        sys.exit(1)
    ref64s = None
    for oi, (r, g) in enumerate(zip(refs, gots)):
        if not torch.allclose(g, r, atol=1e-4, rtol=1e-4):
            if not g.is_floating_point():
                print("loader output %d differs from eager on seed %d" % (oi, seed))
                sys.exit(1)
            if ref64s is None:
                with torch.no_grad():
                    r64 = copy.deepcopy(model).double()(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                                                          else x for x in inputs])
                ref64s = list(r64) if many else [r64]
            e_got = (g.double() - ref64s[oi]).abs().max().item()
            e_eager = (r.double() - ref64s[oi]).abs().max().item()
            if not (e_got <= 10 * e_eager and e_got < 1e-2):
                print("loader output %d differs from eager on seed %d: max abs diff %.3g; against float64: loader %.3g, "
                      "eager fp32 %.3g" % (oi, seed, (g - r).abs().max().item(), e_got, e_eager))
                sys.exit(1)
            print("seed %d: output %d outside 1e-4 of eager (max abs diff %.3g) but as accurate against float64: loader "
                  "%.3g, eager fp32 %.3g" % (seed, oi, (g - r).abs().max().item(), e_got, e_eager))
        worst = max(worst, (g - r).abs().max().item())
# what ran: every replaced kernel's verified candidate on these shapes (no fallback to Inductor's
# kernel), and a plan's launches through their compiled kernels (the shim's bound runners) where
# the guard pinned every tensor's alignment
ran = []
for name in getattr(fast.module, "_KOPT_VERIFIED", {}):
    guard = getattr(fast.module, name)
    cand = getattr(fast.module, "_kopt_cand_" + name)
    if guard._kopt_fallbacks:
        print("%s: the guard fell back to Inductor's kernel %d time(s) on the verified shapes" % (name, guard._kopt_fallbacks))
        sys.exit(1)
    direct = getattr(cand, "kernels", None) is not None and guard._kopt_fast
    if direct and not cand.bound:
        print("%s: a verified plan with pinned alignment did not launch its compiled kernels directly (%s)"
              % (name, "; ".join(cand.unbound.values()) or "never bound"))
        sys.exit(1)
    ran.append("%s %s" % (name, "direct launch" if direct else "candidate's launch"))
print("loader ok: matches the eager model on seeds 0 and 7 (max abs diff %.3g); %s"
      % (worst, "; ".join(ran) or "no replaced kernel"))
