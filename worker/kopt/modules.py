"""Inductor output modules and their saved arguments, loaded once and reused.

An output module (graph<i>.py written by `compile`, or a candidate/instrumented module the core
emitted) is imported with importlib.util.spec_from_file_location under a unique module name;
importing it compiles its Triton kernels (async_compile.wait at its end). Modules are cached by
(path, sha1 of the file's bytes), so a file the core rewrites in place is imported again.

An arguments file (graph<i>.args.pt) holds the list `call()` received, saved with torch.save,
with None in place of every argument that is a parameter, buffer or forward input of the model
(those are not saved: they can be multi-GB). Its sidecar graph<i>.args.json ({"sources": [...]},
compile's arg_sources) says where each comes from, and `args(path)` rebuilds the list with the
loaded problem's own tensors: parameters and buffers of the model, the inputs drawn at `load`
(or, with a seed, freshly drawn ones), constants as saved. Nothing is cloned: every tensor is
held once, shared by all runs. An args file without a sidecar (an older layout, or a list saved
by a test) is used as saved and cloned before each run.

Modules that write to their arguments. Running a module on shared arguments is safe only when
it leaves them unchanged. `call_module` checksums the arguments around a module's first run
(kopt.compare.checksum, a pass over each storage): an argument that changed is restored (forward
inputs are drawn again under the same seed and copied back in place; a parameter or buffer
cannot be, and that is a `state_changed` error that makes the core restart the worker) and
recorded, and every later run of that module gets private clones of exactly those arguments.

Graph constants. Inductor hands an output module its constants (graph.constants: tensors the
graph created, e.g. `_tensor_constant0`) as module attributes, not as call() arguments. When a
graph had any, `compile` saves them next to the args as graph<i>.attrs.pt (a dict name -> value),
and `attrs_for(args_path)` finds that file (same stem as the args file, ".attrs.pt") so the
module's globals can be set before call(). Most graphs have none.
"""

import collections
import hashlib
import itertools
import os
import pickle
import sys
import importlib.util

import json

import torch

from kopt.compare import checksums
from kopt.errors import OpError, wrap
from kopt.tensors import clone_tensor, storage

_counter = itertools.count()
MAX_MODULES = 64
MAX_ARGS = 4


def attrs_path_for(args_path):
    """graph0.args.pt -> graph0.attrs.pt (the constants file, if the graph had constants)."""
    if args_path.endswith(".args.pt"):
        return args_path[: -len(".args.pt")] + ".attrs.pt"
    return os.path.splitext(args_path)[0] + ".attrs.pt"


def sidecar_path(args_path):
    """graph0.args.pt -> graph0.args.json (the argument sources)."""
    return (args_path[:-3] if args_path.endswith(".pt") else args_path) + ".json"


def rebuild(problem, saved, sources, seed=None, transform=None):
    """call() arguments from `sources`: "param:<name>" and "buffer:<name>" are the model's,
    "input:<k>" the k-th forward input (the loaded ones, or drawn under `seed`), anything else
    the saved value. A source that names nothing the model has is an error (not a silent
    fall-back to a saved placeholder)."""
    inputs = problem.inputs if seed is None else problem.draw_inputs(seed)
    if seed is not None and transform is not None:
        inputs = transform(inputs)
    params = dict(problem.model.named_parameters())
    buffers = dict(problem.model.named_buffers())
    out = []
    for k, (a, src) in enumerate(zip(saved, sources)):
        kind, _, name = str(src).partition(":")
        if kind == "param" and name in params:
            out.append(params[name].detach())
        elif kind == "buffer" and name in buffers:
            out.append(buffers[name])
        elif kind == "input" and name.isdigit() and int(name) < len(inputs):
            out.append(inputs[int(name)])
        elif kind in ("param", "buffer", "input") or a is None:
            raise OpError("module_failed", "call() argument %d comes from %s, which the loaded "
                          "model does not have" % (k, src))
        else:
            out.append(a)
    return out


def restore_args(ctx, args, changed):
    """Undo a module's writes to shared arguments `changed` (indices into args): the loaded
    forward inputs are redrawn (same seed) and copied back in place; freshly drawn inputs are
    private to the run (nothing to undo); saved constants are reloaded on next use; a parameter
    or buffer cannot be restored here (state_changed, fatal: the core restarts the worker)."""
    problem = ctx.problem
    inputs = {id(t): j for j, t in enumerate(problem.inputs)} if problem is not None else {}
    fresh = None
    for k in changed:
        t = args[k]
        if id(t) in inputs:
            if fresh is None:
                fresh = problem.draw_inputs(problem.seed)
            t.copy_(fresh[inputs[id(t)]])
        elif _is_model_state(t, problem):
            raise OpError("state_changed", "an output module wrote to call() argument %d, a "
                          "parameter or buffer of the model; the worker restarts to restore it"
                          % k, fatal=True)
        else:
            cache(ctx)._args.clear()   # a saved constant: reloaded from its file
    if fresh is not None:
        torch.cuda.synchronize()


def _is_model_state(t, problem):
    """Whether t shares storage with a parameter or buffer of the loaded model."""
    if problem is None or not isinstance(t, torch.Tensor):
        return False
    ptr = storage(t).data_ptr()
    return any(storage(x).data_ptr() == ptr for _, x in problem.state)


def _torch_load(path):
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError:
        return torch.load(path, weights_only=False)


class ModuleCache:
    def __init__(self):
        self._mods = collections.OrderedDict()   # (path, sha1) -> module
        self._args = collections.OrderedDict()   # (path, mtime_ns, size) -> list
        self._attrs = collections.OrderedDict()  # (path, mtime_ns, size) -> dict
        self._mutates = {}   # (module path, id) -> indices of arguments its call() writes

    def clear(self):
        for m in self._mods.values():
            sys.modules.pop(m.__name__, None)
        self._mods.clear()
        self._args.clear()
        self._attrs.clear()
        self._mutates.clear()

    def module(self, path):
        """The imported output module at `path` (must define call)."""
        path = os.path.abspath(path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise OpError("file_not_found", "output module not found: %s" % path)
        except OSError as e:
            raise wrap("file_not_found", "cannot read output module %s" % path, e)
        key = (path, hashlib.sha1(data).hexdigest())
        mod = self._mods.get(key)
        if mod is not None:
            self._mods.move_to_end(key)
            return mod
        try:
            compile(data, path, "exec")
        except (SyntaxError, ValueError) as e:
            raise wrap("module_failed", "output module does not parse", e)
        name = "kopt_output_%d_%s" % (next(_counter),
                                      "".join(c if c.isalnum() else "_"
                                              for c in os.path.basename(path)[:-3] or "mod"))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise OpError("module_failed", "cannot import %s (not a .py file?)" % path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException as e:
            sys.modules.pop(name, None)
            if isinstance(e, KeyboardInterrupt):
                raise
            raise wrap("module_failed", "importing output module %s raised"
                       % os.path.basename(path), e)
        if not callable(getattr(mod, "call", None)):
            sys.modules.pop(name, None)
            raise OpError("module_failed", "output module %s has no call()" % path)
        self._mods[key] = mod
        while len(self._mods) > MAX_MODULES:
            _, old = self._mods.popitem(last=False)
            sys.modules.pop(old.__name__, None)
        return mod

    def saved_args(self, path):
        """(saved list, sources or None) of the args file at `path` (loaded once per version)."""
        path = os.path.abspath(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise OpError("file_not_found", "args file not found: %s" % path)
        key = (path, st.st_mtime_ns, st.st_size)
        hit = self._args.get(key)
        if hit is not None:
            self._args.move_to_end(key)
            return hit
        try:
            args = _torch_load(path)
        except Exception as e:
            raise wrap("module_failed", "loading args file %s raised" % path, e)
        if not isinstance(args, (list, tuple)):
            raise OpError("module_failed", "args file %s holds %s, expected a list"
                          % (path, type(args).__name__))
        args = [a.cuda() if isinstance(a, torch.Tensor) and a.device.type != "cuda"
                and torch.cuda.is_available() else a for a in args]
        sources = None
        side = sidecar_path(path)
        if os.path.exists(side):
            try:
                with open(side, encoding="utf-8") as f:
                    sources = json.load(f).get("sources")
            except (OSError, ValueError) as e:
                raise wrap("module_failed", "reading %s raised" % side, e)
            if not isinstance(sources, list) or len(sources) != len(args):
                raise OpError("module_failed", "%s: 'sources' must list one entry per argument "
                              "of %s" % (side, path))
        hit = (list(args), sources)
        self._args[key] = hit
        while len(self._args) > MAX_ARGS:
            self._args.popitem(last=False)
        return hit

    def args(self, path, problem=None, seed=None, transform=None):
        """The call() arguments of the args file at `path` (a list: never hand it to call()
        itself, call_module copies it): rebuilt from the sources on the loaded problem's
        tensors, with inputs drawn under `seed` when given (see the module docstring)."""
        saved, sources = self.saved_args(path)
        if sources is None:
            return list(saved)
        if problem is None:
            raise OpError("not_loaded", "no problem is loaded: send 'load' first")
        return rebuild(problem, saved, sources, seed, transform)

    def shared(self, path):
        """True when args(path) hands out the problem's own tensors (no private copies)."""
        return self.saved_args(path)[1] is not None

    def call_module(self, ctx, mpath, mod, args, shared=True):
        """mod.call on a copy of the list `args` (see "Modules that write to their arguments");
        unshared lists (older args files) are cloned whole."""
        from kopt.tensors import clone_args
        if not shared:
            return mod.call(clone_args(args))
        key = (os.path.abspath(mpath), id(mod))
        changed = self._mutates.get(key)
        if changed is None:
            before = checksums(args)
            out = mod.call(list(args))
            torch.cuda.synchronize()
            after = checksums(args)
            changed = [k for k, (b, a) in enumerate(zip(before, after)) if b != a]
            self._mutates[key] = changed
            if changed:
                restore_args(ctx, args, changed)
            return out
        if changed:
            p = list(args)
            for k in changed:
                p[k] = clone_tensor(p[k])
            return mod.call(p)
        return mod.call(list(args))

    def attrs_for(self, args_path):
        """The graph constants saved beside `args_path` (a dict), or {} when there are none."""
        path = attrs_path_for(os.path.abspath(args_path))
        try:
            st = os.stat(path)
        except OSError:
            return {}
        key = (path, st.st_mtime_ns, st.st_size)
        attrs = self._attrs.get(key)
        if attrs is None:
            try:
                attrs = _torch_load(path)
            except Exception as e:
                raise wrap("module_failed", "loading constants file %s raised" % path, e)
            if not isinstance(attrs, dict):
                raise OpError("module_failed", "constants file %s holds %s, expected a dict"
                              % (path, type(attrs).__name__))
            self._attrs[key] = attrs
            while len(self._attrs) > MAX_ARGS:
                self._attrs.popitem(last=False)
        return attrs

    def prepared(self, module_path, args_path, problem=None, seed=None, transform=None):
        """(module, args) for a module target: module imported, args built (fresh inputs under
        `seed`, passed through `transform` when given), constants set."""
        mod = self.module(module_path)
        args = self.args(args_path, problem, seed, transform)
        for k, v in self.attrs_for(args_path).items():
            setattr(mod, k, v)
        return mod, args


def cache(ctx):
    if ctx.modules is None:
        ctx.modules = ModuleCache()
    return ctx.modules
