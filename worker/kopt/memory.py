"""GPU memory accounting of the worker (PROTOCOL.md, `resources`, and every request's `phase`).

What is measured, for the core's report (the limits are the core's):
  * context_bytes: device memory the process holds outside PyTorch's caching allocator (the
    CUDA context, cuBLAS/cuDNN workspaces, Triton's modules): total - free - reserved, taken
    when it is first asked for after CUDA is up, and again at each `resources` (the larger);
  * peak reserved bytes per *phase*: requests name their phase ("main" by default, "eager" for
    the user's own model run eagerly in its dtypes -- its timing and gate 3's reference; `load`
    switches to it around its one eager forward --, "f64" for the float64 reference of gate 3,
    "ceilings" for the device ceilings, "inputs" for the user's get_inputs() drawing a seed's
    inputs: kopt.problem enters it around each draw). The eager model's unfused intermediates are the user's,
    not kopt's, so they do not set the main phase's peak. When the phase changes, the peak of
    the phase that ends is folded into its maximum and PyTorch's peak statistics are reset, so a
    phase's peak never includes another phase's transient memory. Memory still held when a
    phase starts counts in that phase too (it is resident: an eager run's kept outputs count in
    the main phase that compares them);
  * peak reserved bytes per op name (`peak_reserved_by_op`; "op/f64", "op/eager" for ops, or
    parts of ops (Memory.within), of another phase), to tell which step set the peak;
  * device memory held outside the caching allocator at the end of each op, the largest per op
    name (`outside_allocator_by_op`): which step grew the context (cuBLAS/cuDNN workspaces,
    Triton modules, a library's own cudaMalloc) -- memory the reserved peaks do not show;
  * free_bytes(): memory a new allocation can get without an OOM: the driver's free memory plus
    what the caching allocator has reserved but not handed out.

Local memory. A kernel that needs more per-thread stack than the context's limit makes the driver
raise the limit and reserve that much local memory for every thread the GPU can hold, and keep it
for the process's life: one GEMM choice of max-autotune with a 10 KB stack left 2.54 GB reserved
outside the allocator on the H200 (level2/04, twenty-second session). So after each op, once its
outside-the-allocator figure is recorded (that op's peak keeps it), the stack limit goes back to
what it was when CUDA came up (cuCtxSetLimit through the driver library; the driver raises it
again for the next kernel that needs it), and `stack_released` lists each release ({op,
stack_bytes, freed_bytes}). The context figure the core adds to each phase's peak is the largest
seen at any op's end, so a release never makes an earlier peak look smaller.

The cap (`limits`, set by the core from the model's working set): the device memory kopt's
main-phase work should stay within, context included. It is not an allocator limit (nothing
fails at it); the steps that can degrade consult it before they allocate: kopt.room.make_room
forgets captured launches and stages kept outputs to host memory, gate 2's isolation stages its
references and redraws seed inputs in place, comparisons take smaller chunks (alloc_cap,
over_cap, compare_chunk).
Everything is a no-op without CUDA (CPU tests of the worker).
"""

import contextlib
import ctypes
import os
import pickle
import time

import torch

from kopt.errors import BadRequest
from kopt.tensors import storage

PHASES = ("main", "eager", "f64", "ceilings", "inputs")
CU_LIMIT_STACK_SIZE = 0   # CUlimit
MAX_RELEASES_LISTED = 32


class DriverStack:
    """The current CUDA context's per-thread stack limit through the driver library (libcuda):
    get() -> bytes or None, set(bytes) -> True when the driver accepted it."""

    def __init__(self, lib):
        self.lib = lib

    @staticmethod
    def open():
        """A DriverStack, or None where the driver library cannot be loaded."""
        try:
            return DriverStack(ctypes.CDLL("libcuda.so.1"))
        except OSError:
            return None

    def get(self):
        v = ctypes.c_size_t(0)
        if self.lib.cuCtxGetLimit(ctypes.byref(v), CU_LIMIT_STACK_SIZE) != 0:
            return None
        return int(v.value)

    def set(self, n):
        return self.lib.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, ctypes.c_size_t(int(n))) == 0


class Memory:
    def __init__(self):
        self.phase = "main"
        self.peaks = {p: 0 for p in PHASES}
        self.by_op = {}        # op name -> largest peak reserved while it ran
        self.by_op_alloc = {}  # op name -> largest peak allocated while it ran (diagnosis)
        self.outside_by_op = {}  # op name -> largest device memory outside the allocator at its end
        self.op = None         # the op running now (begin_op .. end_op), its plain name
        self.cur_op = None     # the name its peak is credited to: op, or "op/phase" off main
        self.context = None
        self.cap = None        # device bytes for the main phase, context included (limits), or None
        self.stack = False     # DriverStack, None (no driver library), False (not opened yet)
        self.stack_base = None  # the stack limit at the end of the first op that saw CUDA up
        self.released = []     # the stack releases, [{op, stack_bytes, freed_bytes}] (docstring)
        self.history = History.from_env()   # developer diagnosis ($KOPT_MEM_HISTORY), or None

    def _cuda(self):
        return torch.cuda.is_available() and torch.cuda.is_initialized()

    @staticmethod
    def _outside_now():
        """Device memory held outside the caching allocator now: total - free - reserved."""
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        return int(total - free - torch.cuda.memory_reserved())

    def measure_context(self):
        """The device memory held outside the caching allocator (see docstring), or None."""
        if not self._cuda():
            return None
        ctx = self._outside_now()
        if ctx > 0 and (self.context is None or ctx > self.context):
            self.context = ctx
        return self.context

    def enter(self, phase):
        """Switch to `phase` (folding the current phase's peak first)."""
        if phase not in PHASES:
            phase = "main"
        if phase == self.phase or not self._cuda():
            self.phase = phase
            return
        self.fold()
        torch.cuda.empty_cache()   # the last phase's cached blocks are not this phase's
        torch.cuda.reset_peak_memory_stats()
        self.phase = phase

    def begin_op(self, op):
        """Before an op: fold the running peak into the phase and restart PyTorch's peak
        statistics, so the op's own peak is seen (fold() credits it to the op too)."""
        if self._cuda():
            self.fold()
            # blocks the allocator cached for earlier ops are free: give them back, so that an
            # op's peak is what is live plus what it needs, not the high-water mark of the past
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        self.op = op
        self.cur_op = self._credit(op)
        if self.history is not None:
            self.history.mark(self.cur_op, self._cuda())

    def _credit(self, op):
        """The peak_reserved_by_op name of `op` in the current phase."""
        return op if op is None or self.phase == "main" else "%s/%s" % (op, self.phase)

    def end_op(self):
        """After an op (whatever its outcome). Returns release_stack's record (or None)."""
        self.fold()
        rec = self.release_stack(self.note_outside())
        self.op = self.cur_op = None
        return rec

    def _driver_stack(self):
        if self.stack is False:
            self.stack = DriverStack.open()
        return self.stack

    def release_stack(self, before):
        """Puts the context's stack limit back to stack_base when an op raised it (the module
        docstring); records what that gave back against `before`, the memory outside the
        allocator note_outside just measured. Returns the release's record or None."""
        if before is None or not self._cuda() or self._driver_stack() is None:
            return None
        try:
            now = self.stack.get()
            if self.stack_base is None:   # CUDA came up during this op: its limit is the base
                self.stack_base = now
                return None
            if now is None or now <= self.stack_base:
                return None
            if not self.stack.set(self.stack_base):
                return None
            rec = {"op": self.cur_op or "?", "stack_bytes": now,
                   "freed_bytes": max(0, before - self._outside_now())}
        except Exception:  # a broken CUDA context: the op's own error says why
            return None
        if len(self.released) < MAX_RELEASES_LISTED:
            self.released.append(rec)
        return rec

    def note_outside(self):
        """Records the device memory held outside the caching allocator now (total - free -
        reserved) against the running op, when it is the largest seen for it. Returns it (None
        when not measured)."""
        if self.cur_op is None or not self._cuda():
            return None
        try:
            outside = self._outside_now()
        except Exception:  # a broken CUDA context: the op's own error says why
            return None
        if outside > self.outside_by_op.get(self.cur_op, -1):
            self.outside_by_op[self.cur_op] = outside
        if outside > 0 and (self.context is None or outside > self.context):
            self.context = outside   # the largest seen (the module docstring, "Local memory")
        return outside

    @contextlib.contextmanager
    def within(self, phase):
        """Runs the with-block in memory phase `phase` (the part of an op that runs the user's
        eager model: `load`'s forward), its peak credited to the phase and to "op/phase"; then
        returns to the phase that was current (its peak statistics restart: what the block
        left allocated counts there), even when the block raises."""
        prev = self.phase
        self.enter(phase)
        self.cur_op = self._credit(self.op)
        if self.history is not None:
            self.history.mark(self.cur_op, self._cuda())
        try:
            yield
        finally:
            try:
                self.enter(prev)
            except Exception:  # a broken CUDA context: the error in flight says why
                self.phase = prev
            self.cur_op = self._credit(self.op)
            if self.history is not None:
                self.history.mark(self.cur_op, self._cuda())

    def fold(self):
        """Fold PyTorch's running peak into the current phase's maximum; call it before anything
        resets the peak statistics (kopt.run measures each run's own peak)."""
        if self._cuda():
            peak = int(torch.cuda.max_memory_reserved())
            if peak > self.peaks[self.phase]:
                self.peaks[self.phase] = peak
            if self.cur_op is not None and peak > self.by_op.get(self.cur_op, 0):
                self.by_op[self.cur_op] = peak
            alloc = int(torch.cuda.max_memory_allocated())
            if self.cur_op is not None and alloc > self.by_op_alloc.get(self.cur_op, 0):
                self.by_op_alloc[self.cur_op] = alloc

    def report(self):
        """{"peak_reserved": {phase: bytes}, "peak_reserved_by_op", "peak_allocated_by_op",
        "outside_allocator_by_op", "stack_released", "context_bytes", "reserved_bytes",
        "allocated_bytes", "free_bytes", "total_bytes"} (zeros without CUDA)."""
        self.fold()
        if self.history is not None:
            self.history.dump()
        out = {"peak_reserved": dict(self.peaks), "peak_reserved_by_op": dict(self.by_op),
               "peak_allocated_by_op": dict(self.by_op_alloc),
               "outside_allocator_by_op": dict(self.outside_by_op),
               "stack_released": list(self.released),
               "context_bytes": self.measure_context() or 0,
               "reserved_bytes": 0, "allocated_bytes": 0, "free_bytes": 0, "total_bytes": 0}
        if self._cuda():
            free, total = torch.cuda.mem_get_info()
            out.update(reserved_bytes=int(torch.cuda.memory_reserved()),
                       allocated_bytes=int(torch.cuda.memory_allocated()),
                       free_bytes=int(free), total_bytes=int(total))
        return out


class History:
    """Developer diagnosis of where a step's peak comes from: with $KOPT_MEM_HISTORY set to a
    folder (pass it to the worker with KOPT_WORKER_ENV=KOPT_MEM_HISTORY), PyTorch's allocator
    records every allocation with its Python stack from the first op on, the
    worker notes when each op (or part of an op in another phase) starts, and each `resources`
    dumps both to FOLDER/mem-PID.pickle for tools/mem_peak.py. Off (None) otherwise: recording
    costs time and host memory."""

    MAX_ENTRIES = 400000

    def __init__(self, folder):
        self.folder = folder
        self.on = False
        self.marks = []   # [(unix time in us, the name the op's peak is credited to)]

    @staticmethod
    def from_env():
        folder = os.environ.get("KOPT_MEM_HISTORY")
        return History(folder) if folder else None

    def mark(self, name, cuda_up):
        """Notes that `name` starts now; the first call on a machine with CUDA brings CUDA up
        (the `load` it comes before would) and starts the recording, so the loaded inputs are
        in it."""
        if not self.on and (cuda_up or torch.cuda.is_available()):
            torch.cuda.init()
            torch.cuda.memory._record_memory_history(max_entries=self.MAX_ENTRIES, stacks="python")
            self.on = True
        self.marks.append((time.time() * 1e6, name))

    def dump(self):
        if not self.on:
            return
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, "mem-%d.pickle" % os.getpid())
        with open(path, "wb") as f:
            pickle.dump({"snapshot": torch.cuda.memory._snapshot(), "marks": self.marks}, f)


def _cuda_up():
    return torch.cuda.is_available() and torch.cuda.is_initialized()


def alloc_cap(ctx):
    """Bytes PyTorch's allocator may hold under the cap: the cap less the memory held outside
    it (the context); None when no cap is set or without CUDA."""
    m = getattr(ctx, "memory", None)
    if m is None or m.cap is None or not _cuda_up():
        return None
    return max(0, int(m.cap) - int(m.measure_context() or 0))


def over_cap(ctx, extra):
    """Whether allocating `extra` more bytes would take the allocator past alloc_cap (False
    without a cap, and outside the main phase: the eager model's and float64's memory is not
    kopt's to shape)."""
    cap = alloc_cap(ctx)
    if cap is None or ctx.memory.phase != "main":
        return False
    return int(torch.cuda.memory_allocated()) + int(extra) > cap


# bytes of temporaries kopt.compare.compare_stats holds per element of a chunk at most: float64
# copies of both sides, masks, differences and the products reduced, plus the host-to-device
# staging of host-held sides and the allocator's rounding of the chunks (128 counted only the
# first: held-out h02's isolate step peaked 0.28 GB above the cap at 3.08x its working set,
# 1.81 GB reserved for 0.41 GB of outputs, with chunks sized by it)
COMPARE_BYTES_PER_ELEM = 256


def compare_chunk(ctx, default):
    """Elements per comparison chunk: `default`, or a power of two (at least 2^20) that keeps
    the comparison's temporaries (COMPARE_BYTES_PER_ELEM a element) within what the cap leaves
    free."""
    cap = alloc_cap(ctx)
    if cap is None or ctx.memory.phase != "main":
        return default
    room = cap - int(torch.cuda.memory_allocated())
    n = 1 << 20
    while n * 2 <= default and n * 2 * COMPARE_BYTES_PER_ELEM <= room:
        n *= 2
    return n


def op_limits(ctx, req):
    """`limits` {memory_cap_bytes: N | null}: the cap (module docstring); the answer says what
    it leaves the allocator ({"memory_cap_bytes", "alloc_cap_bytes", "context_bytes"})."""
    cap = req.get("memory_cap_bytes")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap < 0):
        raise BadRequest("memory_cap_bytes must be a non-negative number or null")
    ctx.memory.cap = int(cap) if cap else None
    return {"memory_cap_bytes": ctx.memory.cap, "alloc_cap_bytes": alloc_cap(ctx),
            "context_bytes": ctx.memory.measure_context() or 0}


def free_bytes():
    """Bytes a new allocation can get: driver-free plus reserved-but-unallocated."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return 1 << 62
    free, _ = torch.cuda.mem_get_info()
    return int(free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated())


def nbytes(items):
    """Bytes of the distinct storages among the tensors of `items` (a list, nested ok)."""
    seen, total = set(), 0
    stack = list(items) if isinstance(items, (list, tuple)) else [items]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, torch.Tensor):
            try:
                st = storage(x)
                key = (x.device.type, x.device.index, st.data_ptr())
                if key not in seen:
                    seen.add(key)
                    total += int(st.nbytes())
            except Exception:
                total += int(x.numel() * x.element_size())
    return total


def op_resources(ctx, req):
    """`resources` {}: the memory report (Memory.report) plus the Inductor cache's size."""
    import os
    rep = ctx.memory.report()
    d = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    size = 0
    if d and os.path.isdir(d):
        for root, _, files in os.walk(d):
            for f in files:
                try:
                    size += os.lstat(os.path.join(root, f)).st_size
                except OSError:
                    pass
    rep["compile_cache_bytes"] = size
    return rep
