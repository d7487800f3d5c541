#!/usr/bin/env python3
"""CPU test of the shipped module's guard (src/verify/guard.h, docs/CANDIDATES.md "The guard"):
tests/fixtures/guard/stitched_cpu.py is a stitched module emitted by the C side
(tests/unit/test_guard.c pins it byte for byte) whose "kernels" are plain Python callables
standing in for Triton launchers. Its candidate is correct only on the signature it was
verified on (it hard-codes 32 contiguous elements): a call with that signature runs the
candidate; any other batch size, dtype or stride runs Inductor's kernel and stays right.

Run: python3 tests/worker/test_guard_cpu.py (a python with torch, no GPU). Exits non-zero on the
first failed check, naming it.
"""
import importlib.util
import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
K = "triton_poi_fused_mul_add_0"
from checklib import check, passed  # noqa: E402


def load(name="stitched_cpu"):
    path = os.path.join(ROOT, "tests", "fixtures", "guard", name + ".py")
    spec = importlib.util.spec_from_file_location("kopt_guard_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ref(x):
    return x * 2.0 + 1.0


def main():
    m = load()
    guard = getattr(m, K)
    orig = getattr(m, "_kopt_orig_" + K)
    jit = sys.modules["triton"].jit
    check(type(guard).__name__ == "_KoptGuard", "the kernel's name is bound to the guard")
    check(set(m._KOPT_VERIFIED) == {K}, "_KOPT_VERIFIED names the replaced kernel")
    check(len(m._KOPT_VERIFIED[K]["sha256"]) == 64, "the verified candidate's sha256 is recorded")
    check(guard._kopt_signature == m._KOPT_VERIFIED[K]["signature"], "the guard checks the recorded signature")
    check(guard.launch is getattr(m, "_kopt_" + K + "__launch"), "other attributes are the candidate's (.launch)")
    try:
        guard._kopt_missing
        check(False, "a missing _kopt_ attribute raises")
    except AttributeError:
        pass

    # the verified signature: the candidate runs
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    (y,) = m.call([x])
    check(jit.launches == 1 and orig.calls == 0 and guard._kopt_fallbacks == 0,
          "the verified shapes run the candidate (launches %d, Inductor %d, fallbacks %d)"
          % (jit.launches, orig.calls, guard._kopt_fallbacks))
    check(torch.equal(y, ref(x)), "the candidate's result on the verified shapes")

    # another batch size: Inductor's kernel, and the result is right
    x6 = torch.randn(6, 8)
    (y6,) = m.call([x6])
    check(jit.launches == 1 and orig.calls == 1 and guard._kopt_fallbacks == 1,
          "another batch size runs Inductor's kernel")
    check(torch.equal(y6, ref(x6)), "another batch size gets the right result")
    # the candidate alone would have been wrong there (it hard-codes 32 elements)
    bad = torch.full_like(x6, float("nan"))
    guard.launch(x6, bad, x6.numel())
    check(torch.isnan(bad).any().item(), "without the guard the candidate is wrong on another batch size")
    launches = jit.launches

    # another dtype
    xd = torch.randn(4, 8, dtype=torch.float64)
    (yd,) = m.call([xd])
    check(jit.launches == launches and guard._kopt_fallbacks == 2 and yd.dtype == torch.float64,
          "another dtype falls back")
    check(torch.equal(yd, ref(xd)), "another dtype gets the right result")

    # another stride (same shape, transposed storage)
    xt = torch.randn(8, 4).t()
    check(xt.shape == (4, 8) and xt.stride() == (1, 4), "test setup: a transposed (4, 8) view")
    (yt,) = m.call([xt])
    check(jit.launches == launches and guard._kopt_fallbacks == 3, "another stride falls back")
    check(torch.equal(yt, ref(xt)), "another stride gets the right result")

    # a scalar argument other than the verified one, shapes equal
    out = torch.empty(4, 8)
    guard.run(x, out, 31, stream=0)
    check(guard._kopt_fallbacks == 4 and jit.launches == launches, "another scalar value falls back")
    # an extra keyword argument (not stream) is part of the signature: falls back
    try:
        guard.run(x, out, 32, grid=(1,))
    except TypeError:
        pass   # Inductor's stand-in takes no grid=; what matters is which kernel was chosen
    check(guard._kopt_fallbacks == 5 and jit.launches == launches, "an unverified keyword argument falls back")

    # back to the verified signature: the candidate again
    (y2,) = m.call([x.clone()])
    check(jit.launches == launches + 1 and guard._kopt_fallbacks == 5, "the verified signature runs the candidate again")
    check(torch.equal(y2, ref(x)), "and its result is right")

    check(jit.warmups == 0 and jit.direct == 0 and not guard._kopt_fast,
          "a signature without the capture's alignment never launches directly")
    plan_module(jit)
    judged_module(jit)
    knobs_module(jit)
    env_module(jit)
    print("guard cpu: %d checks passed" % passed())


def plan_module(jit):
    """tests/fixtures/guard/stitched_plan_cpu.py: the candidate is a form-P plan and the signature
    pins both tensors' 16-byte alignment, so the guard's run_verified launches the compiled kernel
    directly (bound once); a misaligned argument falls back to Inductor's kernel."""
    m = load("stitched_plan_cpu")
    guard = getattr(m, K)
    orig = getattr(m, "_kopt_orig_" + K)
    launches, warmups, direct = jit.launches, jit.warmups, jit.direct
    check(guard._kopt_fast, "every tensor's alignment is pinned: the guard may launch directly")
    x = torch.randn(4, 8)
    check(x.data_ptr() % 16 == 0, "test setup: an aligned input")
    (y,) = m.call([x])
    check(torch.equal(y, ref(x)), "the direct launch computes the candidate's result")
    check(jit.warmups == warmups + 1 and jit.direct == direct + 1 and jit.launches == launches,
          "the first verified call binds the compiled kernel and launches it directly (warmups %d, direct %d, "
          "JIT %d)" % (jit.warmups - warmups, jit.direct - direct, jit.launches - launches))
    (y2,) = m.call([x.clone()])
    check(torch.equal(y2, ref(x)) and jit.warmups == warmups + 1 and jit.direct == direct + 2,
          "the second reuses the bound kernel (no second warmup)")
    check(orig.calls == 0 and guard._kopt_fallbacks == 0, "Inductor's kernel did not run")
    # same shape, stride and dtype, but a data pointer 4 bytes off alignment: Triton would have
    # specialised differently, so the verified launch does not apply
    base = torch.randn(33)
    xm = base[1:].view(4, 8)
    check(xm.stride() == (8, 1) and xm.data_ptr() % 16 != 0, "test setup: a misaligned (4, 8) view")
    (ym,) = m.call([xm])
    check(orig.calls == 1 and guard._kopt_fallbacks == 1 and jit.direct == direct + 2,
          "a misaligned argument falls back to Inductor's kernel")
    check(torch.equal(ym, ref(xm)), "and gets the right result")
    # the launcher called without the guard (kopt's gate-1 compile step) takes Triton's own launch
    out = torch.empty(4, 8)
    guard.launch(x, out, 32)
    check(jit.launches == launches + 1 and torch.equal(out, ref(x)), "the launcher alone launches through the JIT")
    # a kernel whose compiled form cannot be bound (another Triton): the JIT launch, every call
    launch_shim = m._kopt_cand_triton_poi_fused_mul_add_0
    kern = launch_shim.kernels[0]
    saved = type(kern).warmup
    tries = []

    def no_warmup(self, *a, **k):
        tries.append(1)
        raise AttributeError("warmup")
    type(kern).warmup = no_warmup
    try:
        launch_shim.bound.clear()
        out2 = torch.empty(4, 8)
        guard.run(x, out2, 32, stream=0)
        check(jit.launches == launches + 2 and torch.equal(out2, ref(x)),
              "where the compiled kernel cannot be bound, Triton's JIT launch runs it")
        guard.run(x, out2, 32, stream=0)
        check(jit.launches == launches + 3 and len(tries) == 1,
              "a launch that could not be bound is not tried again (JIT launches %d, tries %d)"
              % (jit.launches - launches, len(tries)))
        check(list(launch_shim.unbound.values()) == ["AttributeError: warmup"],
              "and why is kept: %r" % (launch_shim.unbound,))
    finally:
        type(kern).warmup = saved



def two_calls(m, jit, what, falls, said):
    """Call module m twice on the verified shapes, warnings recorded: the result is right either
    way; with falls, Inductor's kernel ran both times with one warning that says `said`, else the
    candidate ran both times with none."""
    import warnings
    guard = getattr(m, K)
    launches = jit.launches
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (y,) = m.call([x])
        (y2,) = m.call([x])
    check(torch.equal(y, ref(x)) and torch.equal(y2, ref(x)), "%s: the result is right" % what)
    if falls:
        check(guard._kopt_fallbacks == 2 and jit.launches == launches and len(w) == 1 and said in str(w[0].message),
              "%s: Inductor's kernel runs, one warning (%d fallbacks, warnings %s)"
              % (what, guard._kopt_fallbacks, [str(x.message) for x in w]))
    else:
        check(guard._kopt_fallbacks == 0 and jit.launches == launches + 2 and not w, "%s: the candidate runs" % what)


def knobs_module(jit):
    """A Triton knob that changes the generated code, set when the module first launches: every
    launch runs Inductor's kernel (kopt verified Triton's default compile), with one warning; a
    knob at its default (FMA fusion on) or an unrelated Triton variable changes nothing."""
    for env, falls in (({"TRITON_F32_DEFAULT": "ieee"}, True), ({"TRITON_DEFAULT_FP_FUSION": "0"}, True),
                       ({"TRITON_DEFAULT_FP_FUSION": "1", "TRITON_CACHE_DIR": "/tmp/x"}, False)):
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            two_calls(load(), jit, str(env), falls, list(env)[0])
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def env_module(jit):
    """_KOPT_VERIFIED_ON: a module verified with one Triton version, loaded under another, runs
    Inductor's kernel on every launch (one warning naming both versions); a recorded compute
    capability the launch's device does not have (here a CPU tensor) does the same; the recorded
    version and no capability (unknown): the candidate runs."""
    triton = sys.modules["triton"]
    saved = triton.__version__
    cases = (("3.7.0", None, True, "Triton 3.7.0 (kopt verified with 3.6.0+fake)"),
             (saved, (9, 0), True, "compute capability None (kopt verified on (9, 0))"),
             (saved, None, False, None))
    try:
        for version, cap, falls, said in cases:
            triton.__version__ = version
            m = load()
            check(m._KOPT_VERIFIED_ON == {"triton": "3.6.0+fake", "capability": None},
                  "the module records the Triton it was verified with: %r" % (m._KOPT_VERIFIED_ON,))
            m._KOPT_VERIFIED_ON["capability"] = cap   # as a module verified on an H200 would say
            two_calls(m, jit, "Triton %s, capability %s" % (version, cap), falls, said)
    finally:
        triton.__version__ = saved


class _StandInCompiled:
    """Stands in for Triton's CompiledKernel built from a kept launch: its runner computes the
    candidate's result on the CPU (x * 2 + 1 over N elements) and counts launches."""
    built, runs = [], []

    def __init__(self, src, group, h):
        _StandInCompiled.built.append(sorted(group))
        self.names = src.fn.arg_names

    def __getitem__(self, grid):
        def runner(*ordered, stream=None):
            a = dict(zip(self.names, ordered))
            _StandInCompiled.runs.append((grid, stream))
            n = a["N"]
            a["out_ptr0"].view(-1)[:n].copy_(a["in_ptr0"].view(-1)[:n] * 2.0 + 1.0)
        return runner


def judged_module(jit):
    """tests/fixtures/guard/judged_plan_cpu.py: the module the gates judge for the same form-P
    candidate: no line of the candidate's file, its kernel a kopt.cubin.CubinFunction over the
    launch gate 1 kept (here in a temporary directory with a stand-in loader). The verified
    signature runs the kept launch through the guard's bound path; the launcher alone (gate 2's
    isolate) through the CubinFunction's checked call; inside dry_run (gate 1's compile step) it
    loads and launches nothing; a misaligned argument falls back to Inductor's kernel; a call the
    kept launch was not compiled for raises SpecMismatch."""
    import json
    import tempfile
    sys.path.insert(0, os.path.join(ROOT, "worker"))
    from kopt import cubin
    text = open(os.path.join(ROOT, "tests", "fixtures", "guard", "judged_plan_cpu.py")).read()
    check("def _mul_add" not in text and "N: tl.constexpr" not in text and "kopt-candidate" not in text
          and "in_ptr0.view(-1)[:N]" not in text,
          "the judged module holds no line of the candidate's file")
    launches = jit.launches
    with tempfile.TemporaryDirectory() as tmp:
        keep = os.path.join(tmp, "kept-cubins", "it's-\u00e9")
        os.makedirs(keep)
        name = "_kopt_%s___mul_add" % K
        spec = {"kernel": name, "arg_names": ["in_ptr0", "out_ptr0", "xnumel", "N"],
                "signature": ["*fp32", "*fp32", "i32", "constexpr"], "constexprs": {"N": 32},
                "divisible_by_16": ["in_ptr0", "out_ptr0", "xnumel"], "num_warps": 1, "num_stages": 0}
        with open(os.path.join(keep, "launch0.spec.json"), "w") as f:
            json.dump(spec, f)
        with open(os.path.join(keep, "launch0.json"), "w") as f:
            json.dump({"name": name, "num_warps": 1}, f)
        with open(os.path.join(keep, "launch0.cubin"), "wb") as f:
            f.write(b"\x7fELF stand-in")
        cwd = os.getcwd()
        cubin.COMPILED_KERNEL_CLS = _StandInCompiled
        os.chdir(tmp)
        try:
            m = load("judged_plan_cpu")
        finally:
            os.chdir(cwd)
        guard = getattr(m, K)
        orig = getattr(m, "_kopt_orig_" + K)
        kern = getattr(m, name)
        check(type(kern).__name__ == "CubinFunction" and _StandInCompiled.built == [[name + ".cubin", name + ".json"]],
              "the kernel is a CubinFunction built from the kept launch's files")
        x = torch.randn(4, 8)
        (y,) = m.call([x])
        check(torch.equal(y, ref(x)) and len(_StandInCompiled.runs) == 1 and _StandInCompiled.runs[0][0] == (1, 1, 1),
              "the verified signature runs the kept launch (runs %r)" % (_StandInCompiled.runs,))
        (y2,) = m.call([x.clone()])
        check(torch.equal(y2, ref(x)) and len(_StandInCompiled.runs) == 2, "and again, through the bound runner")
        check(jit.launches == launches and orig.calls == 0, "neither Triton's JIT nor Inductor's kernel ran")
        out = torch.empty(4, 8)
        guard.run(x, out, 32, stream=0)
        check(torch.equal(out, ref(x)) and len(_StandInCompiled.runs) == 3,
              "the launcher alone (gate 2's isolate) runs the kept launch through the checked call")
        out3 = torch.full((4, 8), 7.0)
        with cubin.dry_run():
            guard.launch(x, out3, 32)
        check(len(_StandInCompiled.runs) == 3 and bool((out3 == 7.0).all()),
              "inside dry_run (gate 1's compile step) nothing is launched")
        xm = torch.randn(33)[1:].view(4, 8)
        (ym,) = m.call([xm])
        check(orig.calls == 1 and guard._kopt_fallbacks == 1 and torch.equal(ym, ref(xm)) and
              len(_StandInCompiled.runs) == 3, "a misaligned argument falls back to Inductor's kernel")
        try:
            guard.launch(xm, torch.empty(4, 8), 32)
            check(False, "a misaligned call of the launcher is launched")
        except cubin.SpecMismatch as e:
            check(len(_StandInCompiled.runs) == 3 and "aligned" in str(e),
                  "a call the kept launch was not compiled for raises SpecMismatch: %s" % e)
        cubin.COMPILED_KERNEL_CLS = None


if __name__ == "__main__":
    main()
