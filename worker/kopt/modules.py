"""Inductor output modules and their saved arguments, loaded once and reused.

An output module (graph<i>.py written by `compile`, or a candidate/instrumented module the core
emitted) is imported with importlib.util.spec_from_file_location under a unique module name;
importing it compiles its Triton kernels (async_compile.wait at its end). Modules are cached by
(path, sha1 of the file's bytes), so a file the core rewrites in place is imported again.

An arguments file (graph<i>.args.pt) is the list `call()` received, saved with torch.save; it is
loaded once per (path, mtime, size) onto the devices it was saved from, and callers clone it
before each run (kopt.tensors.clone_args) because call() frees and may mutate its arguments.
torch.load uses weights_only=True (a list of tensors and ints loads that way), and falls back
to weights_only=False only if that refuses the file.

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

import torch

from kopt.errors import OpError, wrap

_counter = itertools.count()
MAX_MODULES = 64
MAX_ARGS = 4


def attrs_path_for(args_path):
    """graph0.args.pt -> graph0.attrs.pt (the constants file, if the graph had constants)."""
    if args_path.endswith(".args.pt"):
        return args_path[: -len(".args.pt")] + ".attrs.pt"
    return os.path.splitext(args_path)[0] + ".attrs.pt"


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

    def clear(self):
        for m in self._mods.values():
            sys.modules.pop(m.__name__, None)
        self._mods.clear()
        self._args.clear()
        self._attrs.clear()

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

    def args(self, path):
        """The saved call() arguments at `path` (a list; never hand it to call() uncloned)."""
        path = os.path.abspath(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise OpError("file_not_found", "args file not found: %s" % path)
        key = (path, st.st_mtime_ns, st.st_size)
        args = self._args.get(key)
        if args is not None:
            self._args.move_to_end(key)
            return args
        try:
            args = _torch_load(path)
        except Exception as e:
            raise wrap("module_failed", "loading args file %s raised" % path, e)
        if not isinstance(args, (list, tuple)):
            raise OpError("module_failed", "args file %s holds %s, expected a list"
                          % (path, type(args).__name__))
        args = list(args)
        self._args[key] = args
        while len(self._args) > MAX_ARGS:
            self._args.popitem(last=False)
        return args

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

    def prepared(self, module_path, args_path):
        """(module, args) for a module target: module imported, args loaded, constants set."""
        mod = self.module(module_path)
        args = self.args(args_path)
        for k, v in self.attrs_for(args_path).items():
            setattr(mod, k, v)
        return mod, args


def cache(ctx):
    if ctx.modules is None:
        ctx.modules = ModuleCache()
    return ctx.modules
