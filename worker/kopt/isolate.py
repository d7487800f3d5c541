"""Gate 1's compile step, gate 2's isolation harness and the kernel-level screen
(docs/CANDIDATES.md, PROTOCOL.md). The worker runs kernels and reduces their outputs to
comparison statistics; every verdict is the core's.

Launch arguments. The ops below take `launch_args`, a *launch spec*
    {"module": instrumented module, "args": args file, "launch": i, "roles": [...]}
naming launch i of an instrumented output module (each launch wrapped in
`_kopt_prof.pre(i, lambda: (...))`); the worker captures that launch's arguments the first time
it needs them (call() runs on the problem's own tensors and stops right before launch i) and
keeps them in memory (LaunchCache, the most recent two launches): nothing is written to disk,
and a restarted worker simply captures again. What is kept of each argument:
  * a tensor that is one of call()'s own arguments (a forward input, a weight) or a view of
    one: the very tensor, not a copy (it is only read: kernels with in-place arguments get
    private copies of those, see `materialize`);
  * an argument whose role is "out" and whose storage no other argument shares: its layout only
    (the kernel writes it; each run gets fresh memory);
  * any other tensor of the problem's or the module's (a constant of the module, an in-place
    argument on a weight): an exact clone;
  * an intermediate computed earlier in call(): the very tensor. call() is stopped right before
    the launch, so nothing else holds or writes it: it is private to the capture already, and a
    copy would only double the memory of the largest intermediates;
  * ints and other values: as they are.
`materialize(entry)` makes the argument list of one run: "out" tensors freshly allocated and
poisoned (NaN; integers: the dtype's minimum; bool: True; in gate 2's input sets, kopt.poison's
kinds in turn, the same bytes for the candidate's runs and the original's of a set), "inout"
ones cloned, "in" ones shared. So a run costs the kernel's outputs and in-place arguments, never a second copy of its
inputs.

capture_launch {module, args, launch, roles?, out?}
    Captures (into the cache) and describes the launch's arguments: {"args": [descriptions]}
    (profile's argument descriptions, tensors with their "device" type too).
    With `out`, the captured arguments are also saved with torch.save (--keep-work).

compile_candidate {module, kernel, launch_args}
    Imports the re-stitched module (Inductor-style kernels compile at import) and compiles the
    kernel `kernel` for the launch's arguments without running anything: a launcher-form
    candidate (`NAME = _KoptLaunch(launch)`) is called with every `jit_fn[grid](...)` turned into
    a warm-up (compile only). Result {"compiled": true} or {"compiled": false, "error": "..."}:
    a candidate that does not compile is an answer, not a worker failure.

isolate {orig, cand, kernel, launch_args, roles, seeds, tol, repeat=2, low_memory=false}
    Input sets: the captured arguments, then one per seed with every floating input (roles
    "in"/"inout") redrawn from a standard normal distribution over its whole storage (integer
    inputs keep their captured values: they may be indices). Per set every run of the candidate
    (`repeat` in all) comes first (while they run, no reference of the set exists for their
    kernels to read or copy), then the original kernel runs once and its checked arguments (roles
    "out"/"inout") are kept (on the GPU, or in host memory when the GPU is short, the memory cap
    says so (kopt.memory) or low_memory does; where a candidate run's outputs would not fit
    beside the next run's, or the original's, under the cap, they wait in pageable host memory
    and are compared from there); under the cap the seed sets are also redrawn into the
    capture's private clones (the capture is then forgotten, and captured again when next
    needed), and where a set does not fit beside the loaded inputs and reads none of them, they
    are displaced while the seed sets run (kopt.problem; refilled after); a later run whose
    checked outputs are bit for bit the first run's is freed at once and takes the first run's
    statistics; each run of the candidate is compared with the original's (kopt.compare.
    compare_stats with the tolerance `tol` gives for the reference's dtype: {"float32": [atol,
    rtol], ...}; dtypes it does not name are compared exactly) and freed; the reference's device
    memory is poisoned before it goes back to the allocator (a later set's candidate must not be
    handed this set's results). The candidate's read-only inputs are checksummed before and
    after each of its runs (a seed set's drawn inputs between fences inside their storages:
    _redraw), its outputs kept by their layout are fenced (_Fence: random bytes before and after
    each, checked after each run, outside_writes) and so are its plan's scratch buffers
    (_ScratchFences, scratch_outside_writes); the original's kept outputs are summed when kept
    and after the comparisons (reference_changed: nothing may have written them). Result:
    {"sets": [{"name": "captured"|"seed<s>", "args": [{"arg": k, "runs": [stats per candidate
    run]}], "inputs_changed": [arg index...], "outside_writes": [arg index...],
    "scratch_outside_writes": bool, "reference_changed": bool}], "checked": [arg index...]}.

bench_kernels {orig, kernel, cands: [module...], launch_args, rounds=10, warmup=2}
    The screen: the original kernel and each candidate module's kernel on the launch's
    arguments (materialize per run), each timed with CUDA events after an L2 flush and a short
    stall, all variants interleaved per round (see op_bench_kernels).
"""

import collections
import math
import os
import threading
import time

import torch

from kopt import cubin
from kopt.compare import CHUNK, _words, checksum, checksums, compare_stats, count_nonfinite
from kopt.errors import BadRequest, OpError, wrap
from kopt.kept import content_sum
from kopt.memory import compare_chunk, free_bytes, nbytes, over_cap
from kopt.modules import cache
from kopt.poison import fill, kind_at, new_seed
from kopt.profile import _as_tuple, is_autotuner
from kopt.protocol import get_arg
from kopt.room import make_room
from kopt.tensors import clone_tensor, launch_arg, storage

MAX_LAUNCHES = 2


class _Layout:
    """An "out" argument kept by its layout only (see the module docstring)."""

    device = "cuda"

    def __init__(self, t):
        self.dtype = t.dtype
        self.size = tuple(t.size())
        self.stride = tuple(t.stride())
        self.offset = t.storage_offset()
        self.nbytes = storage(t).nbytes()

    def new(self, fence_seed=None):
        """A fresh tensor of this layout; with fence_seed, placed inside a _Fence's buffer, which
        is returned too ((tensor, fence); else the tensor alone)."""
        if fence_seed is not None:
            fence = _Fence(self.nbytes, self.device, fence_seed)
            return fence.view(self.dtype, self.offset, self.size, self.stride), fence
        raw = torch.empty(self.nbytes, dtype=torch.uint8, device=self.device)
        t = torch.empty(0, dtype=self.dtype, device=self.device)
        t.set_(storage(raw), self.offset, self.size, self.stride)
        return t


FENCE_MIN = 4096        # bytes of each fence around a fenced output: about the output's own size,
FENCE_MAX = 1 << 20     # 4 KiB to 1 MiB, a multiple of 512 (the output keeps the allocator's alignment)


def fence_bytes(nbytes):
    """Bytes of each of the two fences around an output storage of `nbytes`."""
    return min(FENCE_MAX, max(FENCE_MIN, (nbytes + 511) // 512 * 512))


class _Fence:
    """Gate 2's fences: an output's storage allocated with fence_bytes() of random bytes before
    and after it, drawn from a generator seeded with `seed` (a host-side secret). An honest kernel
    never writes outside its arguments; one that does (a mask that lets a block write past the
    end, results or a call counter stashed in the slack the caching allocator leaves past a
    storage) changes them. broken() redraws the bytes from the seed after the run -- no copy
    lies in device memory for a kernel to find and match -- and compares."""

    def __init__(self, nbytes, device, seed):
        self.r, self.nbytes, self.seed = fence_bytes(nbytes), nbytes, seed
        self.raw = torch.empty(2 * self.r + nbytes, dtype=torch.uint8, device=device)
        for side, part in enumerate(self._parts()):
            part.copy_(self._pattern(side))

    def view(self, dtype, offset, size, stride):
        """A tensor on the fenced bytes: `offset` elements of `dtype` past the first fence, with
        that size and stride (fence_bytes() is a multiple of every element size)."""
        t = torch.empty(0, dtype=dtype, device=self.raw.device)
        t.set_(storage(self.raw), self.r // t.element_size() + offset, size, stride)
        return t

    def _parts(self):
        return self.raw[:self.r], self.raw[self.r + self.nbytes:]

    def _pattern(self, side):
        g = torch.Generator(device=self.raw.device)
        g.manual_seed((self.seed * 2 + side) % (1 << 63))
        return torch.empty(self.r, dtype=torch.uint8, device=self.raw.device).random_(0, 256, generator=g)

    def broken(self):
        """Whether a byte of either fence changed since it was drawn."""
        return not all(torch.equal(part, self._pattern(side)) for side, part in enumerate(self._parts()))


class _Captured(Exception):
    """Raised from the probe to stop call() right after the target launch's arguments were taken."""


class _CaptureProf:
    """Stands in for `_kopt_prof` in an instrumented module: takes launch `target`'s args."""

    def __init__(self, target, call_args, roles, module=None):
        self.target = target
        self.roles = roles
        self.own = {}           # storages that are not call()'s intermediates: its arguments, the module's tensors
        for a in list(call_args) + _module_tensors(module):
            if isinstance(a, torch.Tensor):
                self.own[storage(a).data_ptr()] = True
        self.entry = None
        self.desc = None
        self.cloned = set()     # indices of the arguments private to the capture (clones, intermediates)

    def pre(self, i, thunk=None):
        if i != self.target or thunk is None:
            return
        args = list(_as_tuple(thunk()))
        torch.cuda.synchronize()
        self.desc = [_capture_desc(a) for a in args]
        ptrs = collections.Counter(storage(a).data_ptr() for a in args if isinstance(a, torch.Tensor))
        entry, memo = [], {}
        for k, a in enumerate(args):
            role = self.roles[k] if self.roles and k < len(self.roles) else None
            if not isinstance(a, torch.Tensor):
                entry.append(a)
                continue
            ptr = storage(a).data_ptr()
            if role == "in" and ptr in self.own:
                entry.append(a)                      # the problem's own tensor, read only
            elif role == "out" and ptrs[ptr] == 1:
                entry.append(_Layout(a))            # written by the kernel: layout only
            elif ptr in self.own:
                entry.append(clone_tensor(a, memo))  # the problem's or the module's: a copy
                self.cloned.add(k)
            else:
                entry.append(a)                      # call()'s intermediate, private once call() stops
                self.cloned.add(k)
        self.entry = entry
        raise _Captured()

    def post(self, i, thunk=None):
        pass


def _module_tensors(module):
    """The tensors among a module's globals (constants Inductor or kopt set on it)."""
    if module is None:
        return []
    return [v for v in vars(module).values() if isinstance(v, torch.Tensor)]


class LaunchCache:
    def __init__(self):
        self.entries = collections.OrderedDict()   # key -> (entry list, descriptions, cloned indices)

    def get(self, ctx, spec):
        """(entry, descriptions) of the launch `spec`, captured now unless cached."""
        _, entry, desc, _ = self.get_full(ctx, spec)
        return entry, desc

    def forget(self, key):
        """Drop one captured launch (its private clones were written: isolate's in-place redraw)."""
        self.entries.pop(key, None)

    def forget_all(self, keep=None):
        """Drop every captured launch but `keep`; returns how many were dropped."""
        n = 0
        for key in list(self.entries):
            if key != keep:
                del self.entries[key]
                n += 1
        return n

    def get_full(self, ctx, spec):
        """(key, entry, descriptions, indices of the privately cloned arguments)."""
        if not isinstance(spec, dict):
            raise BadRequest("launch_args must be a launch spec {module, args, launch, roles}")
        mpath = spec.get("module")
        apath = spec.get("args")
        launch = spec.get("launch")
        roles = spec.get("roles")
        if not isinstance(mpath, str) or not isinstance(apath, str) or not isinstance(launch, int):
            raise BadRequest("launch spec needs string 'module' and 'args' and an integer 'launch'")
        if roles is not None and not (isinstance(roles, list) and all(isinstance(r, str) for r in roles)):
            raise BadRequest("launch spec 'roles' must be an array of strings")
        key = (os.path.abspath(mpath), os.path.abspath(apath), launch, tuple(roles or ()))
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return (key,) + hit
        while len(self.entries) >= MAX_LAUNCHES:
            self.entries.popitem(last=False)
        # the capture runs call() up to the launch (at most a whole run's intermediates) and
        # clones what the launch reads (at most as much again): under the memory cap, the other
        # captures go first
        make_room(ctx, 2 * ctx.run_need)
        mc = cache(ctx)
        mod, args = mc.prepared(mpath, apath, ctx.problem)
        prof = _CaptureProf(launch, args, roles, mod)
        mod._kopt_prof = prof
        with torch.no_grad():
            try:
                res = mc.call_module(ctx, mpath, mod, args, mc.shared(apath))
                del res
            except _Captured:
                pass
            except (Exception, SystemExit) as e:
                raise wrap("module_failed", "call() of %s raised" % mpath, e)
            finally:
                mod._kopt_prof = None
            torch.cuda.synchronize()
        if prof.entry is None:
            raise BadRequest("launch %d did not run in call() of %s" % (launch, mpath))
        hit = (prof.entry, prof.desc, frozenset(prof.cloned))
        self.entries[key] = hit
        return (key,) + hit


def launches(ctx):
    if ctx.launches is None:
        ctx.launches = LaunchCache()
    return ctx.launches


def _poison_all(items):
    """Poisons every device tensor of `items` (a function of its own: a loop variable in
    op_isolate kept the last one, a set's whole reference, alive through every later set --
    found by tests/worker/test_isolate_cpu.py's count of live buffers)."""
    for t in items:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            fill(t, "nan")


class _ScratchFences:
    """While a candidate runs in gate 2 (a `with` block): torch.full and torch.zeros -- what the
    launcher kopt writes from a plan allocates its scratch buffers with (src/gates/plan.c) --
    give buffers between _Fence's fences (seeded seed, seed + 1, ... in the order of allocation,
    so a set's runs draw the same bytes), kept in `fences`. Calls with any other argument (out=,
    layout=, ...) go to torch's own functions. Only the launcher and the kernels run inside."""

    def __init__(self, seed):
        self.seed, self.fences, self.saved = seed, [], None

    def __enter__(self):
        self.saved = torch.full, torch.zeros
        torch.full, torch.zeros = self._full, self._zeros
        return self

    def __exit__(self, *exc):
        torch.full, torch.zeros = self.saved
        return False

    def _alloc(self, size, dtype, device):
        shape = tuple(int(d) for d in (size if isinstance(size, (tuple, list)) else (size,)))
        n = math.prod(shape)
        fence = _Fence(n * torch.empty(0, dtype=dtype).element_size(), device, self.seed + len(self.fences))
        self.fences.append(fence)
        return fence.view(dtype, 0, (n,), (1,)).view(shape)

    def _full(self, size, fill_value, *, dtype=None, device=None, **kw):
        if kw or dtype is None or device is None:
            return self.saved[0](size, fill_value, dtype=dtype, device=device, **kw)
        return self._alloc(size, dtype, device).fill_(fill_value)

    def _zeros(self, *size, dtype=None, device=None, **kw):
        if kw or dtype is None or device is None or len(size) != 1:
            return self.saved[1](*size, dtype=dtype, device=device, **kw)
        return self._alloc(size[0], dtype, device).zero_()

    def broken(self):
        """How many of the scratch buffers' fences changed."""
        return sum(1 for f in self.fences if f.broken())


def materialize(entry, roles=None, poison=True, fences=None):
    """The argument list of one run (see the module docstring). poison: True (NaN), False, or
    (kind, seed): kopt.poison.fill's, the same bytes in every run given the same pair. fences:
    None, or (seed, list): each output kept by its layout is fenced (_Fence, seeded seed + its
    index: the same bytes in every run given the same seed), (index, fence) appended to list."""
    out, memo = [], {}
    for k, a in enumerate(entry):
        role = roles[k] if roles and k < len(roles) else None
        if isinstance(a, _Layout):
            if fences is None:
                t = a.new()
            else:
                t, fence = a.new(fences[0] + k)
                fences[1].append((k, fence))
            _poison_as(t, poison, k)
            out.append(t)
        elif isinstance(a, torch.Tensor) and role in ("inout", "out"):
            t = clone_tensor(a, memo)
            if role == "out":
                _poison_as(t, poison, k)
            out.append(t)
        else:
            out.append(a)
    return out


def _poison_as(t, poison, k):
    """materialize's poison of argument k."""
    if poison is True:
        fill(t, "nan")
    elif poison:
        kind, seed = poison
        fill(t, kind, seed + k)


def _autotuner(kern):
    """The Inductor kernel (CachingAutotuner) behind kern: kern itself, or the candidate behind
    kopt's guard; None for anything else (a launcher-form candidate, a plain JIT function)."""
    scope = getattr(kern, "_kopt_scope", None)
    if isinstance(scope, dict):
        kern = scope.get(getattr(kern, "_kopt_cand", None), kern)
    if is_autotuner(kern):
        return kern
    return None


def settle(kern, entry, roles, stream):
    """Autotunes an Inductor kernel with several configurations once, on throwaway arguments,
    before any run whose result counts. Inductor's autotuner benchmarks each configuration on a
    clone of every argument the kernel writes in place, so the first run of a new module's
    in-place kernel needs one more copy of its largest buffer (the likeliest cause of level3/02's
    peak, docs/BENCHMARKS.md: a 1 GB in-place softmax buffer; not yet measured on the GPU with
    this change). The arguments here are
    a private materialize() that is thrown away, so the clone protects nothing: it is skipped
    (the kernel's mutated_arg_names are emptied for this one run and put back). Returns the
    bytes of clones avoided (0 when nothing was tuned)."""
    try:   # anything unexpected in the kernel's attributes: no tuning here, the first run does it
        k = _autotuner(kern)
        if k is None or not k.mutated_arg_names:
            return 0
        n = len(k.launchers) if getattr(k, "launchers", None) else len(getattr(k, "configs", ()) or ())
        names = [str(x) for x in getattr(k.fn, "arg_names", ())]
    except Exception:  # noqa: BLE001 - Inductor's internals differ between releases
        return 0
    if n <= 1 or not names:
        return 0
    args = materialize(entry, roles, poison=False)
    saved = k.mutated_arg_names
    avoided = sum(storage(a).nbytes() for name, a in zip(names, args)
                  if name in saved and isinstance(a, torch.Tensor))
    k.mutated_arg_names = []
    try:
        with torch.no_grad():
            kern.run(*args, stream=stream)
        torch.cuda.synchronize()
    finally:
        k.mutated_arg_names = saved
    del args
    return avoided


def _capture_desc(a):
    """launch_arg's description plus a tensor's device type and whether its data pointer is
    16-byte aligned (what Triton specialises a compiled kernel on): the signature the core guards
    the shipped module's launch on (src/verify/guard.h)."""
    d = launch_arg(a)
    if isinstance(a, torch.Tensor):
        d["device"] = a.device.type
        d["aligned16"] = a.data_ptr() % 16 == 0
    return d


def op_capture_launch(ctx, req):
    spec = {"module": get_arg(req, "module", str), "args": get_arg(req, "args", str),
            "launch": get_arg(req, "launch", int), "roles": req.get("roles")}
    entry, desc = launches(ctx).get(ctx, spec)
    out = get_arg(req, "out", str, None)
    if out is not None:
        torch.save([materialize([a])[0] for a in entry], out)
    return {"args": desc}


class _WarmupOnly:
    """While active, `jit_fn[grid](...)` compiles the kernel for those arguments and launches
    nothing (triton's JITFunction.run with warmup=True); a kernel the judged module loads from
    gate 1's cubin (kopt.cubin.CubinFunction) checks the call's specialisation and loads its cubin,
    and launches nothing either. recording() starts a list, for the calling thread, of the
    compiled kernels (Triton's CompiledKernel) that its later warm-ups return."""

    def __init__(self):
        self.tl = threading.local()

    def recording(self):
        self.tl.compiled = []
        return self.tl.compiled

    def __enter__(self):
        from triton.runtime.jit import JITFunction
        self.cls = JITFunction
        self.saved = JITFunction.__getitem__
        tl = self.tl

        def getitem(fn, grid):
            def warm(*a, **k):
                compiled = fn.run(*a, grid=grid, warmup=True, **k)
                rec = getattr(tl, "compiled", None)
                if rec is not None and compiled is not None:
                    rec.append(compiled)
                return compiled
            return warm

        JITFunction.__getitem__ = getitem
        self.dry = cubin.dry_run()
        self.dry.__enter__()
        return self

    def __exit__(self, *exc):
        self.cls.__getitem__ = self.saved
        self.dry.__exit__(*exc)
        return False


# The screen does not launch a candidate whose kernels need more local memory than this a
# thread: the driver reserves a launched kernel's local memory for every thread the GPU can hold
# and keeps the reservation until the worker gives it back after the op (kopt.memory), so one
# heavily spilling configuration sets the op's peak (on the H200, held-out h06's sweep: a
# configuration with 10,176 bytes a thread, 2.47 GB). Kernels that spill that much are not the
# fast ones of a memory-bound search.
SCREEN_LOCAL_BYTES = 2048


def local_bytes(compiled):
    """The largest per-thread local memory, in bytes, of compiled Triton kernels (their modules
    loaded, nothing launched: Triton keeps the driver's CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4 as
    n_spills); None when no kernel says."""
    worst = None
    for ck in compiled:
        if not callable(getattr(ck, "_init_handles", None)):
            continue
        try:
            ck._init_handles()
            n = int(ck.n_spills)
        except Exception:  # noqa: BLE001 - unknown: the launch will tell
            continue
        worst = max(worst or 0, 4 * n)
    return worst


def over_local_limit(compiled, limit=None):
    """A refusal reason when the kernels need more local memory a thread than `limit`
    (SCREEN_LOCAL_BYTES), else None."""
    limit = SCREEN_LOCAL_BYTES if limit is None else limit
    lb = local_bytes(compiled)
    if lb is None or lb <= limit:
        return None
    return "needs %d bytes of local memory a thread (spills; more than %d): not launched" % (lb, limit)


def op_compile_candidate(ctx, req):
    mpath = get_arg(req, "module", str)
    kernel = get_arg(req, "kernel", str)
    spec = get_arg(req, "launch_args", dict)
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
    entry, _ = launches(ctx).get(ctx, spec)
    args = materialize(entry, spec.get("roles"), poison=False)
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


def _storages(entry):
    """[(data_ptr, nbytes) of each tensor argument's storage, or None]: taken before the loaded
    inputs are displaced (an emptied storage has neither)."""
    return [(storage(a).data_ptr(), storage(a).nbytes()) if isinstance(a, torch.Tensor) else None
            for a in entry]


def _redraw(entry, roles, seed, in_place=(), layout=None):
    """The launch's arguments with every floating "in"/"inout" tensor replaced by a fresh one of
    the same layout whose whole storage is drawn from N(0, 1) under `seed`. Arguments whose
    index is in `in_place` (private clones of the capture, under the memory cap) are redrawn in
    their own storage instead of a new one: the same values, no second copy (the capture is
    then spent: the caller forgets it). `layout` (_storages(entry), taken earlier) stands in for
    the storages of displaced loaded inputs. A new storage sits between a _Fence's fences of
    fresh random bytes, inside the storage the read-only checksums cover: a candidate that writes
    just outside a read-only input changes its checksum (inputs_changed). (Random, not merely
    left as allocated: recycled memory may already hold what a kernel writes there, its own
    write of an earlier set.)"""
    g = None
    out, memo = [], {}
    layout = layout or _storages(entry)
    for k, (a, r) in enumerate(zip(entry, roles)):
        if r in ("in", "inout") and isinstance(a, torch.Tensor) and a.is_floating_point():
            key, total = layout[k]
            st = memo.get(key)
            if st is None:
                if g is None:   # one generator, on the arguments' device (the GPU in the worker)
                    g = torch.Generator(device=a.device)
                    g.manual_seed(seed)
                n = total // a.element_size()
                if k in in_place:
                    flat = torch.empty(0, dtype=a.dtype, device=a.device)
                    flat.set_(storage(a), 0, (n,), (1,))
                    skip = 0
                else:   # between fences: see the docstring
                    fence = _Fence(total, a.device, new_seed())
                    flat = fence.view(a.dtype, 0, (n,), (1,))
                    skip = flat.storage_offset()
                flat.normal_(generator=g)
                st = memo[key] = (storage(flat), skip)
            t = torch.empty(0, dtype=a.dtype, device=a.device)
            t.set_(st[0], a.storage_offset() + st[1], a.size(), a.stride())
            out.append(t)
        else:
            out.append(a)
    return out


def _displaceable(problem, entry, roles):
    """Whether the seed sets of a launch may run with the loaded inputs displaced
    (kopt.problem): every argument on a loaded input's storage is a floating "in"/"inout"
    tensor, which each seed set redraws, so no run of the set reads a displaced storage."""
    if problem is None:
        return False
    loaded = {storage(t).data_ptr() for t in problem.inputs if isinstance(t, torch.Tensor)}
    return all(not (isinstance(a, torch.Tensor) and storage(a).data_ptr() in loaded)
               or (r in ("in", "inout") and a.is_floating_point()) for a, r in zip(entry, roles))


def _has_nan(t):
    """Whether t is floating and holds a NaN (op_isolate asks it of the original's outputs right
    after its run, where they are: on the device)."""
    return t.is_floating_point() and count_nonfinite(t, nan_only=True) > 0


def _compare_run(ctx, ref, args, checked, tol):
    """Statistics of each checked argument of a run (args[k], k in checked) against ref[j]. The
    comparison chunk is chosen here, with the run's arguments live: chosen before them, it took
    the room they then needed (level3/02's isolate held 3.0 GB for a 1.2 GB working set)."""
    chunk = compare_chunk(ctx, CHUNK)
    out = []
    for j, k in enumerate(checked):
        atol, rtol = _tol(tol, ref[j].dtype)
        out.append(compare_stats(ref[j], args[k], atol, rtol, chunk))
    return out


def _tol(table, dtype):
    pair = table.get(str(dtype).replace("torch.", "")) if isinstance(table, dict) else None
    if isinstance(pair, list) and len(pair) == 2:
        return float(pair[0]), float(pair[1])
    return 0.0, 0.0


def _last_kept(runs):
    """Index of the last run kept whole (not None), or None."""
    for i in range(len(runs) - 1, -1, -1):
        if runs[i] is not None:
            return i
    return None


def _on_device(args, checked):
    """Whether every checked argument of a run is a device tensor (not staged to the host)."""
    return all(isinstance(args[k], torch.Tensor) and args[k].device.type != "cpu" for k in checked)


SAME_BITS_CHUNK = 1 << 24   # words compared at once (16 MiB of booleans)


def same_bits(a, b, checked):
    """Whether the checked arguments of two runs hold the same bytes in their whole storages
    (NaN payloads included), compared a chunk at a time on their device (as the storages'
    words, kopt.compare's view for its checksum)."""
    for k in checked:
        x, y = a[k], b[k]
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.device != y.device:
            return False
        if storage(x).nbytes() != storage(y).nbytes():
            return False
        if storage(x).data_ptr() == storage(y).data_ptr():
            continue
        wx, wy = _words(x), _words(y)
        for i in range(0, wx.numel(), SAME_BITS_CHUNK):
            if not torch.equal(wx[i:i + SAME_BITS_CHUNK], wy[i:i + SAME_BITS_CHUNK]):
                return False
    return True


def _stage_runs(ctx, runs, checked, what):
    """Moves the checked outputs of every run in `runs` still on the device to pageable host
    memory, in place. A function of its own so that no loop variable of the caller keeps a
    run's device outputs alive afterwards (one did: held-out h02's gate 2 held 0.4 GB more
    through the original's run, 8934f68 on the H200)."""
    for i in range(len(runs)):
        if runs[i] is not None and _on_device(runs[i], checked):
            runs[i] = _to_host(ctx, runs[i], frozenset(checked), "%s: run %d" % (what, i + 1))


def _to_host(ctx, args, which, what):
    """`args` with its tensors at the indices in `which` copied to pageable host memory (which no
    kernel can address); the caller drops the device copies."""
    ctx.log("%s: the candidate's outputs (%d MiB) staged to host memory"
            % (what, nbytes([args[k] for k in which]) >> 20))
    return [t.to("cpu") if k in which and isinstance(t, torch.Tensor) else t for k, t in enumerate(args)]


def _launch(kern, args, stream, what):
    """One launch on `args`, the device synchronised before and after; its failure is the
    module_failed OpError `what`."""
    torch.cuda.synchronize()
    try:
        with torch.no_grad():
            kern.run(*args, stream=stream)
        torch.cuda.synchronize()
    except Exception as e:
        raise wrap("module_failed", what, e)


def op_isolate(ctx, req):
    opath = get_arg(req, "orig", str)
    cpath = get_arg(req, "cand", str)
    kernel = get_arg(req, "kernel", str)
    spec = get_arg(req, "launch_args", dict)
    roles = get_arg(req, "roles", list)
    seeds = get_arg(req, "seeds", list)
    tol = get_arg(req, "tol", dict, {})
    repeat = get_arg(req, "repeat", int, 2)
    low_memory = get_arg(req, "low_memory", bool, False)
    cache_ = launches(ctx)
    key, entry, _, cloned = cache_.get_full(ctx, dict(spec, roles=roles))
    if len(roles) != len(entry):
        raise BadRequest("roles has %d entries, the launch has %d arguments" % (len(roles), len(entry)))
    orig = getattr(cache(ctx).module(opath), kernel)
    cand = getattr(cache(ctx).module(cpath), kernel)
    # Under the memory cap (kopt.memory): a run needs its outputs and in-place copies (out_b),
    # a seed set also its redrawn inputs (draw_b); make room for a set of two runs, then redraw
    # the capture's private clones in place and keep the references on the host where even that
    # does not fit. All of it only changes where data sits, never what is compared.
    out_b = _run_bytes(entry, roles)
    draw_b = _draw_bytes(entry, roles)
    make_room(ctx, draw_b + 2 * out_b, keep_launch=key)
    in_place = frozenset(k for k in cloned if roles[k] in ("in", "inout")) \
        if seeds and over_cap(ctx, draw_b + 2 * out_b) else frozenset()
    # a guarded candidate (kopt's _KoptGuard) runs Inductor's kernel on a launch outside its
    # verified signature; here, on the very launch it was captured from, it must never do so,
    # else gate 2 would compare Inductor's kernel with itself
    fallbacks0 = getattr(cand, "_kopt_fallbacks", None)
    checked = [k for k, r in enumerate(roles) if r in ("out", "inout") and isinstance(entry[k], (torch.Tensor, _Layout))]
    read_only = [k for k, r in enumerate(roles) if r == "in" and isinstance(entry[k], torch.Tensor)]
    checked_set = frozenset(checked)
    stream = torch.cuda.current_stream().cuda_stream
    # first runs of multi-config Inductor kernels autotune: on throwaway arguments, here
    try:
        settle(orig, entry, roles, stream)
    except Exception as e:
        raise wrap("module_failed", "the original kernel raised", e)
    try:
        settle(cand, entry, roles, stream)
    except Exception as e:
        if isinstance(e, OpError):
            raise
        raise wrap("module_failed", "the candidate raised while its configurations were tuned", e)

    def cand_run(inputs, name, changed, poison, fence_seed, outside):
        """One run of the candidate on fresh arguments, its outputs poisoned as `poison` says
        and fenced, and its plan's scratch buffers fenced (materialize, _ScratchFences;
        read-only inputs checksummed around it, into `changed`; outputs whose fences it wrote,
        into `outside`); its argument list, and whether it wrote a scratch buffer's fence."""
        fences = (fence_seed, [])
        args = materialize(inputs, roles, poison, fences)
        before = [checksum(args[k]) for k in read_only]
        with _ScratchFences(fence_seed + len(args)) as scratch:
            _launch(cand, args, stream, "the candidate raised on input set %s" % name)
        if fallbacks0 is not None and cand._kopt_fallbacks != fallbacks0:
            raise OpError("guard_mismatch", "kopt's guard for %s did not match the launch the gates "
                          "captured (input set %s), so the candidate never ran: a kopt fault, not "
                          "the candidate's" % (kernel, name))
        after = [checksum(args[k]) for k in read_only]
        changed.update(k for k, b, a in zip(read_only, before, after) if b != a)
        outside.update(k for k, f in fences[1] if f.broken())
        return args, scratch.broken() > 0

    sets = []
    layout = _storages(entry)
    problem = ctx.problem
    random_ok = False
    for si, (name, seed) in enumerate([("captured", None)] + [("seed%d" % s, int(s)) for s in seeds]):
        # the set's poison (kopt.poison): NaN for the captured set; after it, the kinds in turn,
        # the same bytes for the candidate's runs and the original's -- only where the original
        # wrote every element of its floating outputs there (no NaN left): an element it leaves
        # to another kernel would hold the random poison in the reference, whose magnitude the
        # comparison's scale (ref_abs_max, the norms) would then take in
        pz = (kind_at(si), new_seed()) if random_ok else True
        if seed is not None and problem is not None and not problem.displaced and over_cap(ctx, draw_b + 2 * out_b) \
                and not over_cap(ctx, draw_b + 2 * out_b - nbytes(problem.inputs)) \
                and _displaceable(problem, entry, roles):
            # the seed sets never read the loaded inputs: where a set then fits under the cap
            # (no run staged to the host), they wait in host memory; where it would not fit
            # either way, displacing them saves little and costs their refill
            freed = problem.displace()
            if freed:
                ctx.log("isolate %s: the loaded inputs (%d MiB) displaced to host memory for the seed sets"
                        % (kernel, freed >> 20))
        # what the last set freed (its runs, its reference, the displaced inputs) goes back to the
        # driver before this set allocates: cached, it stayed reserved beside the new set's
        # blocks of other sizes (heldout/h02: 1.89 GB reserved for 0.96 GB live)
        torch.cuda.empty_cache()
        inputs = entry if seed is None else _redraw(entry, roles, seed, in_place, layout)
        changed, outside, scratch_written = set(), set(), False
        fence_seed = new_seed()   # the set's fences: the same bytes in each of its runs (same_bits)

        # every run of the candidate comes before the original's: while they run, the reference
        # of this input set does not exist, so no kernel of theirs can read or copy it (their
        # arguments stay alive until the reference exists and they are compared). Where a run's
        # outputs would not fit beside the next run's under the cap, the earlier run's checked
        # outputs wait in pageable host memory, out of a kernel's reach
        # A later run whose checked outputs are bit for bit the first run's (still on the device)
        # is not kept: its statistics against the reference are the first run's (None stands
        # for it), so a set needs room for two runs' outputs at most, and the reference's in
        # the room the second run left
        runs = []
        for r in range(repeat):
            last = _last_kept(runs)
            if last is not None and (low_memory or over_cap(ctx, out_b)) and _on_device(runs[last], checked):
                runs[last] = _to_host(ctx, runs[last], checked_set, "isolate %s, set %s: run %d" % (kernel, name, r))
                torch.cuda.empty_cache()
            args, scratch_run = cand_run(inputs, name, changed, pz, fence_seed, outside)
            scratch_written = scratch_written or scratch_run
            if runs and _on_device(runs[0], checked) and same_bits(runs[0], args, checked):
                runs.append(None)
            else:
                runs.append(args)
            del args
        staged = low_memory or over_cap(ctx, out_b)
        if staged:
            _stage_runs(ctx, runs, checked, "isolate %s, set %s" % (kernel, name))
            torch.cuda.empty_cache()
        args = materialize(inputs, roles, pz)
        _launch(orig, args, stream, "the original kernel raised on input set %s" % name)
        ref = [args[k] for k in checked]
        del args
        if si == 0:
            random_ok = not any(_has_nan(t) for t in ref)
        if staged or free_bytes() < 1.2 * nbytes(ref) + (256 << 20) or over_cap(ctx, 0):
            ctx.log("isolate %s, set %s: the original's outputs (%d MiB) staged to host memory"
                    % (kernel, name, nbytes(ref) >> 20))
            ref = [t.to("cpu") for t in ref]
            torch.cuda.empty_cache()
        per_arg = [{"arg": k, "runs": []} for k in checked]
        # no candidate kernel runs between here and the comparisons; the sums stay as a check that
        # nothing left running (every launch is followed by a device-wide synchronisation) did
        ref_sums = [content_sum(t) for t in ref]
        first = None
        while runs:
            run = runs.pop(0)
            stats = first if run is None else _compare_run(ctx, ref, run, checked, tol)
            del run
            first = stats if first is None else first
            for j, st in enumerate(stats):
                per_arg[j]["runs"].append(dict(st))
        ref_changed = [content_sum(t) for t in ref] != ref_sums
        # the reference's device memory goes back to the allocator poisoned: a later set's
        # candidate must not find this set's correct results in what it is handed
        _poison_all(ref)
        sets.append({"name": name, "args": per_arg, "inputs_changed": sorted(changed),
                     "outside_writes": sorted(outside), "scratch_outside_writes": scratch_written,
                     "reference_changed": ref_changed})
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            ctx.log("isolate %s, set %s: %d MiB allocated, %d MiB at most since the step began"
                    % (kernel, name, torch.cuda.memory_allocated() >> 20, torch.cuda.max_memory_allocated() >> 20))
        del ref, inputs
        if changed and seed is None:
            # the captured inputs (possibly the problem's own tensors) were written: recapture
            ctx.launches = None
            if ctx.problem is not None:
                ctx.problem.verify_inputs()
            break
    if problem is not None and problem.displaced:
        problem.restore()
    if in_place and ctx.launches is cache_:
        cache_.forget(key)   # its clones now hold the last seed's draw
    if problem is not None:
        # a weight among the launch's read-only arguments, written: it cannot be drawn again, and
        # would stay written for every later step (inputs_changed above refuses the candidate)
        problem.check_state("a candidate kernel run in isolation")
    return {"sets": sets, "checked": checked}


def _run_bytes(entry, roles):
    """Bytes one run's materialize allocates: fresh "out" arguments and "inout" copies."""
    memo, total = set(), 0
    for a, r in zip(entry, roles):
        if isinstance(a, _Layout):
            total += a.nbytes + 2 * fence_bytes(a.nbytes)   # a candidate's run fences it
        elif isinstance(a, torch.Tensor) and r in ("inout", "out"):
            p = storage(a).data_ptr()
            if p not in memo:
                memo.add(p)
                total += storage(a).nbytes()
    return total


def _draw_bytes(entry, roles):
    """Bytes _redraw allocates for one seed set (floating "in"/"inout" storages, with their
    room before and after)."""
    drawn = [a for a, r in zip(entry, roles) if r in ("in", "inout") and isinstance(a, torch.Tensor)
             and a.is_floating_point()]
    seen = {storage(a).data_ptr(): storage(a).nbytes() for a in drawn}
    return nbytes(drawn) + sum(2 * fence_bytes(b) for b in seen.values())


def compile_threads():
    """Threads compiling launcher-form candidates at once: KOPT_COMPILE_THREADS, else the
    host's cores (at most 8)."""
    try:
        n = int(os.environ.get("KOPT_COMPILE_THREADS", "0"))
    except ValueError:
        n = 0
    return n if n > 0 else max(1, min(8, os.cpu_count() or 1))


def _precompile(kerns, status, entry, roles):
    """Compiles the launcher-form kernels of kerns[1:] for the launch's arguments, several at
    once on the host's cores, launching nothing (_WarmupOnly); ptxas runs in a process of its
    own, so the compiles overlap at least there (the measured effect: docs/BENCHMARKS.md). A
    candidate that fails, or whose kernels need more local memory than the screen launches
    (over_local_limit), is dropped (kerns[k] = None, status[k] = why). Inductor-style candidates
    compiled when their module was imported. Returns the threads used."""
    from concurrent.futures import ThreadPoolExecutor
    todo = [k for k in range(1, len(kerns)) if kerns[k] is not None and getattr(kerns[k], "launch", None)]
    if not todo:
        return 1
    nthreads = min(compile_threads(), len(todo))
    args = materialize(entry, roles, poison=False)
    warm = _WarmupOnly()

    def one(k):
        got = warm.recording()
        try:   # dry_run is per thread: a kernel loaded from a cubin launches nothing here either
            with torch.no_grad(), cubin.dry_run():
                kerns[k].launch(*args)
            return k, None, got
        except Exception as e:  # noqa: BLE001 - a candidate's failure is its verdict
            return k, _short(e), got

    with warm:
        if nthreads <= 1:
            done = [one(k) for k in todo]
        else:
            with ThreadPoolExecutor(max_workers=nthreads) as pool:
                done = list(pool.map(one, todo))
    for k, err, got in done:   # the modules loaded here, in this thread, after the compiles
        err = err if err is not None else over_local_limit(got)
        if err is not None:
            kerns[k] = None
            status[k] = err
    torch.cuda.synchronize()
    return max(1, nthreads)


def op_bench_kernels(ctx, req):
    """bench_kernels {orig, kernel, cands: [module...], launch_args, rounds=10, warmup=2}
    Kernel-level pre-screen of many candidates for one kernel: the original kernel (from the
    module `orig`) and each candidate module's kernel of the same name run on the launch's
    arguments (materialize: fresh outputs, private in-place arguments, shared inputs), each run
    timed with CUDA events after an L2 flush and a short stall, all variants interleaved per
    round. A candidate that fails to import, compile or run gets {"error": "..."} instead of
    samples (it is simply dropped by the core), as does one whose kernels need more local memory
    a thread than SCREEN_LOCAL_BYTES (never launched: see there). Result:
    {"orig": [ms...], "cands": [[ms...] | {"error": ...}], "sleep_ms": float,
     "compile_s": wall seconds of imports, compiles and warm-up, "compile_threads": n}.
    The shared arguments (the model's inputs and weights among them) are checksummed after each
    candidate's warm-up (it runs alone there): one that wrote to them gets {"error": ...}, the
    inputs are restored and the launch captured again (_ScreenArgs.restore), and the others go on.
    They are checksummed again after the timed rounds, where all run on the same tensors: on a
    change the inputs are restored and each candidate runs alone again as many times as it ran
    (_screen_writers); the ones whose runs change them get {"error": ...} and the others are
    timed again from scratch (their first samples were taken beside a writer), now with the
    shared arguments checked after every run (_screen_checked): a write there is the run's
    kernel's, refused by name, and the timing starts again without it. So a candidate that
    writes only now and then cannot make the whole screen fail; only a write after the
    original's own run does (_screen_wrote)."""
    from kopt.timing import flush_buffer, MIN_STALL_MS
    opath = get_arg(req, "orig", str)
    kernel = get_arg(req, "kernel", str)
    cands = get_arg(req, "cands", list)
    spec = get_arg(req, "launch_args", dict)
    rounds = get_arg(req, "rounds", int, 10)
    warmup = get_arg(req, "warmup", int, 2)
    roles = spec.get("roles")
    key, entry, _, _ = launches(ctx).get_full(ctx, spec)
    make_room(ctx, _run_bytes(entry, roles or [None] * len(entry)) + flush_buffer(ctx).numel(), keep_launch=key)
    # the arguments every run shares (materialize copies only in-place and output ones): the
    # model's inputs and weights among them; a candidate must leave them as they are
    args = _ScreenArgs(ctx, spec, roles, entry)
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
            settle(kerns[0], entry, roles, stream)
            for _ in range(max(1, warmup)):
                kerns[0].run(*materialize(entry, roles), stream=stream)
            torch.cuda.synchronize()
        except Exception as e:
            raise wrap("module_failed", "the original kernel raised", e)
    nthreads = _precompile(kerns, status, entry, roles)
    with torch.no_grad():
        for k, kern in enumerate(kerns):
            if k == 0 or kern is None:   # the original was warmed up above
                continue
            # its warm-up runs alone: a write there is this candidate's; it is dropped, the rest go on
            why = _run_alone(kern, args, max(1, warmup), stream, True,
                             "wrote to arguments it only reads (its warm-up runs changed them); refused")
            if why is not None:
                kerns[k] = None
                status[k] = why
        compile_s = time.perf_counter() - t_compile
        samples, _ = _screen_rounds(ctx, kerns, args.entry, roles, rounds, stream)
        if args.changed():
            # a write in the timed rounds: find the writers by running each candidate alone,
            # then time again with the arguments checked after every run
            args.restore()
            for k, why in _screen_writers(kerns, args, max(1, warmup) + rounds, stream).items():
                kerns[k] = None
                status[k] = why
            samples = _screen_checked(ctx, kerns, status, args, roles, rounds, stream)
    out = []
    for k in range(1, len(kerns)):
        out.append({"error": status[k]} if kerns[k] is None else samples[k])
    return {"orig": samples[0], "cands": out, "sleep_ms": MIN_STALL_MS, "compile_s": compile_s,
            "compile_threads": nthreads}


def _screen_rounds(ctx, kerns, entry, roles, rounds, stream, check=None):
    """The screen's timed rounds: every live kernel (kerns[k] not None) once a round, in an order
    rotated each round, on materialized arguments, after an L2 flush and a short stall, timed with
    CUDA events. (samples, None): samples[k] in ms (empty for a dropped one). With check (the
    _ScreenArgs): the shared arguments are checked after every run, and the first run that
    changed them ends the rounds: (partial samples, the index of the kernel that ran)."""
    from kopt.timing import flush_buffer, stall, MIN_STALL_MS
    buf = flush_buffer(ctx)
    samples = [[] for _ in kerns]
    live = [k for k, kern in enumerate(kerns) if kern is not None]
    for r in range(rounds):
        order = live[r % len(live):] + live[:r % len(live)]
        events = []
        for k in order:
            args = materialize(entry, roles, poison=False)
            buf.zero_()
            stall(ctx, MIN_STALL_MS)
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            kerns[k].run(*args, stream=stream)
            e.record()
            events.append((k, s, e))
            del args
            if check is not None:
                torch.cuda.synchronize()
                if check.changed():
                    return samples, k
        torch.cuda.synchronize()
        for k, s, e in events:
            samples[k].append(s.elapsed_time(e))
    return samples, None


def _screen_checked(ctx, kerns, status, args, roles, rounds, stream):
    """The screen's rounds timed again after a write no run alone repeated (the inputs
    restored), with the shared arguments checked after every run (_screen_rounds with check):
    a candidate whose run changed them is refused by name, the inputs restored and the rounds
    started again without it; samples when a whole timing runs clean. A write after the
    original's own run fails the screen (_screen_wrote)."""
    while True:
        samples, writer = _screen_rounds(ctx, kerns, args.entry, roles, rounds, stream, check=args)
        if writer is None:
            return samples
        if writer == 0:
            _screen_wrote(ctx)
        kerns[writer] = None
        status[writer] = "wrote to arguments it only reads (in the timed rounds, caught after one of its runs); refused"
        args.restore()


def _run_alone(kern, args, runs, stream, warm, wrote_why):
    """kern run alone `runs` times on materialized arguments (with warm: settled first, outputs
    poisoned, as a warm-up). The reason to drop it, or None when it ran clean: its error, or
    wrote_why when the shared arguments changed -- then they are restored (args.restore) for
    the next one (also after an error: it may have written before raising)."""
    why = None
    try:
        if warm:
            settle(kern, args.entry, args.roles, stream)
        for _ in range(runs):
            kern.run(*materialize(args.entry, args.roles, poison=warm), stream=stream)
        torch.cuda.synchronize()
    except Exception as e:
        if isinstance(e, OpError):
            raise
        why = _short(e)
        torch.cuda.synchronize()
    if args.changed():
        why = wrote_why
        args.restore()
    return why


def _screen_writers(kerns, args, runs, stream):
    """After a write in the timed rounds (the inputs restored): each live candidate (not the
    original, kerns[0]) runs alone `runs` times (_run_alone); {k: why} for the ones that wrote
    (or raised); empty: no candidate repeats the write alone."""
    writers = {}
    with torch.no_grad():
        for k in range(1, len(kerns)):
            if kerns[k] is not None:
                why = _run_alone(kerns[k], args, runs, stream, False,
                                 "wrote to arguments it only reads (in the timed rounds, and again run alone); refused")
                if why is not None:
                    writers[k] = why
    return writers


class _ScreenArgs:
    """The captured launch a screen runs on (entry), its shared (read-only) arguments and their
    checksums (None without roles: nothing says which are read-only, nothing is checked)."""

    def __init__(self, ctx, spec, roles, entry):
        self.ctx, self.spec, self.roles = ctx, spec, roles
        self._take(entry)

    def _take(self, entry):
        self.entry = entry
        self.shared = _shared(entry, self.roles)
        self.sums = checksums(self.shared) if self.roles else None

    def changed(self):
        """Whether a shared argument differs from its checksum."""
        return self.sums is not None and checksums(self.shared) != self.sums

    def restore(self):
        """_screen_reset after a write, then the launch captured again for the runs still to come."""
        _screen_reset(self.ctx)
        _, entry, _, _ = launches(self.ctx).get_full(self.ctx, self.spec)
        self._take(entry)


def _shared(entry, roles):
    """The tensors of a captured launch every screen run shares (materialize copies only the
    in-place and output ones): the model's inputs and weights among them."""
    return [a for k, a in enumerate(entry)
            if isinstance(a, torch.Tensor) and not (roles and k < len(roles) and roles[k] in ("inout", "out"))]


def _screen_reset(ctx):
    """After a screened candidate wrote to the shared arguments: the captured launches dropped
    (an intermediate it wrote cannot be restored otherwise), the loaded inputs restored, a
    changed weight the fatal state_changed (the restarted worker loads the model afresh)."""
    ctx.launches = None
    if ctx.problem is not None:
        ctx.problem.verify_inputs()
        ctx.problem.check_state("a screened candidate")


def _screen_wrote(ctx):
    """The arguments every run shares changed after a run of the original kernel (its roles say
    it only reads them: the capture cannot be trusted): _screen_reset, then the round fails
    (module_failed: the core drops the round's candidates)."""
    _screen_reset(ctx)
    raise OpError("module_failed", "the shared arguments changed after the original kernel's run in the screen (the "
                  "launch is captured again, the model's inputs restored); the round's candidates are dropped")
