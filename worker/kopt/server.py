"""The request loop: read one request, run its op, write one response (PROTOCOL.md).

Rules kept here, for every op:
  * no exception ever escapes the loop; every request gets exactly one response line (a line
    that is not a JSON object gets a bad_request response with id null);
  * after an op, torch.cuda.synchronize() runs inside the op's error handling, so an
    asynchronous CUDA error surfaces in the response of the op that caused it;
  * an error whose cause is a CUDA error becomes code cuda_error with fatal:true and the worker
    exits with status 3 right after writing it (the context is unusable; the core restarts us);
  * an error whose cause is a CUDA out-of-memory becomes out_of_memory: references are
    dropped (kept outputs and captured launch arguments too), caches emptied, the worker stays
    up (the core redoes the step with low_memory);
  * a request's "phase" ("main", "eager", "f64", "ceilings") selects the memory phase its peak
    counts in (kopt.memory; "eager": the user's model run eagerly, `load` switches to it around
    its eager forward itself);
  * `shutdown` answers {} and exits 0; EOF on the protocol input exits 0.
Ops that need torch are imported lazily (their modules import torch), so the loop runs (ping,
shutdown, errors) in a Python without torch.
"""

import gc
import importlib
import json
import os
import sys
import traceback

from kopt.errors import OpError, classify, exc_message, exc_detail, one_line
from kopt.protocol import ChannelClosed

# op name -> (module, function); each function is fn(ctx, request_dict) -> result dict.
OPS = {
    "load": ("kopt.problem", "op_load"),
    "compile": ("kopt.capture", "op_compile"),
    "run": ("kopt.run", "op_run"),
    "time": ("kopt.timing", "op_time"),
    "profile": ("kopt.profile", "op_profile"),
    "ceilings": ("kopt.ceilings", "op_ceilings"),
    "capture_launch": ("kopt.isolate", "op_capture_launch"),
    "compile_candidate": ("kopt.isolate", "op_compile_candidate"),
    "isolate": ("kopt.isolate", "op_isolate"),
    "bench_kernels": ("kopt.isolate", "op_bench_kernels"),
    "compare": ("kopt.kept", "op_compare"),
    "drop": ("kopt.kept", "op_drop"),
    "resources": ("kopt.memory", "op_resources"),
    "limits": ("kopt.memory", "op_limits"),
}


class Context:
    """Everything the worker keeps between requests."""

    def __init__(self, channel, torch, import_error):
        self.channel = channel
        self.torch = torch              # the torch module, or None
        self.import_error = import_error
        self.problem = None             # kopt.problem.Problem after a successful `load`
        self.compiled = {}              # mode -> torch.compile'd model, reused by run/time
        self.model64 = None             # float64 deep copy of the eager model (run float64)
        self.modules = None             # kopt.modules.ModuleCache (output modules, args files)
        self.flush_buf = None           # persistent L2 flush buffer (kopt.timing)
        self.cycles_per_ms = None       # torch.cuda._sleep calibration (kopt.timing)
        self.kept = {}                  # name -> kopt.kept.Kept (outputs held between requests)
        self.run_need = 0               # bytes the largest run so far needed (kopt.kept)
        self.poison_turn = 0            # module runs poisoned so far (kopt.run: the kinds in turn)
        self.launches = None            # kopt.isolate.LaunchCache (captured launch arguments)
        self.memory = None              # kopt.memory.Memory (peaks per phase)
        if torch is not None:
            from kopt.memory import Memory
            self.memory = Memory()

    def log(self, message):
        """A progress event for the core (logged at debug level), and a line in the worker's
        stderr, which the core keeps as OUT/worker.log: what the memory cap degraded, where a
        run's memory went, stays readable after a bench run."""
        self.channel.log(message)
        try:
            sys.stderr.write("kopt worker: %s\n" % message)
            sys.stderr.flush()
        except (OSError, ValueError):   # a closed stderr: the event above still went out
            pass

    def reset_problem(self):
        """Forget the loaded problem and everything derived from it (before a new `load`)."""
        self.problem = None
        self.compiled = {}
        self.model64 = None
        self.kept = {}
        self.run_need = 0
        self.launches = None
        if self.modules is not None:
            self.modules.clear()
        torch = self.torch
        if torch is not None:
            try:
                torch._dynamo.reset()
            except Exception:
                pass
        gc.collect()
        self._empty_cache()

    def _empty_cache(self):
        torch = self.torch
        if torch is not None:
            try:
                if torch.cuda.is_initialized():
                    torch.cuda.empty_cache()
            except Exception:
                pass


def _ok(rid, result):
    return {"id": rid, "ok": True, "result": result if result is not None else {}}


def _err(rid, code, message, detail="", fatal=False):
    return {"id": rid, "ok": False,
            "error": {"code": code, "message": one_line(message), "detail": detail or "",
                      "fatal": bool(fatal)}}


def _sync(ctx):
    torch = ctx.torch
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def dispatch(ctx, line):
    """Handle one request line: returns (response dict, exit status or None)."""
    try:
        req = json.loads(line.decode("utf-8"))
    except Exception as e:
        return _err(None, "bad_request", "request is not a JSON line: %s" % exc_message(e)), None
    if not isinstance(req, dict):
        return _err(None, "bad_request", "request is not a JSON object"), None
    rid = req.get("id")
    op = req.get("op")
    if not isinstance(op, str):
        return _err(rid, "bad_request", "request has no string 'op'"), None
    if op == "ping":
        return _ok(rid, {}), None
    if op == "shutdown":
        return _ok(rid, {}), 0
    if op not in OPS:
        return _err(rid, "bad_request", "unknown op '%s'" % op), None
    if ctx.torch is None:
        return _err(rid, "internal",
                    "op '%s' needs torch, which this Python cannot import (%s)"
                    % (op, ctx.import_error)), None

    error = None
    try:
        if ctx.memory is not None:
            phase = req.get("phase", "main")
            ctx.memory.enter(phase if isinstance(phase, str) else "main")
            ctx.memory.begin_op(op)
        if ctx.problem is not None:
            ctx.problem.restore()   # loaded inputs displaced by a step that failed midway (kopt.problem)
        mod_name, fn_name = OPS[op]
        fn = getattr(importlib.import_module(mod_name), fn_name)
        result = fn(ctx, req)
        _sync(ctx)
        if ctx.memory is not None:
            rel = ctx.memory.end_op()
            if rel:
                ctx.log("memory: %s raised the stack limit to %d bytes a thread; set back, %.2f GB "
                        "of local memory freed" % (rel["op"], rel["stack_bytes"], rel["freed_bytes"] / 1e9))
        return _ok(rid, result), None
    except OpError as e:
        error = e
    except BaseException as e:  # noqa: B902 — user code may raise anything, even SystemExit
        if isinstance(e, KeyboardInterrupt):
            raise
        error = OpError("internal", exc_message(e), exc=e)
    return _handle_error(ctx, rid, error)


def _handle_error(ctx, rid, error):
    kind = classify(error.exc) if error.exc is not None else None
    if kind is None and error.code != "bad_request":
        # An op that failed for a Python reason may still have left an asynchronous CUDA
        # error behind (a kernel that faulted before the exception): surface it now.
        try:
            _sync(ctx)
        except BaseException as e2:
            if classify(e2) == "cuda_error":
                return (_err(rid, "cuda_error", exc_message(e2),
                             exc_detail(e2) + "\n(while reporting: %s)\n%s"
                             % (error.message, error.detail), fatal=True), 3)
    if kind == "cuda_error" or error.fatal:
        return _err(rid, "cuda_error", error.message, error.detail, fatal=True), 3
    if kind == "out_of_memory":
        resp = _err(rid, "out_of_memory", error.message, error.detail)
        # Drop the frames that hold tensors, then give the memory back.
        if error.exc is not None and error.exc.__traceback__ is not None:
            try:
                traceback.clear_frames(error.exc.__traceback__)
            except Exception:
                pass
        error.exc = None
        error = None
        ctx.kept = {}          # the core redoes the step (low_memory) from scratch
        ctx.launches = None
        gc.collect()
        ctx._empty_cache()
        return resp, None
    return _err(rid, error.code, error.message, error.detail, error.fatal), None


def serve(ctx, cleanup):
    """The main loop. `cleanup()` runs before the process exits (any exit path)."""
    status = 0
    try:
        while True:
            line = ctx.channel.read_line()
            if line is None:                  # EOF: the core is done with us
                status = 0
                break
            if not line.strip():              # blank lines carry no request
                continue
            try:
                resp, status = dispatch(ctx, line)
            except BaseException as e:        # a bug in dispatch itself: still answer
                if isinstance(e, KeyboardInterrupt):
                    raise
                resp, status = _err(None, "internal", exc_message(e), exc_detail(e)), None
            ctx.channel.write(resp)
            if status is not None:
                break
    except ChannelClosed:
        status = 0
    except KeyboardInterrupt:
        status = 130
    _exit(status, cleanup)


def _exit(status, cleanup):
    """Exit without running interpreter teardown (which can hang on compile-worker pools or a
    broken CUDA context)."""
    try:
        cleanup()
    except Exception:
        pass
    try:
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(status)
