"""`compile`: torch.compile the loaded model, and capture each graph's output module and the
real arguments its call() received.

How the capture works (torch 2.11 internals; the names are listed in worker/README.md):

1. Hook. For the duration of the op, torch._inductor.codecache.PyCodeCache.load_by_key_path
   (the classmethod through which Inductor loads every output module it generates, both on a
   fresh compile — GraphLowering._compile_to_module_lines — and when a cached graph is
   re-loaded — CompiledFxGraph.after_deserialization) is replaced by a wrapper. After the real
   loader returns a module that has a `call`, the wrapper replaces `mod.call` with a recorder
   (once per module object). Inductor reads `compiled_module.call` *after* loading, so the
   recorder is what the compiled model ends up calling. Whenever recording is switched on, the
   recorder stores, on the first call of each module, a copy of its argument list made BEFORE
   calling the original (call() empties the list with args.clear() and may update arguments in
   place). Arguments that are the model's parameters or buffers or the forward's inputs (matched
   by data pointer, size and stride: arg_sources) are not copied -- they can be multi-GB and are
   rebuilt from the model on every later run (kopt.modules); any other tensor is cloned exactly
   (kopt.tensors.clone_tensor), other items are kept as they are. It also keeps the `attrs`
   (graph constants) the loader set on the module.

2. Phase 1: torch._inductor.utils.run_and_get_code(compiled, *inputs) under no_grad, with
   torch._inductor.config.fx_graph_cache=False (and AOTAutograd's cache off) so every graph is
   really generated and loaded. It returns the source text of every module Inductor generated.
   Recording is OFF here: in max-autotune mode Inductor also generates, loads and calls
   benchmark modules (autotuning subgraphs), which are not graphs of the model.

3. Phase 2: the compiled model is run once more on fresh clones of the inputs, with recording
   ON. Nothing compiles now (same inputs, guards hold), so the modules whose call() runs are
   exactly the model's graphs, in execution order: graph i is the i-th distinct module called.

4. Matching. Each recorded module's text is read from its __file__ (PyCodeCache writes the
   source there; that text is what ran and what graph<i>.py receives). It normally equals —
   up to leading/trailing whitespace, which is all PyCodeCache's content hash ignores — one
   of phase 1's sources; one that does not (the capture run recompiled: a guard failed) is
   logged and kept. Phase 1 sources that no recorded module matches are logged (autotuning
   benchmark modules). run_and_get_code de-duplicates identical texts; two graphs with the
   same text are still two module objects, so they stay two graphs with their own arguments.

Capture failure is an error (code internal), never wrong data:
  * run_and_get_code returned sources but no recorded call happened (the hook never fired, or
    the loader path changed in this torch version);
  * a source returned by run_and_get_code was never seen by the hook (a module loaded by some
    other path: a graph might be missing);
  * a recorded module's file cannot be read.
A model that compiles to zero graphs (no source, no call) returns graphs: [].

Outputs: out_dir/graph<i>.py (the module text), out_dir/graph<i>.args.pt (torch.save of the
argument list with None for every argument that has a source: only constants are saved, so
the file is small whatever the model's size), out_dir/graph<i>.args.json ({"sources": [...]}),
and, only when the graph had constants, out_dir/graph<i>.attrs.pt.

Memory. Both phases run on the loaded inputs themselves (clones only when the model writes to
its inputs). Phase 2 measures what the compiled model allocates beyond what is already resident
(outputs and intermediates: `run_bytes`); with the loaded inputs, parameters and buffers that is
the model's working set, which the result reports (`working_set`) and the core's memory limits
are measured against.
The phase-1 compiled object is kept in ctx.compiled[mode] for `run`/`time`; run_and_get_code
calls torch._dynamo.reset(), so other modes' compiled objects are dropped (they would recompile).
"""

import contextlib
import importlib
import os
import time

import torch

import json

from kopt.errors import OpError, BadRequest, wrap, exc_message
from kopt.memory import nbytes
from kopt.modules import sidecar_path
from kopt.problem import require_problem
from kopt.protocol import get_arg
from kopt.tensors import clone_args, clone_tensor

MODES = ("default", "max-autotune-no-cudagraphs")

# The recorder that call() wrappers report to while a `compile` is capturing (else None).
_ACTIVE = None


def check_mode(mode):
    if mode not in MODES:
        raise BadRequest("mode must be one of %s, got '%s'" % (", ".join(MODES), mode))
    return mode


def compile_model(model, mode):
    """torch.compile(model) — default mode passes no mode argument."""
    if mode == "default":
        return torch.compile(model)
    return torch.compile(model, mode=mode)


class _Recorder:
    def __init__(self):
        self.active = False
        self.loaded = []      # __file__ of every module the hook saw loaded, in load order
        self.attrs = {}       # id(module) -> dict of attrs the loader set on it
        self.calls = []       # (module, args: sourced ones None, others copied) per module
        self.ptrs = []        # per call: [(data_ptr, size, stride) or None] of the original args
        self.known = {}       # (data_ptr, size, stride) -> source, for arguments not copied
        self._called = set()  # id(module)

    def on_load(self, mod, attrs):
        self.loaded.append(getattr(mod, "__file__", None))
        if not callable(getattr(mod, "call", None)):
            return  # a kernel module (autotuning templates ...), not an output module
        self.attrs[id(mod)] = dict(attrs) if attrs else {}
        if getattr(mod.call, "_kopt_recorder", False):
            return  # already wrapped (PyCodeCache handed back a module it had cached)
        original = mod.call

        def call(args):
            rec = _ACTIVE
            if rec is not None and rec.active and id(mod) not in rec._called:
                rec._called.add(id(mod))
                idents = [_ident(a) for a in args]
                memo = {}
                rec.calls.append((mod, [None if (i is not None and i in rec.known)
                                        else (clone_tensor(a, memo) if isinstance(a, torch.Tensor) else a)
                                        for a, i in zip(args, idents)]))
                rec.ptrs.append(idents)
            return original(args)

        call._kopt_recorder = True
        mod.call = call


def _ident(a):
    """What identifies a call() argument's origin: its data pointer, size and stride."""
    if isinstance(a, torch.Tensor):
        return (a.data_ptr(), tuple(a.size()), tuple(a.stride()))
    return None


def known_sources(problem, inputs):
    """{(data_ptr, size, stride): source} of the model's parameters ("param:<name>"), buffers
    ("buffer:<name>") and the forward inputs ("input:<k>"). Matching is by data pointer, size
    and stride, so only the very tensor (not a view of it) counts."""
    known = {}
    for name, t in problem.model.named_parameters():
        known.setdefault(_ident(t), "param:" + name)
    for name, t in problem.model.named_buffers():
        known.setdefault(_ident(t), "buffer:" + name)
    for k, t in enumerate(inputs):
        if isinstance(t, torch.Tensor):
            known.setdefault(_ident(t), "input:%d" % k)
    return known


def arg_sources(known, idents):
    """Where each call() argument came from, so a later run can rebuild the arguments with the
    model's real weights and fresh inputs: a known source, or "const" (kept as saved)."""
    return [known.get(i, "const") if i is not None else "const" for i in idents]


@contextlib.contextmanager
def _hooked_loader(recorder):
    """Wrap PyCodeCache.load_by_key_path so that every loaded module reaches recorder.on_load."""
    global _ACTIVE
    from torch._inductor.codecache import PyCodeCache

    name = "load_by_key_path"
    if not hasattr(PyCodeCache, name):
        raise OpError("internal", "capture failed: torch._inductor.codecache.PyCodeCache has no "
                      "%s in torch %s; the compile capture needs updating" % (name, torch.__version__))
    own = name in PyCodeCache.__dict__
    saved = PyCodeCache.__dict__.get(name)
    original = getattr(PyCodeCache, name)  # bound to the class

    def load_by_key_path(cls, *args, **kwargs):
        mod = original(*args, **kwargs)
        try:
            attrs = kwargs.get("attrs", args[3] if len(args) > 3 else None)
            recorder.on_load(mod, attrs)
        except Exception as e:  # the hook must never break compilation
            print("kopt worker: capture hook failed: %s" % exc_message(e))
        return mod

    setattr(PyCodeCache, name, classmethod(load_by_key_path))
    _ACTIVE = recorder
    try:
        yield
    finally:
        _ACTIVE = None
        if own:
            setattr(PyCodeCache, name, saved)
        else:
            delattr(PyCodeCache, name)


@contextlib.contextmanager
def _fresh_compile():
    """Inductor's FX graph cache and AOTAutograd's cache off: every graph is generated and
    loaded for real (the persistent autotuning results in the private cache stay usable)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch._inductor.config.patch(fx_graph_cache=False))
        try:
            fconf = importlib.import_module("torch._functorch.config")
        except ImportError:
            fconf = None
        if fconf is not None and hasattr(fconf, "enable_autograd_cache"):
            stack.enter_context(fconf.patch(enable_autograd_cache=False))
        yield


def _saveable(attrs):
    """The graph constants torch.save can store and torch.load(weights_only) read back:
    tensors and plain numbers. Returns (kept dict, names skipped)."""
    kept, skipped = {}, []
    for k, v in attrs.items():
        if isinstance(v, torch.Tensor) or (isinstance(v, (int, float, bool)) or v is None):
            kept[k] = v
        else:
            skipped.append(str(k))
    return kept, skipped


def _read(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def op_compile(ctx, req):
    import torch._inductor.config  # noqa: F401
    import torch._inductor.utils

    problem = require_problem(ctx)
    mode = check_mode(get_arg(req, "mode", str, "default"))
    out_dir = os.path.abspath(get_arg(req, "out_dir", str))
    os.makedirs(out_dir, exist_ok=True)

    ctx.compiled = {}  # run_and_get_code resets dynamo: all compiled objects go stale
    recorder = _Recorder()
    ctx.log("compile: torch.compile mode=%s" % mode)
    def inputs():
        return clone_args(problem.inputs) if problem.mutates_inputs else list(problem.inputs)

    with _hooked_loader(recorder), _fresh_compile(), torch.no_grad():
        # Phase 1: compile and run once; collect the sources.
        try:
            compiled = compile_model(problem.model, mode)
            t0 = time.perf_counter()
            out, sources = torch._inductor.utils.run_and_get_code(compiled, *inputs())
            del out
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap("compile_failed", "torch.compile (mode %s) raised" % mode, e)
        ctx.log("compile: %d source(s) in %.1f s; capturing call() arguments"
                % (len(sources), compile_s))
        # Phase 2: run again with recording on, measuring what the run allocates.
        capture_inputs = inputs()
        recorder.known = known_sources(problem, capture_inputs)
        recorder.active = True
        try:
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            ctx.memory.fold()
            torch.cuda.reset_peak_memory_stats()
            out = compiled(*capture_inputs)
            torch.cuda.synchronize()
            run_bytes = max(0, int(torch.cuda.max_memory_allocated()) - int(base))
            del out
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap("compile_failed", "the compiled model raised on its capture run", e)
        finally:
            recorder.active = False
    ctx.run_need = max(ctx.run_need, run_bytes)
    ctx.compiled[mode] = compiled

    # Checks and matching (see the module docstring).
    if sources and not recorder.calls:
        raise OpError("internal", "capture failed: run_and_get_code returned %d output module(s) "
                      "but no call() of a loaded output module was observed (%d module(s) seen "
                      "by the PyCodeCache.load_by_key_path hook)"
                      % (len(sources), len(recorder.loaded)))
    loaded_texts = set()
    for path in set(recorder.loaded):
        try:
            loaded_texts.add(_read(path).strip())
        except Exception:
            pass
    for k, src in enumerate(sources):
        if src.strip() not in loaded_texts:
            raise OpError("internal", "capture failed: output module %d of run_and_get_code was "
                          "not loaded through PyCodeCache.load_by_key_path; its call() arguments "
                          "cannot be captured" % k)

    graphs = []
    matched = set()
    for i, (mod, args) in enumerate(recorder.calls):
        path = getattr(mod, "__file__", None)
        try:
            text = _read(path)
        except Exception as e:
            raise wrap("internal", "capture failed: cannot read the source of graph %d (%s)"
                       % (i, path), e)
        hit = [k for k, s in enumerate(sources) if s.strip() == text.strip()]
        if hit:
            matched.update(hit)
        else:
            ctx.log("compile: graph %d (%s) ran but is not among run_and_get_code's sources "
                    "(recompiled on the capture run?); using the file that ran" % (i, path))
        mod_path = os.path.join(out_dir, "graph%d.py" % i)
        args_path = os.path.join(out_dir, "graph%d.args.pt" % i)
        with open(mod_path, "w", encoding="utf-8") as f:
            f.write(text)
        srcs = arg_sources(recorder.known, recorder.ptrs[i])
        torch.save(args, args_path)
        with open(sidecar_path(args_path), "w", encoding="utf-8") as f:
            json.dump({"sources": srcs}, f)
        entry = {"index": i, "module": mod_path, "args": args_path, "n_args": len(args),
                 "arg_sources": srcs, "saved_bytes": nbytes([a for a in args if a is not None])}
        attrs, skipped = _saveable(recorder.attrs.get(id(mod)) or {})
        if skipped:
            ctx.log("compile: graph %d: constants not saved (not tensors or numbers): %s"
                    % (i, ", ".join(skipped)))
        attrs_path = os.path.join(out_dir, "graph%d.attrs.pt" % i)
        if attrs:
            try:
                torch.save(attrs, attrs_path)
                entry["attrs"] = attrs_path
            except Exception as e:
                raise wrap("internal", "capture failed: cannot save the constants of graph %d"
                           % i, e)
        elif os.path.exists(attrs_path):
            os.remove(attrs_path)  # stale, from an earlier compile into the same directory
        graphs.append(entry)
    unmatched = len(sources) - len(matched)
    if unmatched > 0:
        ctx.log("compile: %d generated module(s) were not called by the model "
                "(autotuning benchmark modules)" % unmatched)
    params = list(problem.model.parameters())
    buffers = list(problem.model.buffers())
    ws = {"input_bytes": nbytes(problem.inputs), "param_bytes": nbytes(params),
          "buffer_bytes": nbytes(buffers), "run_bytes": run_bytes}
    ws["total_bytes"] = sum(ws.values())
    return {"compile_s": compile_s, "graphs": graphs, "working_set": ws}
