"""The runnable targets of `run` and `time` (PROTOCOL.md, `run`):

  {"kind":"eager"}                          the eager model on the loaded inputs
  {"kind":"compiled","mode":"default"}      torch.compile'd model (one compiled object per mode,
                                            made on first use and kept in ctx.compiled)
  {"kind":"module","module":P,"args":A}     an output module's call() on saved arguments

A Target splits a run in two so timing can keep preparation out of the timed region:
  prepare()  fresh exact clones of the arguments (in-place kernels or models cannot leak state
             between runs, and call() frees the list it is given);
  run(p)     the run itself on a prepared argument list; failures become the target's error
             code (model_raises / compile_failed / module_failed; CUDA errors and OOMs are
             reclassified by the server).
Callers run targets under torch.no_grad().
"""

import copy

import torch

from kopt.capture import check_mode, compile_model
from kopt.errors import OpError, BadRequest, wrap
from kopt.modules import cache
from kopt.problem import require_problem
from kopt.tensors import clone_args


class Target:
    def __init__(self, label, fn, args, fail_code, fail_what):
        self.label = label
        self._fn = fn
        self._args = args
        self.fail_code = fail_code
        self._fail_what = fail_what

    def prepare(self):
        return clone_args(self._args)

    def run(self, prepared):
        try:
            return self._fn(prepared)
        except OpError:
            raise
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap(self.fail_code, self._fail_what, e)


def _double(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    return x


def rebuild_args(ctx, saved, sources, seed):
    """call() arguments for fresh inputs: `sources` (from `compile`'s arg_sources) says, per
    argument, whether it is a parameter or buffer of the model (its real weights are used), a
    forward input (taken from get_inputs() under `seed`) or a constant (kept as saved)."""
    problem = require_problem(ctx)
    if not isinstance(sources, list) or len(sources) != len(saved):
        raise BadRequest("module target: 'sources' must list one source per saved argument")
    inputs = problem.draw_inputs(seed)
    params = dict(problem.model.named_parameters())
    buffers = dict(problem.model.named_buffers())
    out = []
    for a, src in zip(saved, sources):
        kind, _, name = str(src).partition(":")
        if kind == "param" and name in params:
            out.append(params[name].detach())
        elif kind == "buffer" and name in buffers:
            out.append(buffers[name])
        elif kind == "input" and name.isdigit() and int(name) < len(inputs):
            out.append(inputs[int(name)])
        else:
            out.append(a)
    return out


def make_target(ctx, spec, seed=None, float64=False):
    """A Target for the JSON target `spec` (validated here: bad specs are bad_request)."""
    if not isinstance(spec, dict):
        raise BadRequest("target must be an object with a 'kind'")
    kind = spec.get("kind")
    if float64 and kind != "eager":
        raise BadRequest("float64 applies to eager targets only")

    if kind == "eager":
        problem = require_problem(ctx)
        inputs = problem.inputs if seed is None else problem.draw_inputs(seed)
        model = problem.model
        if float64:
            if ctx.model64 is None:
                ctx.model64 = copy.deepcopy(problem.model).double().eval()
            model = ctx.model64
            inputs = [_double(x) for x in inputs]
        return Target("eager" + ("-float64" if float64 else ""),
                      lambda p: model(*p), inputs, "model_raises", "the eager model raised")

    if kind == "compiled":
        problem = require_problem(ctx)
        mode = spec.get("mode", "default")
        if not isinstance(mode, str):
            raise BadRequest("compiled target: 'mode' must be a string")
        check_mode(mode)
        inputs = problem.inputs if seed is None else problem.draw_inputs(seed)
        compiled = ctx.compiled.get(mode)
        if compiled is None:
            try:
                compiled = compile_model(problem.model, mode)
            except (Exception, SystemExit) as e:  # user code may call sys.exit
                raise wrap("compile_failed", "torch.compile (mode %s) raised" % mode, e)
            ctx.compiled[mode] = compiled
        # The first call compiles (dynamo is lazy): failures then are compile_failed too.
        return Target("compiled:" + mode, lambda p: compiled(*p), inputs, "compile_failed",
                      "the compiled model (mode %s) raised" % mode)

    if kind == "module":
        mpath, apath = spec.get("module"), spec.get("args")
        if not isinstance(mpath, str) or not isinstance(apath, str):
            raise BadRequest("module target needs string 'module' and 'args' paths")
        mod, args = cache(ctx).prepared(mpath, apath)
        sources = spec.get("sources")
        if seed is not None and sources is not None:
            args = rebuild_args(ctx, args, sources, seed)
        return Target("module:" + mpath, lambda p: mod.call(p), args, "module_failed",
                      "call() of %s raised" % mpath)

    raise BadRequest("unknown target kind %r (eager, compiled, module)" % (kind,))
