"""Gate 1's compile step and gate 2's isolation harness (docs/CANDIDATES.md). The worker only
runs kernels and dumps tensors; every verdict is the core's.

capture_launch {module, args, launch, out}
    `module` is an instrumented output module (each launch wrapped in
    `_kopt_prof.pre(i, lambda: (...))` / `_kopt_prof.post(i, ...)`). call() runs once on clones
    of the saved arguments; right before launch `launch` runs, its arguments (the probe tuple:
    tensors and ints exactly as the kernel's .run() receives them) are cloned and saved with
    torch.save to `out`. Result: {"args": [argument descriptions]}.

compile_candidate {module, kernel, launch_args}
    Imports the re-stitched module (Inductor-style kernels compile at import) and compiles the
    kernel `kernel` for the captured arguments without running anything: a launcher-form
    candidate (`NAME = _KoptLaunch(launch)`) is called with every `jit_fn[grid](...)` turned into
    a warm-up (compile only). Result {"compiled": true} or {"compiled": false, "error": "..."}:
    a candidate that does not compile is an answer, not a worker failure.

isolate {orig, cand, kernel, launch_args, roles, seeds, out_dir, repeat=2}
    Runs the original kernel (from the module `orig`) and the candidate (same name in the
    module `cand`) on input sets: the captured arguments, then one per seed with every floating
    input (roles "in"/"inout") redrawn from a standard normal distribution with the same shape,
    strides and dtype (integer inputs keep their captured values: they may be indices). Before
    each run the outputs ("out" roles) are filled with NaN (integers: the dtype's minimum),
    in-place arguments ("inout") start from the set's input values. The candidate runs `repeat`
    times on the same set (a candidate that disagrees with itself has a race). After each run the
    outputs and in-place arguments are dumped. Result: {"sets": [{"name": "captured"|"seed<s>",
    "runs": {"orig": [tensor-file per checked arg], "cand0": [...], "cand1": [...]}}],
    "checked": [argument index, ...]}.
"""

import os
import time

import torch

from kopt.errors import BadRequest, wrap
from kopt.modules import cache
from kopt.protocol import get_arg
from kopt.tensors import clone_args, launch_arg, write_tensor
from kopt.profile import _as_tuple


class _CaptureProf:
    """Stands in for `_kopt_prof` in an instrumented module: saves launch `target`'s args."""

    def __init__(self, target, path):
        self.target = target
        self.path = path
        self.desc = None

    def pre(self, i, thunk=None):
        if i == self.target and self.desc is None and thunk is not None:
            args = list(_as_tuple(thunk()))
            torch.cuda.synchronize()
            torch.save(clone_args(args), self.path)
            self.desc = [launch_arg(a) for a in args]

    def post(self, i, thunk=None):
        pass


def op_capture_launch(ctx, req):
    mpath = get_arg(req, "module", str)
    apath = get_arg(req, "args", str)
    launch = get_arg(req, "launch", int)
    out = get_arg(req, "out", str)
    mod, args = cache(ctx).prepared(mpath, apath)
    prof = _CaptureProf(launch, out)
    mod._kopt_prof = prof
    with torch.no_grad():
        try:
            res = mod.call(clone_args(args))
        except (Exception, SystemExit) as e:
            raise wrap("module_failed", "call() of %s raised" % mpath, e)
        del res
        torch.cuda.synchronize()
    if prof.desc is None:
        raise BadRequest("launch %d did not run in call() of %s" % (launch, mpath))
    return {"args": prof.desc}


def _load_args(path):
    return torch.load(path, weights_only=False)


class _WarmupOnly:
    """While active, `jit_fn[grid](...)` compiles the kernel for those arguments and launches
    nothing (triton's JITFunction.run with warmup=True)."""

    def __enter__(self):
        from triton.runtime.jit import JITFunction
        self.cls = JITFunction
        self.saved = JITFunction.__getitem__

        def getitem(fn, grid):
            return lambda *a, **k: fn.run(*a, grid=grid, warmup=True, **k)

        JITFunction.__getitem__ = getitem
        return self

    def __exit__(self, *exc):
        self.cls.__getitem__ = self.saved
        return False


def op_compile_candidate(ctx, req):
    mpath = get_arg(req, "module", str)
    kernel = get_arg(req, "kernel", str)
    lpath = get_arg(req, "launch_args", str)
    try:
        mod = cache(ctx).module(mpath)
    except Exception as e:  # an Inductor-style kernel that fails to compile fails the import
        return {"compiled": False, "error": _short(e)}
    kern = getattr(mod, kernel, None)
    if kern is None:
        return {"compiled": False, "error": "the module defines no %s" % kernel}
    launch = getattr(kern, "launch", None)
    if launch is None:
        return {"compiled": True}  # Inductor-style: compiled at import
    args = clone_args(_load_args(lpath))
    try:
        with torch.no_grad(), _WarmupOnly():
            launch(*args)
        torch.cuda.synchronize()
    except Exception as e:
        return {"compiled": False, "error": _short(e)}
    return {"compiled": True}


def _short(e):
    text = "%s: %s" % (type(e).__name__, e)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # Triton compilation errors put the useful line last; keep the head and the tail.
    if len(lines) > 12:
        lines = lines[:4] + ["..."] + lines[-8:]
    return "\n".join(lines)[:4000]


def _poison(t):
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).min)


def _redraw(args, roles, seed):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    out = clone_args(args)
    for k, (a, r) in enumerate(zip(out, roles)):
        if r in ("in", "inout") and isinstance(a, torch.Tensor) and a.is_floating_point():
            # Fill the whole storage, so strided views see fresh values everywhere.
            st = a.untyped_storage()
            flat = torch.empty(0, dtype=a.dtype, device=a.device)
            flat.set_(st, 0, (st.nbytes() // a.element_size(),), (1,))
            flat.normal_(generator=g)
    return out


def op_isolate(ctx, req):
    opath = get_arg(req, "orig", str)
    cpath = get_arg(req, "cand", str)
    kernel = get_arg(req, "kernel", str)
    lpath = get_arg(req, "launch_args", str)
    roles = get_arg(req, "roles", list)
    seeds = get_arg(req, "seeds", list)
    out_dir = get_arg(req, "out_dir", str)
    repeat = get_arg(req, "repeat", int, 2)
    os.makedirs(out_dir, exist_ok=True)
    base = _load_args(lpath)
    if len(roles) != len(base):
        raise BadRequest("roles has %d entries, the launch has %d arguments" % (len(roles), len(base)))
    orig = getattr(cache(ctx).module(opath), kernel)
    cand = getattr(cache(ctx).module(cpath), kernel)
    checked = [k for k, r in enumerate(roles) if r in ("out", "inout") and isinstance(base[k], torch.Tensor)]
    stream = torch.cuda.current_stream().cuda_stream
    sets = []
    for name, seed in [("captured", None)] + [("seed%d" % s, int(s)) for s in seeds]:
        inputs = clone_args(base) if seed is None else _redraw(base, roles, seed)
        runs = {}
        for side, kern in [("orig", orig)] + [("cand%d" % r, cand) for r in range(repeat)]:
            args = clone_args(inputs)
            for k, r in enumerate(roles):
                if r == "out" and isinstance(args[k], torch.Tensor):
                    _poison(args[k])
            torch.cuda.synchronize()
            try:
                with torch.no_grad():
                    kern.run(*args, stream=stream)
                torch.cuda.synchronize()
            except Exception as e:
                what = "the original kernel" if side == "orig" else "the candidate"
                raise wrap("module_failed", "%s raised on input set %s" % (what, name), e)
            runs[side] = [write_tensor(args[k], os.path.join(out_dir, "%s.%s.arg%d.bin" % (name, side, k)))
                          for k in checked]
        sets.append({"name": name, "runs": runs})
    return {"sets": sets, "checked": checked}


def compile_threads():
    """Threads compiling launcher-form candidates at once: KOPT_COMPILE_THREADS, else the
    host's cores (at most 8)."""
    try:
        n = int(os.environ.get("KOPT_COMPILE_THREADS", "0"))
    except ValueError:
        n = 0
    return n if n > 0 else max(1, min(8, os.cpu_count() or 1))


def _precompile(kerns, status, base):
    """Compiles the launcher-form kernels of kerns[1:] for the captured arguments, several at
    once on the host's cores, launching nothing (_WarmupOnly); ptxas runs in a process of its
    own, so the compiles overlap at least there (the measured effect: docs/BENCHMARKS.md). A
    candidate that fails is dropped (kerns[k] = None, status[k] = why). Inductor-style
    candidates compiled when their module was imported. Returns the threads used."""
    from concurrent.futures import ThreadPoolExecutor
    todo = [k for k in range(1, len(kerns)) if kerns[k] is not None and getattr(kerns[k], "launch", None)]
    nthreads = min(compile_threads(), len(todo))
    if nthreads <= 1:
        return 1   # the sequential warm-up compiles them

    def one(k):
        try:
            with torch.no_grad():
                kerns[k].launch(*clone_args(base))
            return k, None
        except Exception as e:  # noqa: BLE001 - a candidate's failure is its verdict
            return k, _short(e)

    with _WarmupOnly(), ThreadPoolExecutor(max_workers=nthreads) as pool:
        for k, err in pool.map(one, todo):
            if err is not None:
                kerns[k] = None
                status[k] = err
    torch.cuda.synchronize()
    return nthreads


def op_bench_kernels(ctx, req):
    """bench_kernels {orig, kernel, cands: [module...], launch_args, rounds=10, warmup=2}
    Kernel-level pre-screen of many candidates for one kernel: the original kernel (from the
    module `orig`) and each candidate module's kernel of the same name run on clones of the
    captured launch arguments, each run timed with CUDA events after an L2 flush and a stall,
    all variants interleaved per round. A candidate that fails to import, compile or run gets
    {"error": "..."} instead of samples (it is simply dropped by the core). Result:
    {"orig": [ms...], "cands": [[ms...] | {"error": ...}], "sleep_ms": float,
     "compile_s": wall seconds of imports, compiles and warm-up, "compile_threads": n}."""
    from kopt.timing import flush_buffer, stall, MIN_STALL_MS
    opath = get_arg(req, "orig", str)
    kernel = get_arg(req, "kernel", str)
    cands = get_arg(req, "cands", list)
    lpath = get_arg(req, "launch_args", str)
    rounds = get_arg(req, "rounds", int, 10)
    warmup = get_arg(req, "warmup", int, 2)
    base = _load_args(lpath)
    stream = torch.cuda.current_stream().cuda_stream
    t_compile = time.perf_counter()   # imports compile Inductor-style candidates
    kerns = [getattr(cache(ctx).module(opath), kernel)]
    status = [None]
    for path in cands:
        try:
            kerns.append(getattr(cache(ctx).module(path), kernel))
            status.append(None)
        except Exception as e:
            kerns.append(None)
            status.append(_short(e))
    # Compile: the original first (one-time initialisations happen there), then the
    # launcher-form candidates several at once; the warm-up that follows compiles whatever is
    # left and launches each kernel; failures drop the candidate.
    with torch.no_grad():
        try:
            for _ in range(max(1, warmup)):
                kerns[0].run(*clone_args(base), stream=stream)
            torch.cuda.synchronize()
        except Exception as e:
            raise wrap("module_failed", "the original kernel raised", e)
    nthreads = _precompile(kerns, status, base)
    with torch.no_grad():
        for k, kern in enumerate(kerns):
            if k == 0 or kern is None:   # the original was warmed up above
                continue
            try:
                for _ in range(max(1, warmup)):
                    kern.run(*clone_args(base), stream=stream)
                torch.cuda.synchronize()
            except Exception as e:
                kerns[k] = None
                status[k] = _short(e)
                torch.cuda.synchronize()
        compile_s = time.perf_counter() - t_compile
        buf = flush_buffer(ctx)
        samples = [[] for _ in kerns]
        live = [k for k, kern in enumerate(kerns) if kern is not None]
        for r in range(rounds):
            order = live[r % len(live):] + live[:r % len(live)]
            events = []
            for k in order:
                args = clone_args(base)
                buf.zero_()
                stall(ctx, MIN_STALL_MS)
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                kerns[k].run(*args, stream=stream)
                e.record()
                events.append((k, s, e, args))
            torch.cuda.synchronize()
            for k, s, e, _ in events:
                samples[k].append(s.elapsed_time(e))
    out = []
    for k in range(1, len(kerns)):
        out.append({"error": status[k]} if kerns[k] is None else samples[k])
    return {"orig": samples[0], "cands": out, "sleep_ms": MIN_STALL_MS, "compile_s": compile_s,
            "compile_threads": nthreads}
