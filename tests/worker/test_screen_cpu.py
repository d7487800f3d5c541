#!/usr/bin/env python3
"""CPU test of the kernel-level screen's compile step (worker/kopt/isolate.py: _precompile,
_WarmupOnly, local_bytes, over_local_limit) through a stand-in for Triton's JITFunction whose
warm-up returns a stand-in CompiledKernel with a chosen local-memory size. Checked: a candidate
whose kernels need more local memory a thread than SCREEN_LOCAL_BYTES is dropped with the reason
and is never launched (nor is any other: the compile step launches nothing), one at the limit is
kept, a candidate that raises is dropped with its error, an Inductor-style candidate is left to
its import, both with one compile thread and with several; the stand-in's modules are loaded
(_init_handles) before their size is read; JITFunction's own launch is restored afterwards.

Run: python3 tests/worker/test_screen_cpu.py (a python with torch, no GPU, no Triton).
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from checklib import check, passed  # noqa: E402

LAUNCHED = []   # (fn name, grid): real launches, which the compile step must never make


class Compiled:
    """Triton's CompiledKernel as the screen reads it: n_spills = local bytes / 4, known once
    _init_handles has loaded the module."""

    def __init__(self, local):
        self.local, self.loaded, self.n_spills = local, False, None

    def _init_handles(self):
        self.loaded = True
        self.n_spills = self.local // 4


class BrokenLoad(Compiled):
    def _init_handles(self):
        raise RuntimeError("out of resources: shared memory")


class JITFunction:
    def __init__(self, name, compiled):
        self.name, self.compiled, self.runs = name, compiled, 0

    def __getitem__(self, grid):
        def launch(*a, **k):
            LAUNCHED.append((self.name, grid))
        return launch

    def run(self, *a, grid, warmup, **k):
        self.runs += 1
        if not warmup:
            LAUNCHED.append((self.name, grid))
        return self.compiled


# Triton is not installed where this runs: the stand-in is what `from triton.runtime.jit import
# JITFunction` finds.
jit_mod = types.ModuleType("triton.runtime.jit")
jit_mod.JITFunction = JITFunction
sys.modules.setdefault("triton", types.ModuleType("triton"))
sys.modules.setdefault("triton.runtime", types.ModuleType("triton.runtime"))
sys.modules["triton.runtime.jit"] = jit_mod

from kopt import isolate  # noqa: E402

torch.cuda.synchronize = lambda *a, **k: None   # no GPU here


class Launcher:
    """A launcher-form candidate: `launch` runs its kernels through jit_fn[grid](...)."""

    def __init__(self, *fns):
        self.fns = fns

    def launch(self, *args):
        for fn in self.fns:
            fn[(4,)](*args)


class Raising:
    def launch(self, *args):
        raise ValueError("kopt plan: a check does not hold: n <= 1024")


class InductorStyle:   # compiled at import; no launch attribute
    pass


LIMIT = isolate.SCREEN_LOCAL_BYTES
check(LIMIT == 2048, "the screen's local-memory limit is 2048 bytes a thread")

# local_bytes / over_local_limit on their own
small, big = Compiled(512), Compiled(10176)
check(isolate.local_bytes([small, big]) == 10176 and small.loaded and big.loaded, "local_bytes: the largest, modules loaded")
check(isolate.local_bytes([]) is None and isolate.local_bytes([object(), BrokenLoad(9999)]) is None,
      "local_bytes: None when no kernel says (no handle loader, or the load raises)")
check(isolate.over_local_limit([Compiled(LIMIT)]) is None, "at the limit: launched")
why = isolate.over_local_limit([Compiled(LIMIT + 4)])
check(why is not None and "%d bytes of local memory" % (LIMIT + 4) in why, "over the limit by one word: not launched (%s)" % why)
check(isolate.over_local_limit([Compiled(4096)], limit=8192) is None, "a limit given")

for threads in ("1", "3"):
    os.environ["KOPT_COMPILE_THREADS"] = threads
    LAUNCHED.clear()
    ok_fn = JITFunction("ok", Compiled(1024))
    edge_fn = JITFunction("edge", Compiled(LIMIT))
    spill_fn = JITFunction("spill", Compiled(10176))
    helper_fn = JITFunction("helper", Compiled(0))
    kerns = [InductorStyle(), Launcher(ok_fn), Launcher(helper_fn, spill_fn), Raising(), InductorStyle(),
             Launcher(edge_fn), None]
    status = [None] * len(kerns)
    status[6] = "failed to import"
    saved = JITFunction.__getitem__
    used = isolate._precompile(kerns, status, [torch.ones(8)], ["in"])
    tag = "(%s compile thread%s) " % (threads, "" if threads == "1" else "s")
    check(JITFunction.__getitem__ is saved, tag + "JITFunction's launch restored")
    check(LAUNCHED == [], tag + "nothing launched while compiling: %s" % LAUNCHED)
    check(used == min(int(threads), 4), tag + "threads used: %s" % used)
    check(kerns[1] is not None and status[1] is None and ok_fn.runs == 1, tag + "1024 bytes a thread: kept, compiled once")
    check(kerns[5] is not None and status[5] is None, tag + "exactly the limit: kept")
    check(kerns[2] is None and "10176 bytes of local memory" in status[2],
          tag + "a launch of two kernels, one spilling 10176 bytes: dropped (%s)" % status[2])
    check(kerns[3] is None and "check does not hold" in status[3], tag + "a raising candidate: dropped with its error")
    check(isinstance(kerns[0], InductorStyle) and isinstance(kerns[4], InductorStyle) and status[4] is None,
          tag + "Inductor-style candidates left to their import")
    check(kerns[6] is None and status[6] == "failed to import", tag + "an earlier failure kept")

# no launcher-form candidate: nothing compiled, one thread reported
check(isolate._precompile([InductorStyle(), InductorStyle()], [None, None], [], []) == 1, "nothing to compile")

print("screen compile step: %d checks passed" % passed())
