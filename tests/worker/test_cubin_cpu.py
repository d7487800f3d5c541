#!/usr/bin/env python3
"""CPU test of kopt.cubin (worker/kopt/cubin.py): a kept launch (the files `kopt lint --sass
--keep-cubins` writes; here written by the test, the cubin a stand-in) is loaded through a stand-in
for Triton's CompiledKernel that records what it was built from and how it was launched. Checked:
the source the loader gets (signature in declared order, constants by index, names); a call whose
arguments specialise as the compile did is launched with them; calls that would have compiled
differently (dtype, alignment, an integer that is 1 or not divisible by 16 any more, a different
constexpr, an argument missing) raise SpecMismatch and launch nothing; malformed or mismatched
files are refused before anything is built.

Run: python3 tests/worker/test_cubin_cpu.py (a python with torch, no GPU).
"""
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from checklib import check, passed  # noqa: E402
from kopt import cubin  # noqa: E402

SPEC = {"kernel": "_k", "arg_names": ["x", "y", "n", "m", "B"], "signature": ["*fp32", "*fp32", "i32", "i32", "constexpr"],
        "constexprs": {"B": 1024}, "divisible_by_16": ["x", "y", "n"], "num_warps": 4, "num_stages": 1}
META = {"name": "_k", "num_warps": 4, "num_stages": 1, "num_ctas": 1, "shared": 0}


class StandIn:
    """Records the source and metadata group it is built from, and each launch."""
    built, launched = [], []

    def __init__(self, src, group, h):
        StandIn.built.append((src, dict(group), h))

    def __getitem__(self, grid):
        def run(*args, stream=None):
            StandIn.launched.append((grid, args, stream))
        return run


def write(d, spec=SPEC, meta=META, cubin_bytes=b"\x7fELF stand-in"):
    with open(os.path.join(d, "launch0.spec.json"), "w") as f:
        json.dump(spec, f)
    with open(os.path.join(d, "launch0.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(d, "launch0.cubin"), "wb") as f:
        f.write(cubin_bytes)


with tempfile.TemporaryDirectory() as d:
    write(d)
    k = cubin.CubinKernel(d, 0, compiled_kernel_cls=StandIn)
    src, group, _ = StandIn.built[-1]
    check(list(src.signature.items()) == list(zip(SPEC["arg_names"], SPEC["signature"])), "signature in declared order")
    check(src.constants == {(4,): 1024}, "constants by index: %r" % src.constants)
    check(src.fn.arg_names == SPEC["arg_names"], "names")
    check(sorted(group) == ["_k.cubin", "_k.json"] and group["_k.cubin"].endswith("launch0.cubin"), "metadata group")
    x, y = torch.randn(64), torch.empty(64)
    k[(4,)](x, y, 64, 7, 1024, stream=5)
    check(len(StandIn.launched) == 1 and StandIn.launched[0][0] == (4, 1, 1) and StandIn.launched[0][2] == 5,
          "a matching call is launched, the grid padded to 3-D: %r" % (StandIn.launched,))
    bad = [
        ("dtype", (x.double(), y, 64, 7, 1024)),
        ("alignment", (torch.randn(65)[1:], y, 64, 7, 1024)),
        ("integer now 1", (x, y, 1, 7, 1024)),
        ("divisibility lost", (x, y, 65, 7, 1024)),
        ("divisibility gained", (x, y, 64, 32, 1024)),
        ("64-bit integer", (x, y, 64, 1 << 40, 1024)),
        ("constexpr value", (x, y, 64, 7, 2048)),
        ("float for an integer", (x, y, 64.0, 7, 1024)),
        ("missing argument", (x, y, 64, 7)),
    ]
    for what, args in bad:
        n = len(StandIn.launched)
        try:
            k[(4,)](*args)
            check(False, "%s: launched" % what)
        except cubin.SpecMismatch as e:
            check(len(StandIn.launched) == n, "%s: something was launched" % what)
            check(str(e).startswith("_k: "), "%s: message %s" % (what, e))
    # files that do not agree or are not what they should be
    for what, spec, meta in (
            ("metadata names another kernel", SPEC, dict(META, name="_other")),
            ("metadata has other warps", SPEC, dict(META, num_warps=8)),
            ("names and types of different lengths", dict(SPEC, signature=SPEC["signature"][:-1]), META),
            ("a name that is not an identifier", dict(SPEC, arg_names=["x", "y", "n", "m", "B; import os"]), META),
            ("a constexpr value for a runtime parameter", dict(SPEC, constexprs={"n": 3}), META)):
        with tempfile.TemporaryDirectory() as d2:
            write(d2, spec, meta)
            n = len(StandIn.built)
            try:
                cubin.CubinKernel(d2, 0, compiled_kernel_cls=StandIn)
                check(False, "%s: loaded" % what)
            except ValueError:
                check(len(StandIn.built) == n, "%s: built anyway" % what)
    with tempfile.TemporaryDirectory() as d3:
        write(d3)
        os.remove(os.path.join(d3, "launch0.cubin"))
        os.symlink("/etc/hostname", os.path.join(d3, "launch0.cubin"))
        try:
            cubin.CubinKernel(d3, 0, compiled_kernel_cls=StandIn)
            check(False, "a cubin that is a link was loaded")
        except OSError:
            pass

# CubinFunction: one jit function's kept launches (here launch 0 with B=1024 and launch 1 with
# B=256, 8 warps), called as kopt's launcher calls a JIT function
with tempfile.TemporaryDirectory() as d4:
    write(d4)
    spec1 = dict(SPEC, constexprs={"B": 256}, num_warps=8)
    with open(os.path.join(d4, "launch1.spec.json"), "w") as f:
        json.dump(spec1, f)
    with open(os.path.join(d4, "launch1.json"), "w") as f:
        json.dump(dict(META, num_warps=8), f)
    with open(os.path.join(d4, "launch1.cubin"), "wb") as f:
        f.write(b"\x7fELF stand-in 1")
    fn = cubin.CubinFunction(d4.encode(), (0, 1), compiled_kernel_cls=StandIn)
    x, y = torch.randn(64), torch.empty(64)
    n = len(StandIn.launched)
    fn[(2,)](x, y, 64, 7, B=256, num_warps=8)
    fn[(3,)](x, y, 64, 7, B=1024, num_warps=4, stream=9)
    fn[(5,)](x, y, n=64, m=7, B=1024)
    got = StandIn.launched[n:]
    check([g for g, _, _ in got] == [(2, 1, 1), (3, 1, 1), (5, 1, 1)] and got[1][2] == 9,
          "each call runs the kept launch it specialises as: %r" % (got,))
    check(got[0][1][-1] == 256 and got[1][1][-1] == 1024 and list(got[2][1][:4]) == [x, y, 64, 7],
          "arguments handed over in declared order, keywords bound by name")
    for what, call in (("a constexpr no launch was compiled for", lambda: fn[(1,)](x, y, 64, 7, B=512)),
                       ("warps no launch was compiled with", lambda: fn[(1,)](x, y, 64, 7, B=256, num_warps=4)),
                       ("a parameter given twice", lambda: fn[(1,)](x, y, 64, 7, m=7, B=256)),
                       ("an unknown keyword", lambda: fn[(1,)](x, y, 64, 7, C=1, B=256)),
                       ("a runtime parameter missing", lambda: fn[(1,)](x, y, 64, B=256)),
                       ("a misaligned pointer", lambda: fn[(1,)](torch.randn(65)[1:], y, 64, 7, B=256, num_warps=8))):
        k0 = len(StandIn.launched)
        try:
            call()
            check(False, "%s: launched" % what)
        except cubin.SpecMismatch:
            check(len(StandIn.launched) == k0, "%s: something was launched" % what)
    with cubin.dry_run():
        k0 = len(StandIn.launched)
        fn[(2,)](x, y, 64, 7, B=256, num_warps=8)
        check(len(StandIn.launched) == k0, "dry_run: checked, nothing launched")
    w = fn.warmup(x, y, 64, 7, grid=(2,), B=256, num_warps=8)
    w[(2,)](x, y, 64, 7, 256, stream=3)
    check(StandIn.launched[-1][0] == (2, 1, 1) and StandIn.launched[-1][2] == 3,
          "warmup hands back the runner of the launch it checked")
    try:
        cubin.CubinFunction(d4, (), compiled_kernel_cls=StandIn)
        check(False, "a CubinFunction over no launch was built")
    except ValueError:
        pass
print("cubin loader: %d checks passed" % passed())
