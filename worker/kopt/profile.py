"""`profile`: per-launch GPU times of an instrumented output module (PROTOCOL.md, `profile`).

The core emits the module with every launch of call() wrapped as
    _kopt_prof.pre(i, lambda: (arg, ...)); <launch i>; _kopt_prof.post(i, lambda: (arg, ...))
and the worker sets the module global `_kopt_prof` to a Prof object:
  * describe mode (the first, untimed pass): post() evaluates the thunk and records, per
    argument, a tensor's {shape, stride, dtype, nbytes = numel*element_size,
    storage_bytes = untyped_storage().nbytes()} or {"value": ...} for anything else;
  * timing mode: pre(i) records launch i's start event, post(i, thunk) its end event and does
    not call the thunk. Events are created once (after the describe pass, one pair per launch
    index seen) and reused by every rep.
Per rep: the argument list (the problem's own tensors, kopt.modules), L2 flush, stall, total-start event, call(), total-end event,
synchronize, then all elapsed times are read. A launch that did not run in a rep (a branch not
taken) has time null in that rep; a launch that runs more than once per call() is timed on its
last run. Order of `launches` and of each rep's times: first execution in the describe pass.
Warm-up runs (timing mode, untimed) also measure call()'s CPU time for the stall (kopt.timing).
After the describe pass every Inductor kernel has settled on one launch configuration (its
autotuner, and with max-autotune its coordinate descent, ran on the model's shapes): `configs`
reports it per kernel name (chosen_configs), where the core's search starts.
"""

import time

import torch

from kopt.errors import BadRequest, wrap
from kopt.modules import cache
from kopt.protocol import get_arg
from kopt.tensors import launch_arg
from kopt.timing import flush_buffer, stall, stall_ms, cycles_per_ms, MIN_STALL_MS


class Prof:
    """The object injected as the instrumented module's `_kopt_prof`."""

    def __init__(self):
        self.describing = True
        self.order = []        # launch indices in order of first execution (describe pass)
        self.described = {}    # index -> list of argument descriptions
        self.events = {}       # index -> (start event, end event)
        self.fired = set()     # indices whose end event was recorded in the current rep

    # -- called by the instrumented module
    def pre(self, i, thunk=None):
        if not self.describing:
            ev = self.events.get(i)
            if ev is not None:  # launches the describe pass did not see are not timed
                ev[0].record()

    def post(self, i, thunk):
        if self.describing:
            if i not in self.described:
                self.order.append(i)
                self.described[i] = [launch_arg(a) for a in _as_tuple(thunk())]
            return
        ev = self.events.get(i)
        if ev is not None:
            ev[1].record()
            self.fired.add(i)

    # -- used by op_profile
    def start_timing(self):
        self.describing = False
        for i in self.order:
            if i not in self.events:
                self.events[i] = (torch.cuda.Event(enable_timing=True),
                                  torch.cuda.Event(enable_timing=True))

    def read_rep(self):
        times = []
        for i in self.order:
            times.append(self.events[i][0].elapsed_time(self.events[i][1])
                         if i in self.fired else None)
        return times


_BLOCKS = ("XBLOCK", "YBLOCK", "R0_BLOCK")


def is_autotuner(k):
    """An Inductor kernel: a CachingAutotuner, known by the attributes kopt uses of it."""
    return hasattr(k, "autotune_to_one_config") and hasattr(k, "mutated_arg_names")


def _kernels(mod):
    """(name, kernel) of the module's Inductor kernels (CachingAutotuner globals)."""
    return [(n, k) for n, k in list(vars(mod).items()) if n.startswith("triton_") and is_autotuner(k)]


def config_counts(mod):
    """{kernel name: configurations it holds}, read before its first run (autotuning keeps only
    the chosen one)."""
    out = {}
    for name, k in _kernels(mod):
        try:
            out[name] = len(getattr(k, "configs", None) or ())
        except Exception:  # noqa: BLE001 - Inductor's internals differ between releases
            pass
    return out


def chosen_configs(mod, counts):
    """{kernel name: {XBLOCK, YBLOCK?, R0_BLOCK?, num_warps, num_stages, choices,
    found_by_coordesc}} for every Inductor kernel (a CachingAutotuner global of the module) that
    runs one configuration: the one its autotuner chose among `choices` (counts, from before the
    first run), or its only one. Attributes differ between Inductor releases: a kernel whose
    attributes are not as expected is left out, never guessed."""
    out = {}
    for name, k in _kernels(mod):
        try:
            launchers = getattr(k, "launchers", None)
            if not launchers or len(launchers) != 1:
                continue
            c = launchers[0].config
            d = {b: int(c.kwargs[b]) for b in _BLOCKS if isinstance(c.kwargs.get(b), int)}
            d["num_warps"] = int(c.num_warps)
            d["num_stages"] = int(c.num_stages)
            d["choices"] = max(1, counts.get(name, 1))
            d["found_by_coordesc"] = bool(getattr(c, "found_by_coordesc", False))
        except Exception:  # noqa: BLE001 - Inductor's internals differ between releases
            continue
        out[name] = d
    return out


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def op_profile(ctx, req):
    mpath = get_arg(req, "module", str)
    apath = get_arg(req, "args", str)
    reps = get_arg(req, "reps", int, 20)
    warmup = get_arg(req, "warmup", int, 3)
    if reps < 1 or warmup < 0:
        raise BadRequest("reps must be >= 1 and warmup >= 0")

    mc = cache(ctx)
    mod, args = mc.prepared(mpath, apath, ctx.problem)
    shared = mc.shared(apath)
    prof = Prof()
    mod._kopt_prof = prof  # the module global the instrumentation calls

    def call(p):
        try:
            return mc.call_module(ctx, mpath, mod, p, shared)
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap("module_failed", "call() of %s raised" % mpath, e)

    counts = config_counts(mod)
    with torch.no_grad():
        # Describe pass (untimed; also triggers Triton autotuning on first launches).
        out = call(list(args))
        del out
        torch.cuda.synchronize()
        prof.start_timing()

        enqueue = []
        for _ in range(warmup):
            p = list(args)
            torch.cuda.synchronize()
            prof.fired.clear()
            t0 = time.perf_counter()
            out = call(p)
            enqueue.append(time.perf_counter() - t0)
            del out, p
            torch.cuda.synchronize()
        sleep = stall_ms([enqueue]) if warmup else MIN_STALL_MS
        buf = flush_buffer(ctx)
        cycles_per_ms(ctx)
        t_start = torch.cuda.Event(enable_timing=True)
        t_end = torch.cuda.Event(enable_timing=True)
        times, total = [], []
        for _ in range(reps):
            p = list(args)
            buf.zero_()
            stall(ctx, sleep)
            prof.fired.clear()
            t_start.record()
            out = call(p)
            t_end.record()
            del out, p
            torch.cuda.synchronize()
            times.append(prof.read_rep())
            total.append(t_start.elapsed_time(t_end))

    launches = [{"index": i, "args": prof.described[i]} for i in prof.order]
    return {"launches": launches, "times": times, "total": total, "sleep_ms": sleep,
            "configs": chosen_configs(mod, counts)}
