"""`load`: import a KernelBench-format problem file and build its model and inputs on the GPU.

A problem file defines `class Model(nn.Module)`, `get_init_inputs()` (the constructor's
arguments) and `get_inputs()` (the forward's arguments, usually CPU tensors). Like KernelBench:
  torch.manual_seed(seed); init = get_init_inputs()       (tensors among them go to the GPU)
  torch.manual_seed(seed); model = Model(*init).cuda().eval()
  torch.manual_seed(seed); inputs = get_inputs() moved to the GPU
then one eager forward under no_grad.

Where the tensors are made. get_inputs() and the model's constructor run under a
`torch.device("cuda")` context, so factory calls without a device (torch.randn(...), nn.Linear
parameters) create their tensors on the GPU directly: a KernelBench input of several GB is then
drawn in milliseconds instead of seconds on the CPU, and never exists twice. The values differ
from a CPU draw under the same seed (another generator) but follow the same distribution; every
run of kopt draws the same way, so seeds are reproducible. A problem whose get_inputs() or
constructor fails under the context (it calls numpy, say) is retried the KernelBench way (on
the CPU, then moved). Tensors the problem creates on the CPU explicitly are moved as before.

Displacing the loaded inputs (`displace` / `restore`). A run on a seed's fresh inputs does not
use the loaded ones, yet holding both was the largest step of small problems under the memory
cap (two copies of the inputs beside the run). Where the cap needs it, `run` displaces them for
such a run: their storages are emptied in place (resize to 0 bytes); restore() refills the same
storages, so every holder (captured launches, the module cache) sees the same tensors again --
by drawing them again under the load seed (milliseconds on the GPU; checked against the load's
checksums), else from a copy in pageable host memory, which no kernel can address, made once at
the first displacement (copying 1 GB there and back for every seed's run cost h10 5 s of gate 3).
The server restores before every request, so no other step ever finds them displaced.

The eager forward at load also tells whether the model writes to its inputs (a checksum of each
input before and after: `mutates_inputs`); targets that run the eager model clone its inputs
per run only then. The checksums of the loaded inputs are kept (`input_sums`) so that any later
step can verify that no candidate changed them (`verify_inputs`). So are those of the model's
parameters and buffers (`state_sums`; `check_state` after gate 2's sets, every module run, gate
4's timed rounds and the kernel screen, where candidates run on the model's own weights): a
changed weight cannot be drawn again, so a change is the fatal `state_changed` (the restarted
worker loads the model afresh). A model whose eager forward writes to its own buffers
(`mutates_state`) is not checked.

Failures are classified in this order: file_not_found,
syntax_error (file:line), no_cuda, import_error, no_model, no_get_inputs, no_get_init_inputs,
init_raises (get_init_inputs or the constructor raised), bad_inputs (get_inputs raised, or
returned something other than a list/tuple of tensors: plain ints/floats/bools are accepted as
extra arguments, as KernelBench allows, but at least one tensor is required), model_raises.
"""

import contextlib
import importlib.util
import itertools
import os
import sys

import torch

from kopt.compare import checksums
from kopt.errors import OpError, wrap
from kopt.memory import nbytes
from kopt.protocol import get_arg
from kopt.tensors import meta, to_cuda, flatten, storage

_counter = itertools.count()


class Problem:
    """The loaded problem: its module, eager model (cuda, eval) and inputs (cuda)."""

    def __init__(self, path, seed, module, model, inputs, memory=None):
        self.path = path
        self.memory = memory     # kopt.memory.Memory: draws run in its "inputs" phase (or None)
        self.seed = seed
        self.module = module
        self.model = model
        self.inputs = inputs
        self.input_sums = checksums(inputs)
        self.mutates_inputs = False
        # [(name, tensor)] of the model's parameters and buffers (what gate 4 may rotate)
        self.params = _named(model.named_parameters()) if model is not None else []
        self.buffers = _named(model.named_buffers()) if model is not None else []
        self.state = self.params + self.buffers
        self.state_sums = checksums([t for _, t in self.state])
        self.mutates_state = False          # the eager forward wrote to them (a running statistic)
        self._displaced = None   # [(storage, bytes)] emptied while displaced (module docstring)
        self._host = None        # [host bytes] of each distinct storage, copied at the first displace

    @property
    def displaced(self):
        return self._displaced is not None

    def _storages(self):
        """The loaded inputs' distinct storages (empty ones left out), in input order."""
        seen, out = set(), []
        for t in self.inputs:
            if isinstance(t, torch.Tensor):
                st = storage(t)
                if st.data_ptr() not in seen and st.nbytes() > 0:
                    seen.add(st.data_ptr())
                    out.append(st)
        return out

    def displace(self):
        """Empties the loaded inputs' storages until restore() (module docstring). Their bytes
        are copied to pageable host memory once, at the first displacement, after their
        checksums are found as at load. Returns the device bytes freed; 0 (nothing done) when
        they are displaced already, when a storage cannot be resized (memory PyTorch does not
        own), when the problem file's globals hold one (a get_inputs() that hands out, or
        computes from, a cached tensor would read an emptied storage), or when they differ from
        what was loaded."""
        if self._displaced is not None:
            return 0
        sts = self._storages()
        if {st.data_ptr() for st in sts} & _global_storages(self.module):
            return 0
        if self._host is None:
            if checksums(self.inputs) != self.input_sums:
                return 0
            self._host = [_as_bytes(st).to("cpu", copy=True) for st in sts]
        if len(self._host) != len(sts) or any(h.numel() != st.nbytes() for h, st in zip(self._host, sts)):
            return 0
        done = []
        try:
            for st in sts:
                n = st.nbytes()
                st.resize_(0)
                done.append((st, n))
        except RuntimeError:   # a storage that is not resizable: put back what was emptied
            self._displaced = done
            self.restore()
            return 0
        self._displaced = done
        return sum(n for _, n in done)

    def restore(self):
        """Puts displaced inputs back into their own storages (a no-op when not displaced):
        drawn again under the load seed where each input tensor covers its storage whole (one
        storage refilled at a time, so at most one input is held twice), else -- or where the
        draw does not reproduce the load's checksums -- copied from the host copy."""
        if self._displaced is None:
            return
        done, self._displaced = self._displaced, None
        if not self._restore_by_draw(done):
            for (st, n), host in zip(done, self._host):
                if st.nbytes() != n:
                    st.resize_(n)
                _as_bytes(st).copy_(host)
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def _restore_by_draw(self, done):
        """restore()'s fast path; whether it restored every input exactly."""
        tensors = [t for t in self.inputs if isinstance(t, torch.Tensor)]
        if len(tensors) != len(done) or not all(
                t.storage_offset() == 0 and t.is_contiguous() and t.numel() * t.element_size() == n
                for t, (_, n) in zip(tensors, done)):
            return False
        try:
            fresh = [x for x in self.draw_inputs(self.seed) if isinstance(x, torch.Tensor)]
        except Exception:  # noqa: BLE001 - the user's get_inputs(): the host copy restores instead
            return False
        if len(fresh) != len(tensors):
            return False
        for k, (t, (st, n)) in enumerate(zip(tensors, done)):
            st.resize_(n)
            if fresh[k].shape == t.shape and fresh[k].dtype == t.dtype:
                t.copy_(fresh[k])
            fresh[k] = None
        return checksums(self.inputs) == self.input_sums

    def shares_displaced(self, items):
        """Whether a tensor among `items` lives in a displaced storage (a get_inputs() that hands
        out the same tensor on every call: its seed's inputs are the loaded ones)."""
        if self._displaced is None:
            return False
        return any(isinstance(x, torch.Tensor) and x.numel() > 0 and storage(x).nbytes() == 0
                   for x in items)

    def draw_inputs(self, seed):
        """Fresh inputs from get_inputs() under `seed`, on the GPU (validated). The draw runs in
        the "inputs" memory phase: get_inputs() is the user's code, and its transients (e.g.
        `torch.randn(n) * 2.0` holds two copies for a moment) are not kopt's; the drawn inputs,
        still held afterwards, count in the phase that uses them."""
        with self.memory.within("inputs") if self.memory is not None else contextlib.nullcontext():
            return draw_inputs(self.module, seed)

    def verify_inputs(self):
        """Indices of the loaded inputs whose contents changed since `load` (each is restored
        by drawing it again under the load seed and copying it back in place)."""
        now = checksums(self.inputs)
        changed = [k for k, (a, b) in enumerate(zip(self.input_sums, now)) if a != b]
        if changed:
            fresh = self.draw_inputs(self.seed)
            for k in changed:
                self.inputs[k].copy_(fresh[k])
            torch.cuda.synchronize()
        return changed

    def changed_state(self):
        """Names of the model's parameters and buffers whose contents changed since `load`. They
        cannot be restored in place (no seed makes them again): the caller reports a fatal
        `state_changed`, and the restarted worker loads them afresh."""
        now = checksums([t for _, t in self.state])
        return [name for (name, _), a, b in zip(self.state, self.state_sums, now) if a != b]

    def check_state(self, what):
        """Raise the fatal state_changed error when something `what` names (e.g. "a timed
        variant") changed the model's parameters or buffers; a no-op for a model whose own
        forward writes to them."""
        if self.mutates_state:
            return
        changed = self.changed_state()
        if changed:
            more = ", ..." if len(changed) > 4 else ""
            raise OpError("state_changed", "%s wrote to the model's parameters or buffers (%s%s); the worker "
                          "restarts to restore them" % (what, ", ".join(changed[:4]), more), fatal=True)


def _named(pairs):
    """[(name, detached tensor)] of named_parameters() / named_buffers() (each tensor once:
    torch already drops repeats)."""
    return [(name, t.detach()) for name, t in pairs if isinstance(t, torch.Tensor)]


def _global_storages(module):
    """data_ptrs of the tensors a problem module's globals hold (directly, or in a list, tuple or
    dict among them)."""
    out = set()
    for v in list(vars(module).values()) if module is not None else ():
        items = v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else (v,)
        for x in items:
            if isinstance(x, torch.Tensor):
                out.add(storage(x).data_ptr())
    return out


def _as_bytes(st):
    """A flat uint8 tensor over the whole untyped storage `st` (no copy)."""
    t = torch.empty(0, dtype=torch.uint8, device=st.device)
    t.set_(st, 0, (st.nbytes(),), (1,))
    return t


def require_problem(ctx):
    if ctx.problem is None:
        raise OpError("not_loaded", "no problem is loaded: send 'load' first")
    return ctx.problem


def _on_gpu(fn):
    """fn() under torch.device("cuda") (see the module docstring); if that raises, fn() again
    without it (the caller re-seeds). Returns (result, drawn on the GPU?)."""
    try:
        with torch.device("cuda"):
            return fn(), True
    except (Exception, SystemExit):  # user code may call sys.exit
        return None, False


def draw_inputs(module, seed):
    torch.manual_seed(seed)
    raw, ok = _on_gpu(module.get_inputs)
    if not ok:
        torch.manual_seed(seed)
        try:
            raw = module.get_inputs()
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap("bad_inputs", "get_inputs() raised", e)
    if not isinstance(raw, (list, tuple)):
        raise OpError("bad_inputs", "get_inputs() returned %s, expected a list or tuple of tensors"
                      % type(raw).__name__)
    n_tensors = 0
    for i, x in enumerate(raw):
        if isinstance(x, torch.Tensor):
            n_tensors += 1
        elif not isinstance(x, (int, float, bool)):
            raise OpError("bad_inputs", "get_inputs()[%d] is %s; expected tensors (plain ints and "
                          "floats are accepted as extra arguments)" % (i, type(x).__name__))
    if n_tensors == 0:
        raise OpError("bad_inputs", "get_inputs() returned no tensor")
    return [to_cuda(x) for x in raw]


def _import_problem(path):
    """Import the file under a unique module name; returns the module."""
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise wrap("file_not_found", "cannot read problem file %s" % path, e)
    try:
        compile(source, path, "exec")
    except (SyntaxError, ValueError) as e:
        raise wrap("syntax_error", "", e)
    if not torch.cuda.is_available():
        raise OpError("no_cuda", "no CUDA device is visible to the worker")
    name = "kopt_problem_%d" % next(_counter)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise OpError("import_error", "cannot import %s (not a Python file?)" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # some code (dataclasses, pickling) looks modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as e:
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise wrap("import_error", "importing %s raised" % os.path.basename(path), e)
    return module


def op_load(ctx, req):
    path = get_arg(req, "path", str)
    seed = get_arg(req, "seed", int, 0)
    ctx.reset_problem()  # a failed load leaves nothing loaded, and frees the old model first
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise OpError("file_not_found", "problem file not found: %s" % path)
    module = _import_problem(path)

    Model = getattr(module, "Model", None)
    if Model is None:
        raise OpError("no_model", "%s defines no class Model" % os.path.basename(path))
    if not (isinstance(Model, type) and issubclass(Model, torch.nn.Module)):
        raise OpError("no_model", "Model in %s is not a torch.nn.Module subclass"
                      % os.path.basename(path))
    if not callable(getattr(module, "get_inputs", None)):
        raise OpError("no_get_inputs", "%s defines no get_inputs()" % os.path.basename(path))
    if not callable(getattr(module, "get_init_inputs", None)):
        raise OpError("no_get_init_inputs", "%s defines no get_init_inputs()"
                      % os.path.basename(path))

    torch.manual_seed(seed)
    try:
        init = module.get_init_inputs()
    except (Exception, SystemExit) as e:  # user code may call sys.exit
        raise wrap("init_raises", "get_init_inputs() raised", e)
    if not isinstance(init, (list, tuple)):
        raise OpError("init_raises", "get_init_inputs() returned %s, expected a list or tuple"
                      % type(init).__name__)
    init = [to_cuda(x) for x in init]
    torch.manual_seed(seed)
    model, ok = _on_gpu(lambda: Model(*init))
    if not ok:
        torch.manual_seed(seed)
        try:
            model = Model(*init)
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap("init_raises", "Model(*get_init_inputs()) raised", e)
    try:
        model = model.cuda().eval()
    except (Exception, SystemExit) as e:  # user code may call sys.exit
        raise wrap("init_raises", "moving the model to the GPU raised", e)

    with ctx.memory.within("inputs"):
        inputs = draw_inputs(module, seed)
    problem = Problem(path, seed, module, model, inputs, ctx.memory)
    ctx.memory.measure_context()

    try:
        # the user's eager model (its unfused intermediates are not kopt's): the "eager" memory
        # phase, credited to "load/eager"; its outputs, still held, count in main afterwards
        with ctx.memory.within("eager"), torch.no_grad():
            out = model(*inputs)
            torch.cuda.synchronize()
    except (Exception, SystemExit) as e:  # user code may call sys.exit
        raise wrap("model_raises", "the eager forward raised", e)
    if problem.verify_inputs():
        problem.mutates_inputs = True
    if problem.changed_state():   # the model's own writes (a running statistic): not checked later
        problem.mutates_state = True

    ctx.problem = problem
    params = list(model.parameters())
    buffers = list(model.buffers())
    outs = flatten(out)
    return {
        "inputs": [meta(x) for x in inputs],
        "n_params": int(sum(p.numel() for p in params)),
        "param_bytes": int(sum(p.numel() * p.element_size() for p in params)),
        "buffer_bytes": int(sum(b.numel() * b.element_size() for b in buffers)),
        "input_bytes": nbytes(inputs),
        "output_bytes": nbytes(outs),
        "mutates_inputs": problem.mutates_inputs,
        "outputs": [meta(x) for x in outs],
    }
