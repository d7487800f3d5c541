"""Shared by the developer sweeps (tools/colsoftmax_sweep.py, collse_sweep.py, scan_sweep.py,
gn_sweep.py, split_sweep.py, looped_sweep.py, packed_sweep.py): their shape arguments, a Triton source imported as a module (a real file, since triton.jit reads the
source back), a template's kernels rendered and imported, the median GPU time of a call, and
torch.compile's as the baseline."""
import importlib.util
import os
import sys
import tempfile

import torch


def module_from_source(src, name):
    """The module of Python source `src` (written to a temporary file so that triton.jit can read
    its functions' source), named `name`."""
    fd, path = tempfile.mkstemp(suffix=".py", prefix="kopt_sweep_")
    os.write(fd, src.encode())
    os.close(fd)
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def template_module(name, params):
    """The kernels of templates/kernels/<name>.py.tmpl (its text before the launch plan, whose
    placeholders need the plan's values) with its conditionals rendered from params, imported."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interp"))
    from interp_util import render  # the Python mirror of template.c's conditionals
    src = open(os.path.join(os.path.dirname(__file__), "..", "templates", "kernels", name + ".py.tmpl")).read()
    return module_from_source(render(src.split("KOPT_PLAN")[0], params), "m_" + name)


def shape_args(default_dtype, default_dims):
    """The sweeps' command line, [--dtype NAME] [OUTER C INNER ...]: the dtype, the flat list of
    dimensions (three a shape) and the bytes an element."""
    args = sys.argv[1:]
    dtype = default_dtype
    if args[:1] == ["--dtype"]:
        dtype, args = getattr(torch, args[1]), args[2:]
    dims = [int(a) for a in args] or default_dims
    return dtype, dims, torch.empty(0, dtype=dtype).element_size()


def shapes(dims, dtype, op):
    """Each (OUTER, C, INNER) of dims as (outer, c, inner, x, ref): x a fresh randn input of that
    shape and dtype on the GPU, ref op(x, dim=1) computed in float64, rounded to dtype."""
    for s in range(0, len(dims), 3):
        outer, c, inner = dims[s:s + 3]
        x = torch.randn(outer, c, inner, device="cuda").to(dtype)
        yield outer, c, inner, x, op(x.double(), dim=1).to(dtype)


def ln11_inputs():
    """level1/11_layer_norm_2d_bf16's shape on the GPU: (rows, n, dtype, x, weight, bias, ref,
    eager): a fresh randn input, the weight in [0.5, 1.5] and bias in [-0.5, 0.5] as the problem
    draws them, the float32 layer norm rounded to bfloat16, and the eager call."""
    rows, n, dt = 16384, 65536, torch.bfloat16
    x = torch.randn(rows, n, device="cuda", dtype=dt)
    wt = torch.empty(n, device="cuda", dtype=dt).uniform_(0.5, 1.5)
    bs = torch.empty(n, device="cuda", dtype=dt).uniform_(-0.5, 0.5)
    ref = torch.nn.functional.layer_norm(x.float(), (n,), wt.float(), bs.float(), 1e-5).to(dt)
    return rows, n, dt, x, wt, bs, ref, lambda t: torch.nn.functional.layer_norm(t, (n,), wt, bs, 1e-5)


def timeit(fn, flush, n=25):
    """Median of n CUDA-event timings of fn() after 3 warm-up calls, `flush` (a buffer larger
    than the L2) zeroed before each."""
    for _ in range(3):
        fn()
    ts = []
    for _ in range(n):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def inductor_ms(eager, x, flush, gb, what):
    """torch.compile's (default) median ms on eager(x), printed with `what` and the GB/s of gb GB
    moved: the sweeps' baseline."""
    comp = torch.compile(eager, dynamic=False)
    comp(x)
    t0 = timeit(lambda: comp(x), flush)
    print("%s: inductor %.3f ms (%.0f GB/s)" % (what, t0, gb / t0 * 1e3), flush=True)
    return t0


def try_variant(key, f, y, ref, tol, flush):
    """One variant: f() run once into the output y poisoned with NaN, compared with ref (within
    tol * (1 + |ref|) everywhere), then timed. Its median ms, or None (and why printed) when it
    raises (a variant Triton cannot compile: too many registers) or is wrong."""
    y.fill_(float("nan"))
    try:
        f()
        torch.cuda.synchronize()
    except Exception as ex:
        print("  %s: %s" % (key, str(ex).splitlines()[0][:100]))
        return None
    d = (y.float() - ref.float()).abs()
    if not bool((d <= tol * (1 + ref.float().abs())).all()):
        print("  %s: WRONG max err %g" % (key, d.max().item()))
        return None
    return timeit(f, flush)


def print_best(out, t0, gb, top):
    """The `top` fastest of out [(ms, key)], against Inductor's t0 ms, with the GB/s of gb GB moved."""
    out.sort()
    for t, key in out[:top]:
        print("  %-26s %.3f ms  %.3fx inductor  %.0f GB/s" % (key, t, t0 / t, gb / t * 1e3), flush=True)
