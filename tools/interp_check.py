"""CPU check of a generated candidate against Inductor's own kernel with Triton's interpreter
(no GPU): both run on the same random inputs, the candidate through its `launch`, Inductor's
kernel from the captured fixture (decorator stripped) at XBLOCK=1, R0_BLOCK=4096; outputs
NaN-poisoned before, compared after (atol = rtol = 1e-4, as gate 2). Only the first 40
reductions run (the interpreter is slow; the kernels' constants stay as captured).
Needs torch and triton (any CPU install); not part of CI.

usage: TRITON_INTERPRET=1 python3 tools/interp_check.py FIXTURE KERNEL CANDIDATE
Known inputs: tests/fixtures/inductor/02_softmax_wide_g0.py (x of 128x262144, row max) and
06_groupnorm_g0.py (x of 16x64x256x256)."""
import re
import sys
import time
import types

import torch

# Interpreter shims, applied to Inductor's kernel and the candidate alike: no GPU driver to
# select, and CUDA's libdevice does not exist in the interpreter.
SHIMS = [("triton_helpers.set_driver_to_gpu()", ""), ("libdevice.exp(", "tl.exp(")]
XRUN = 40


def load(text, path, name):
    for a, b in SHIMS:
        text = text.replace(a, b)
    with open(path, "w") as f:
        f.write(text)
    mod = types.ModuleType(name)
    mod.__file__ = path
    exec(compile(text, path, "exec"), mod.__dict__)
    return mod, text


def main():
    fixture, kname, cand = sys.argv[1:4]
    text = open(fixture).read()
    m = re.search(r"%s = async_compile\.triton\('%s', '''(.*?)''', device_str" % (kname, kname), text, re.S)
    if not m:
        sys.exit("no kernel %s in %s" % (kname, fixture))
    src = re.sub(r"@triton_heuristics\.\w+\((?:.|\n)*?\n\)\n@triton\.jit", "@triton.jit", m.group(1))
    orig, src = load(src, "/tmp/kopt_interp_orig_%s.py" % kname, "orig")
    cmod, _ = load(open(cand).read(), "/tmp/kopt_interp_cand_%s.py" % kname, "cand")
    sig = re.search(r"def %s\((.*?)\)" % kname, src).group(1)
    params = [p.split(":")[0].strip() for p in sig.split(",") if "constexpr" not in p]
    xn = int(re.search(r"xnumel = (\d+)", src).group(1))
    rn = int(re.search(r"r0_numel = (\d+)", src).group(1))
    g = torch.Generator().manual_seed(0)
    args = {}
    if "06_groupnorm" in fixture:
        args["in_ptr0"] = torch.randn(16, 64, 256, 256, generator=g)
    elif "02_softmax_wide" in fixture:
        x = torch.randn(128, 262144, generator=g)
        args["in_ptr0"] = x
        args["in_ptr1"] = x.max(dim=1).values.contiguous()
    else:
        sys.exit("no known inputs for %s" % fixture)
    outs = [p for p in params if p.startswith("out_ptr")]

    def run(fn, grid=None):
        a = dict(args)
        for o in outs:
            a[o] = torch.full((xn,), float("nan"))
        a["xnumel"], a["r0_numel"] = XRUN, rn
        vals = [a[p] for p in params]
        t = time.time()
        if grid:
            fn[grid](*vals, XBLOCK=1, R0_BLOCK=4096)
        else:
            fn(*vals)
        return [a[o][:XRUN] for o in outs], time.time() - t

    ref, t1 = run(getattr(orig, kname), (XRUN,))
    got, t2 = run(cmod.launch)
    bad = 0
    for o, r, c in zip(outs, ref, got):
        d = (r - c).abs().max().item()
        ok = bool(torch.allclose(c, r, atol=1e-4, rtol=1e-4)) and not bool(torch.isnan(c).any())
        bad += not ok
        print("%s %s: max abs diff %.3g (%.3g of the largest value), within 1e-4: %s (%.0f s / %.0f s)"
              % (kname, o, d, d / max(r.abs().max().item(), 1e-30), ok, t1, t2))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
