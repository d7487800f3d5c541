"""The worker can run a candidate from the machine code gate 1 checked, without its Python (issue
11; worker/kopt/cubin.py): for form-P candidates of the suite, `kopt lint --sass --keep-cubins DIR`
compiles each launch of the plan in kopt's sandbox and keeps the cubin, kopt's checked metadata and
the launch's spec; then, in a fresh process, the launcher kopt writes from the plan runs twice on
the same inputs: once through Triton's JIT (the candidate's functions compiled here, as today),
once with each launch handed (the launcher's _kopt_plan_go hook, as the guard's verified path
uses it) to kopt.cubin.CubinKernel(DIR, i), which loads the kept cubin with Triton's loader and no
JITFunction. Every tensor must come out bit for bit the same; and a call whose first tensor is
misaligned (it would have compiled differently) must raise SpecMismatch.

usage: python3 tests/gpu/check_cubin_load.py (`make gpu-test`, suite `machine`); one line, exit 0
when every case matches, 1 otherwise.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sass_match import CASES, ROOT, lint_case  # noqa: E402

RUN = r'''
import importlib.util, json, sys
import torch
sys.path.insert(0, sys.argv[4])
from kopt import cubin
src, keep, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
spec = importlib.util.spec_from_file_location("judged", src)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
torch.manual_seed(0)
vals = [torch.randn(*a, device="cuda") if isinstance(a, list) else a for a in args]
jit = [v.clone() if torch.is_tensor(v) else v for v in vals]
own = [v.clone() if torch.is_tensor(v) else v for v in vals]
mod.launch(*jit)
kernels, used = {}, []
def go(i, grid, ordered, names, num_warps, num_stages, stream):
    if i not in kernels:
        kernels[i] = cubin.CubinKernel(keep, i)
    used.append(i)
    kernels[i][grid](*ordered, stream=stream)
mod.launch(*own, _kopt_plan_go=go)
torch.cuda.synchronize()
same = all(torch.equal(a.view(torch.int32) if a.dtype == torch.float32 else a, b.view(torch.int32) if b.dtype == torch.float32 else b)
           for a, b in zip(jit, own) if torch.is_tensor(a))
refused = False
bad = [v for v in own]
t = next(k for k, v in enumerate(bad) if torch.is_tensor(v))
bad[t] = torch.randn(bad[t].numel() + 1, device="cuda")[1:].view(bad[t].shape)
try:
    mod.launch(*bad, _kopt_plan_go=go)
    torch.cuda.synchronize()
except cubin.SpecMismatch:
    refused = True
print(json.dumps({"same": same, "launches": sorted(set(used)), "misaligned_refused": refused}))
'''


def main():
    bad, n = [], 0
    for k, (cand, values, launch) in enumerate(CASES):
        with tempfile.TemporaryDirectory() as tmp:
            keep = os.path.join(tmp, "keep")
            os.mkdir(keep)
            d, why = lint_case(k, cand, values, launch, ["--keep-cubins", keep])
            if why:
                bad.append(why)
                continue
            src = os.path.join(tmp, "judged.py")
            with open(src, "w") as f:
                f.write(d["judged_text"])
            args = [list(a[1]) if isinstance(a, tuple) else values[a] for a in launch]
            env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(tmp, "cache"))
            j = subprocess.run([sys.executable, "-c", RUN, src, keep, json.dumps(args), os.path.join(ROOT, "worker")],
                               capture_output=True, text=True, env=env)
            if j.returncode != 0:
                bad.append("case %d: the run failed: %s" % (k, j.stderr[-400:]))
                continue
            res = json.loads(j.stdout.strip().splitlines()[-1])
            want = list(range(len(d["sass"]["launches"])))
            if not res["same"] or res["launches"] != want or not res["misaligned_refused"]:
                bad.append("case %d (%s %s): %s (launches kept %s)" % (k, os.path.basename(cand), values, res, want))
            n += len(want)
    if bad:
        print("cubin load: %d failure(s): %s" % (len(bad), "; ".join(bad)))
        return 1
    print("cubin load: %d launches of %d cases run from the sandbox's cubins with no candidate Python: outputs bit "
          "for bit the JIT's; a misaligned call refused" % (n, len(CASES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
