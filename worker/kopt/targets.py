"""The runnable targets of `run` and `time` (PROTOCOL.md, `run`):

  {"kind":"eager"}                          the eager model on the loaded inputs
  {"kind":"compiled","mode":"default"}      torch.compile'd model (one compiled object per mode,
                                            made on first use and kept in ctx.compiled)
  {"kind":"module","module":P,"args":A}     an output module's call() on the arguments of the
                                            args file A (kopt.modules: the problem's own tensors)

A Target splits a run in two so timing can keep preparation out of the timed region:
  prepare()  the argument list of one run. Nothing is copied: tensors are the loaded (or, with a
             seed, freshly drawn) inputs and the model's own weights, held once. Only a model
             that writes to its inputs (load's mutates_inputs) gets fresh clones per run; a
             module's own writes are handled by ModuleCache.call_module;
  run(p)     the run itself; failures become the target's error code (model_raises /
             compile_failed / module_failed; CUDA errors and OOMs are reclassified by the server);
  arguments(p)  the tensors a run reads (for input checksums);
  release()  drops what the target built for itself (the float64 model copy).
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
    def __init__(self, label, fn, args, fail_code, fail_what, clone=False, release=None):
        self.label = label
        self._fn = fn
        self._args = args
        self.fail_code = fail_code
        self._fail_what = fail_what
        self._clone = clone
        self._release = release

    def prepare(self):
        return clone_args(self._args) if self._clone else list(self._args)

    def arguments(self, prepared):
        return prepared

    def run(self, prepared):
        try:
            return self._fn(prepared)
        except OpError:
            raise
        except (Exception, SystemExit) as e:  # user code may call sys.exit
            raise wrap(self.fail_code, self._fail_what, e)

    def release(self):
        if self._release is not None:
            self._release()


def _double(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    return x


TRANSFORMS = ("scale", "shift", "const_rows", "negative", "nan", "inf")


def check_transform(t):
    """A validated input transform {"kind": scale|shift|const_rows|negative|nan|inf, "value": number}
    or None (nan and inf take a period: a whole number >= 3)."""
    if t is None:
        return None
    if not isinstance(t, dict) or t.get("kind") not in TRANSFORMS:
        raise BadRequest("transform must be {kind: %s, value}" % "|".join(TRANSFORMS))
    v = t.get("value", 0)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadRequest("transform value must be a number")
    if t["kind"] in ("nan", "inf") and (int(v) != v or v < 3):
        raise BadRequest("the nan and inf transforms take a period, a whole number >= 3")
    return t


def transformed(inputs, t):
    """Adversarial inputs (gate 3): every floating tensor of `inputs` (new tensors; integer and
    bool inputs are indices and masks, kept) scaled by value, shifted by value, made constant
    along its last dimension (every row equal to its first element), or made negative, every
    element at most -value (-(|x| + value): a max or min started at 0 instead of -inf / +inf is
    wrong there), or given non-finite elements at fixed positions of their storage order: NaN at
    every value-th element (index % value == value // 2), or +inf and -inf at every value-th
    (index % value == value // 3 and == 2 * value // 3) -- where the reference propagates them,
    a reduction that drops a NaN (an argmax, a max pool that skips it) or turns inf into NaN is
    wrong there and nowhere else."""
    if t is None:
        return inputs
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            if t["kind"] == "scale":
                x = x * t["value"]
            elif t["kind"] == "shift":
                x = x + t["value"]
            elif t["kind"] == "negative":
                x = -(x.abs() + t["value"])
            elif t["kind"] in ("nan", "inf"):
                p = int(t["value"])
                x = x.contiguous().clone()
                flat = x.view(-1)
                if t["kind"] == "nan":
                    flat[p // 2::p] = float("nan")
                else:
                    flat[p // 3::p] = float("inf")
                    flat[2 * p // 3::p] = float("-inf")
            elif x.dim() > 0:
                x = x[..., :1].expand_as(x).contiguous()
        out.append(x)
    return out


def make_target(ctx, spec, seed=None, float64=False, transform=None):
    """A Target for the JSON target `spec` (validated here: bad specs are bad_request). With a
    `transform`, the inputs (drawn under `seed`, which it requires) are transformed()."""
    if not isinstance(spec, dict):
        raise BadRequest("target must be an object with a 'kind'")
    kind = spec.get("kind")
    if float64 and kind != "eager":
        raise BadRequest("float64 applies to eager targets only")
    if transform is not None and seed is None:
        raise BadRequest("a transform needs a seed (it applies to freshly drawn inputs)")

    if kind == "eager":
        problem = require_problem(ctx)
        inputs = problem.inputs if seed is None else transformed(problem.draw_inputs(seed), transform)
        model = problem.model
        release = None
        if float64:
            model = copy.deepcopy(problem.model).double().eval()
            inputs = [_double(x) for x in inputs]

            def release():
                ctx.model64 = None
                torch.cuda.empty_cache()
            ctx.model64 = model
        return Target("eager" + ("-float64" if float64 else ""),
                      lambda p: model(*p), inputs, "model_raises", "the eager model raised",
                      clone=problem.mutates_inputs, release=release)

    if kind == "compiled":
        problem = require_problem(ctx)
        mode = spec.get("mode", "default")
        if not isinstance(mode, str):
            raise BadRequest("compiled target: 'mode' must be a string")
        check_mode(mode)
        inputs = problem.inputs if seed is None else transformed(problem.draw_inputs(seed), transform)
        compiled = ctx.compiled.get(mode)
        if compiled is None:
            try:
                compiled = compile_model(problem.model, mode)
            except (Exception, SystemExit) as e:  # user code may call sys.exit
                raise wrap("compile_failed", "torch.compile (mode %s) raised" % mode, e)
            ctx.compiled[mode] = compiled
        # The first call compiles (dynamo is lazy): failures then are compile_failed too.
        return Target("compiled:" + mode, lambda p: compiled(*p), inputs, "compile_failed",
                      "the compiled model (mode %s) raised" % mode, clone=problem.mutates_inputs)

    if kind == "module":
        mpath, apath = spec.get("module"), spec.get("args")
        if not isinstance(mpath, str) or not isinstance(apath, str):
            raise BadRequest("module target needs string 'module' and 'args' paths")
        mc = cache(ctx)
        mod, args = mc.prepared(mpath, apath, ctx.problem, seed, lambda xs: transformed(xs, transform))
        shared = mc.shared(apath)

        def call(p):
            return mc.call_module(ctx, mpath, mod, p, shared)
        return Target("module:" + mpath, call, args, "module_failed",
                      "call() of %s raised" % mpath)

    raise BadRequest("unknown target kind %r (eager, compiled, module)" % (kind,))
