"""kopt.cubin: launch a kernel from the machine code kopt's sandbox compiled, without the
candidate's Python (issue 11: no candidate code in the judging process; docs/SECURITY.md).

`kopt lint --sass --keep-cubins DIR` (and gate 1's machine-code check) leaves, per launch i of a
form-P plan: launch<i>.cubin (the code whose SASS was classified), launch<i>.json (kopt's copy of
the compile's metadata, checked against what was asked: src/gates/kmeta.h) and launch<i>.spec.json
(the kernel's parameters in declared order, their Triton types, the constexpr values and the
parameters specialised as divisible by 16, from kopt's own specialisation of the launch).
CubinKernel(DIR, i) builds Triton's loader (triton.compiler.compiler.CompiledKernel) from those
files alone: its launcher needs of the source only the signature, the constants and the
parameter names, which come from the spec, so no JITFunction exists and nothing of the
candidate's file runs here. A call checks first that the arguments specialise as the compile
did (each tensor's dtype and 16-byte alignment, each integer's type, divisibility by 16 and
equality to 1, each constexpr's value): a call that would have compiled differently raises
SpecMismatch instead of running code compiled for another launch.

CubinFunction(DIR, (i, j, ...)) stands in for one @triton.jit function of the candidate in the
module the gates judge (kopt writes it there instead of the candidate's file: src/gates/
candidate.h, candidate_cubin_stitch_text): it holds the kept launches of that function and is
called as the launcher kopt wrote from the plan calls a JIT function, `fn[grid](runtime args...,
CONST=v, num_warps=w, num_stages=s)`; the arguments are bound to the parameters as Python binds
them, each launch's spec tried in turn, and the first whose specialisation matches runs (none:
SpecMismatch). `fn.warmup(..., grid=g)[g]` (the shim's bound path on the signature the guard
verified) checks once and hands back Triton's runner of that launch. Inside dry_run() (gate 1's
compile step in the worker) a call checks and loads the cubin onto the GPU, and launches nothing.
"""
import contextlib
import json
import os
import stat
import threading

FILE_MAX = 64 << 20   # the largest cubin or JSON file read
COMPILED_KERNEL_CLS = None   # tests: a stand-in for Triton's CompiledKernel (None: Triton's)

TRITON_OF_DTYPE = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int64": "i64",
                   "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "i1",
                   "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


class SpecMismatch(Exception):
    """The arguments of a call specialise differently from the compiled launch."""


def _read(path, binary=False):
    """A regular file (not a link) of at most FILE_MAX bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > FILE_MAX:
            raise ValueError("%s is not a regular file of at most %d bytes" % (path, FILE_MAX))
        data = f.read(FILE_MAX + 1)
    return data if binary else data.decode()


def load_spec(directory, i):
    """The spec of launch i, checked for shape: names, types and constexprs that agree."""
    spec = json.loads(_read(os.path.join(directory, "launch%d.spec.json" % i)))
    names, sig = spec.get("arg_names"), spec.get("signature")
    if not (isinstance(names, list) and isinstance(sig, list) and len(names) == len(sig) and
            all(isinstance(n, str) and n.isidentifier() for n in names) and all(isinstance(t, str) for t in sig)):
        raise ValueError("launch%d.spec.json: arg_names and signature must be lists of the same length" % i)
    cx = spec.get("constexprs") or {}
    for n, t in zip(names, sig):
        if n in cx and t != "constexpr":
            raise ValueError("launch%d.spec.json: %s has a constexpr value but type %s" % (i, n, t))
    return spec


def _int_type(v):
    return "i32" if -(1 << 31) <= v < (1 << 31) else "u64" if v >= (1 << 63) else "i64"


def specialisation_errors(spec, args):
    """Why the call's arguments (every parameter, declared order, constexpr values included)
    would not specialise as the spec: a list of strings, empty when they do."""
    names, sig = spec["arg_names"], spec["signature"]
    cx, div = spec.get("constexprs") or {}, set(spec.get("divisible_by_16") or ())
    if len(args) != len(names):
        return ["%d arguments for %d parameters" % (len(args), len(names))]
    why = []
    for n, t, a in zip(names, sig, args):
        if t == "constexpr":
            if n in cx and not (a == cx[n] and type(a) is type(cx[n])):
                why.append("%s is %r, compiled for %r" % (n, a, cx[n]))
            continue
        if t.startswith("*"):
            dt = str(getattr(a, "dtype", "")).replace("torch.", "")
            if not hasattr(a, "data_ptr") or TRITON_OF_DTYPE.get(dt) != t[1:]:
                why.append("%s is %s, compiled for %s" % (n, dt or type(a).__name__, t))
            elif (a.data_ptr() % 16 == 0) != (n in div):
                why.append("%s is %s16-byte aligned, compiled %s" % (n, "" if a.data_ptr() % 16 == 0 else "not ",
                                                                    "for it" if n in div else "without"))
        elif t in ("i32", "i64", "u64"):
            if isinstance(a, bool) or not isinstance(a, int):
                why.append("%s is %s, compiled for an integer" % (n, type(a).__name__))
            elif a == 1:
                why.append("%s is 1, which Triton makes a constant, compiled as %s" % (n, t))
            elif _int_type(a) != t or (a % 16 == 0) != (n in div):
                why.append("%s = %d specialises as %s%s, compiled as %s%s" % (
                    n, a, _int_type(a), " divisible by 16" if a % 16 == 0 else "", t,
                    " divisible by 16" if n in div else ""))
        elif t == "fp32":
            if not isinstance(a, float):
                why.append("%s is %s, compiled for a float" % (n, type(a).__name__))
        elif t == "i1":
            if not isinstance(a, bool):
                why.append("%s is %s, compiled for a bool" % (n, type(a).__name__))
        else:
            why.append("%s has type %s, which kopt does not launch" % (n, t))
    return why


class _Fn:
    __slots__ = ("arg_names",)

    def __init__(self, names):
        self.arg_names = list(names)


class _Source:
    """What Triton's CudaLauncher reads of a compile's source: the signature (every parameter in
    declared order, constexprs as "constexpr"), the constants (keyed by parameter index) and the
    parameter names."""
    __slots__ = ("fn", "signature", "constants")

    def __init__(self, spec):
        names = spec["arg_names"]
        self.fn = _Fn(names)
        self.signature = dict(zip(names, spec["signature"]))
        cx = spec.get("constexprs") or {}
        self.constants = {(names.index(n),): v for n, v in cx.items() if n in names}


class CubinKernel:
    """Launch i of a kept plan, loaded from its cubin and kopt's metadata. kernel[grid](*args,
    stream=s) checks the specialisation, then launches; compiled_kernel_cls stands in for
    Triton's CompiledKernel in tests."""

    def __init__(self, directory, i, compiled_kernel_cls=None):
        self.spec = load_spec(directory, i)
        meta = json.loads(_read(os.path.join(directory, "launch%d.json" % i)))
        if meta.get("name") != self.spec.get("kernel") or meta.get("num_warps") != self.spec.get("num_warps"):
            raise ValueError("launch%d: the metadata names %s with %s warps, the spec %s with %s" % (
                i, meta.get("name"), meta.get("num_warps"), self.spec.get("kernel"), self.spec.get("num_warps")))
        _read(os.path.join(directory, "launch%d.cubin" % i), binary=True)   # a regular, bounded file
        if compiled_kernel_cls is None:
            compiled_kernel_cls = COMPILED_KERNEL_CLS
        if compiled_kernel_cls is None:
            from triton.compiler.compiler import CompiledKernel as compiled_kernel_cls
        name = self.spec["kernel"]
        group = {name + ".json": os.path.join(directory, "launch%d.json" % i),
                 name + ".cubin": os.path.join(directory, "launch%d.cubin" % i)}
        self.compiled = compiled_kernel_cls(_Source(self.spec), group, "kopt-launch%d" % i)

    def __getitem__(self, grid):
        grid = tuple(grid) + (1,) * (3 - len(grid))
        run = self.compiled[grid]

        def launch(*args, stream=None):
            why = specialisation_errors(self.spec, args)
            if why:
                raise SpecMismatch("%s: %s" % (self.spec["kernel"], "; ".join(why)))
            return run(*args, stream=stream)
        return launch


_dry = threading.local()


@contextlib.contextmanager
def dry_run():
    """While active (this thread), CubinFunction calls check the specialisation and load the
    cubin, and launch nothing: gate 1's compile step runs kopt's launcher this way."""
    was = getattr(_dry, "on", False)
    _dry.on = True
    try:
        yield
    finally:
        _dry.on = was


def _bind(spec, args, kwargs):
    """Every parameter's value in declared order, bound as Python binds a call of the function:
    positional arguments first, then keywords; a constexpr not given takes the spec's value (the
    function's default, compiled in); anything else missing, doubled or unknown is a reason."""
    names = spec["arg_names"]
    cx = spec.get("constexprs") or {}
    if len(args) > len(names):
        return None, "%d positional arguments for %d parameters" % (len(args), len(names))
    got = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            return None, "no parameter %s" % k
        if k in got:
            return None, "%s given twice" % k
        got[k] = v
    ordered = []
    for n, t in zip(names, spec["signature"]):
        if n in got:
            ordered.append(got[n])
        elif t == "constexpr" and n in cx:
            ordered.append(cx[n])
        elif t == "constexpr":
            ordered.append(None)   # left to a default the spec does not state: not checked
        else:
            return None, "%s not given" % n
    return ordered, None


class _Checked:
    """A launch whose arguments were checked at warmup: [grid] is Triton's runner of it."""
    __slots__ = ("kernel",)

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        grid = tuple(grid) + (1,) * (3 - len(grid))
        return self.kernel.compiled[grid]


class CubinFunction:
    """One jit function of a candidate in the judged module: the kept launches `launches` of DIR
    that use it. Called like Triton's JITFunction by kopt's launcher."""

    def __init__(self, directory, launches, compiled_kernel_cls=None):
        directory = os.fsdecode(directory)
        if not launches:
            raise ValueError("a CubinFunction needs at least one kept launch")
        self.kernels = [CubinKernel(directory, int(i), compiled_kernel_cls) for i in launches]
        names = {k.spec["kernel"] for k in self.kernels}
        if len(names) != 1:
            raise ValueError("launches %s of %s are of different kernels: %s" % (list(launches), directory,
                                                                                sorted(names)))

    def _select(self, args, kwargs):
        """The kept launch the call specialises as, and its arguments in declared order."""
        warps, stages = kwargs.pop("num_warps", None), kwargs.pop("num_stages", None)
        why = []
        for k in self.kernels:
            ordered, err = _bind(k.spec, args, dict(kwargs))
            if err is None:
                errs = specialisation_errors(k.spec, ordered)
                if warps is not None and warps != k.spec.get("num_warps"):
                    errs.append("num_warps %r, compiled for %r" % (warps, k.spec.get("num_warps")))
                if stages is not None and k.spec.get("num_stages") and stages != k.spec["num_stages"]:
                    errs.append("num_stages %r, compiled for %r" % (stages, k.spec["num_stages"]))
                if not errs:
                    return k, ordered
                err = "; ".join(errs)
            why.append(err)
        raise SpecMismatch("%s: no kept launch specialises as this call (%s)" % (
            self.kernels[0].spec["kernel"], " | ".join(why)))

    def __getitem__(self, grid):
        def launch(*args, stream=None, **kwargs):
            kernel, ordered = self._select(args, kwargs)
            g = tuple(grid) + (1,) * (3 - len(grid))
            run = kernel.compiled[g]   # loads the cubin onto the GPU (Triton's _init_handles)
            if getattr(_dry, "on", False):
                return None
            return run(*ordered, stream=stream)
        return launch

    def warmup(self, *args, grid=None, **kwargs):
        kernel, _ = self._select(args, kwargs)
        return _Checked(kernel)
