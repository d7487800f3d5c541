"""GPU check of a `kopt verify` output directory from a fresh Python process: the user's path.
usage: python3 tests/gpu/check_loader.py PROBLEM.py OUT_DIR
Builds the problem's Model (its own weights, seed 0 as kopt does), loads OUT_DIR through
kopt_loader.load_optimized, and compares against the eager model on the seed-0 inputs and on
fresh inputs (seed 7): fp32 atol = rtol = 1e-4. Exit 1 on a mismatch."""
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
    if not torch.allclose(got, ref, atol=1e-4, rtol=1e-4):
        print("loader output differs from eager on seed %d: max abs diff %.3g" % (seed, (got - ref).abs().max().item()))
        sys.exit(1)
    worst = max(worst, (got - ref).abs().max().item())
print("loader ok: matches the eager model on seeds 0 and 7 (max abs diff %.3g)" % worst)
