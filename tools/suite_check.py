#!/usr/bin/env python3
"""Check the problems of a KernelBench-format suite (default bench/suite) without a GPU.

For every problem file (levelN/NN_name.py under the suite folder, or the files given):
  1. static checks: a one-line module docstring, `class Model`, `get_inputs`, `get_init_inputs`,
     and no `device=` keyword and no `.cuda()` call anywhere (the harness picks the device);
  2. full-size bytes without allocating: the model is built and the inputs drawn under
     `with torch.device('meta')`, the forward runs on meta tensors. Reported: input, parameter
     (parameters + buffers), output bytes, and an estimated eager peak (inputs + parameters +
     the most bytes live at once during the forward, tracked per storage by a dispatch mode).
     Where a meta kernel is missing the output and peak columns read "?";
  3. a small run on the CPU: the module-level integer constants that get_inputs' shapes use
     (directly or through other module-level assignments) are halved, largest first, until the
     inputs take at most --small-bytes (a problem may instead define `SMALL = {name: value}`);
     the source is re-executed with the new values so derived constants follow. The model runs
     under no_grad in eval mode; every floating output must be finite and of the problem's
     dtype, and it is compared with a float64 copy of the model on float64 inputs (relative
     L2 error; argmax-like integer outputs must match exactly);
  4. size limits on the full-size inputs (GB = 10^9 bytes): level 1: 1-10 GB; level 2:
     0.5-4 GB; level 3: reported only; and the estimated peak must stay under --max-peak-gb.
A DEV file in the suite folder (one problem path per line, '#' comments) must name existing
problems. Prints a table (markdown with --markdown); exits 1 when any check fails, 2 on bad
usage. Needs only torch (CPU build is enough).
"""

import argparse
import ast
import copy
import glob
import math
import os
import re
import sys
import traceback
import types
import weakref

try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
except ImportError:  # pragma: no cover - reported to the user
    sys.stderr.write("suite_check: needs torch (a CPU build is enough)\n")
    sys.exit(2)

GB = 1e9
LIMITS = {1: (1.0, 10.0), 2: (0.5, 4.0)}  # level -> (min, max) input GB; others: report only
SHORT = {
    torch.float32: "fp32", torch.float64: "fp64", torch.float16: "fp16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool",
}
# relative L2 error allowed against the float64 reference at the small size
REF_TOL = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 2e-2, torch.bfloat16: 5e-2}
_counter = [0]


class CheckError(Exception):
    pass


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- loading and static checks

def parse_source(path):
    with open(path, "r", encoding="utf-8") as f:
        src = f.read()
    try:
        tree = ast.parse(src, path)
    except SyntaxError as e:
        raise CheckError("syntax error: %s" % e)
    return src, tree


def static_checks(tree):
    """Problems with the file's form (list of strings)."""
    errs = []
    doc = ast.get_docstring(tree, clean=False)
    if not doc:
        errs.append("no module docstring")
    elif "\n" in doc.strip():
        errs.append("docstring is not one line")
    names = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    if not isinstance(names.get("Model"), ast.ClassDef):
        errs.append("no class Model")
    for fn in ("get_inputs", "get_init_inputs"):
        if not isinstance(names.get(fn), ast.FunctionDef):
            errs.append("no %s()" % fn)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if any(k.arg == "device" for k in node.keywords):
                errs.append("line %d: device= keyword (the harness chooses the device)" % node.lineno)
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "cuda":
                errs.append("line %d: .cuda() call" % node.lineno)
            if (isinstance(f, ast.Attribute) and f.attr == "to" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                errs.append("line %d: .to(%r)" % (node.lineno, node.args[0].value))
    return errs


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.FloorDiv: lambda a, b: a // b, ast.LShift: lambda a, b: a << b, ast.Pow: lambda a, b: a ** b}


def const_int(node):
    """The value of an int literal or of arithmetic on int literals (`1 << 20`, `64 * 1024`), else None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = const_int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        a, b = const_int(node.left), const_int(node.right)
        if a is None or b is None or (isinstance(node.op, (ast.LShift, ast.Pow)) and not 0 <= b <= 64):
            return None
        try:
            return _ARITH[type(node.op)](a, b)
        except ZeroDivisionError:
            return None
    return None


def int_constants(tree):
    """Module-level `NAME = <int constant expression>` assignments: {name: value}."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            v = const_int(node.value)
            if v is not None:
                out[node.targets[0].id] = v
    return out


def shape_constants(tree):
    """Integer constants that get_inputs uses, directly or through module-level assignments."""
    assigns = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigns.setdefault(t.id, []).append(node.value)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    if fn is None:
        return []
    seen, todo = set(), [n.id for n in ast.walk(fn) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name in seen or name not in assigns:
            continue
        seen.add(name)
        for value in assigns[name]:
            todo.extend(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
    consts = int_constants(tree)
    return sorted(n for n in seen if n in consts)


class _Override(ast.NodeTransformer):
    def __init__(self, values):
        self.values = values

    def visit_Module(self, node):
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in self.values):
                stmt.value = ast.copy_location(ast.Constant(self.values[stmt.targets[0].id]), stmt.value)
        return node


def load_module(path, tree, overrides=None):
    """Execute the problem's source as a fresh module, with module-level constants overridden."""
    tree = copy.deepcopy(tree)
    if overrides:
        tree = ast.fix_missing_locations(_Override(overrides).visit(tree))
    code = compile(tree, path, "exec")
    _counter[0] += 1
    name = "suite_problem_%d" % _counter[0]
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod  # dataclasses and pickling look modules up by name
    try:
        exec(code, mod.__dict__)
    except BaseException as e:
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise CheckError("import raised %s: %s" % (type(e).__name__, e))
    return mod


# ---------------------------------------------------------------- sizes

def tensors_of(obj):
    flat, _ = tree_flatten(obj)
    return [t for t in flat if isinstance(t, torch.Tensor)]


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def param_bytes(model):
    seen, total = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


class PeakTracker(TorchDispatchMode):
    """Bytes of the storages that ops allocate while live (views and in-place results excluded)."""

    def __init__(self):
        super().__init__()
        self.live = 0
        self.peak = 0

    def _free(self, n):
        self.live -= n

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        rets = func._schema.returns
        flat, _ = tree_flatten(out)
        for i, t in enumerate(flat):
            if not isinstance(t, torch.Tensor):
                continue
            if len(rets) == len(flat) and rets[i].alias_info is not None:
                continue
            if len(rets) == 1 and rets[0].alias_info is not None:
                continue
            st = t.untyped_storage()
            n = st.nbytes()
            self.live += n
            self.peak = max(self.peak, self.live)
            weakref.finalize(st, self._free, n)
        return out


def build_model(mod, device):
    """Model(*get_init_inputs()) on `device`, in eval mode, seeded as the harness does."""
    torch.manual_seed(0)
    with torch.device(device):
        init = mod.get_init_inputs()
        if not isinstance(init, (list, tuple)):
            raise CheckError("get_init_inputs() returned %s, not a list" % type(init).__name__)
        torch.manual_seed(0)
        model = mod.Model(*init)
    model.eval()
    for t in tensors_of(list(model.parameters()) + list(model.buffers())):
        if t.device.type != device:
            raise CheckError("the model holds a tensor on %s: build it on the default device" % t.device)
    return model


def build_inputs(mod, device):
    """get_inputs() on `device`, checked as the harness checks it."""
    torch.manual_seed(0)
    with torch.device(device):
        inputs = mod.get_inputs()
    if not isinstance(inputs, (list, tuple)):
        raise CheckError("get_inputs() returned %s, not a list" % type(inputs).__name__)
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            if x.device.type != device:
                raise CheckError("get_inputs()[%d] is on %s: tensors must take the default device"
                                 % (i, x.device))
        elif not isinstance(x, (int, float, bool)):
            raise CheckError("get_inputs()[%d] is %s (tensors, ints, floats, bools only)"
                             % (i, type(x).__name__))
    if not tensors_of(inputs):
        raise CheckError("get_inputs() returned no tensor")
    return list(inputs)


def build(mod, device):
    """(model, inputs) on `device` ('meta' or 'cpu'), KernelBench style."""
    model = build_model(mod, device)
    return model, build_inputs(mod, device)


def input_bytes_at(path, tree, overrides):
    return nbytes(tensors_of(build_inputs(load_module(path, tree, overrides), "meta")))


def problem_dtype(inputs, model):
    """The floating dtype the outputs should have: the inputs' (all alike) else the parameters'."""
    fl = [t.dtype for t in tensors_of(inputs) if t.is_floating_point()]
    if not fl:
        fl = [p.dtype for p in model.parameters() if p.is_floating_point()]
    return fl[0] if fl and all(d == fl[0] for d in fl) else None


def dtype_label(inputs):
    seen = []
    for t in tensors_of(inputs):
        s = SHORT.get(t.dtype, str(t.dtype).replace("torch.", ""))
        if s not in seen:
            seen.append(s)
    return "+".join(seen)


# ---------------------------------------------------------------- the small CPU run

def small_overrides(path, tree, mod, limit):
    """Overrides that bring the inputs under `limit` bytes: SMALL, or halving shape constants."""
    small = getattr(mod, "SMALL", None)
    if small is not None:
        if not isinstance(small, dict):
            raise CheckError("SMALL must be a dict of module constants")
        return dict(small)
    consts = int_constants(tree)
    names = shape_constants(tree)
    values = {n: consts[n] for n in names}
    for _ in range(200):
        if input_bytes_at(path, tree, values) <= limit:
            return values
        movable = [n for n in names if values[n] >= 16]
        if not movable:
            break
        big = max(movable, key=lambda n: (values[n], n))
        values[big] //= 2
    raise CheckError("cannot shrink the inputs under %d bytes by halving %s; define SMALL"
                     % (limit, ", ".join(names) or "(no shape constants found)"))


def rel_err(out, ref):
    out = out.double()
    ref = ref.double()
    mask = torch.isfinite(ref)
    if not bool(mask.all()):  # -inf in a reference (e.g. log of 0) must be matched exactly
        if not bool((out[~mask] == ref[~mask]).all()):
            return float("inf")
        out, ref = out[mask], ref[mask]
    den = float(torch.linalg.vector_norm(ref))
    num = float(torch.linalg.vector_norm(out - ref))
    if den == 0.0:
        return num
    return num / den


def small_run(path, tree, mod, limit):
    """Run at a small size on the CPU; returns (description, worst relative error)."""
    values = small_overrides(path, tree, mod, limit)
    smod = load_module(path, tree, values)
    model, inputs = build(smod, "cpu")
    want = problem_dtype(inputs, model)
    with torch.no_grad():
        out = model(*inputs)
    outs = tensors_of(out)
    if not outs:
        raise CheckError("small run: forward returned no tensor")
    for t in outs:
        if t.is_floating_point():
            if want is not None and t.dtype != want:
                raise CheckError("small run: output dtype %s, expected %s" % (t.dtype, want))
            if not bool(torch.isfinite(t).all()):
                raise CheckError("small run: output has %d non-finite values"
                                 % int((~torch.isfinite(t)).sum()))
    # float64 reference: a float64 copy of the model on float64 copies of the floating inputs
    model64 = copy.deepcopy(model).double()
    inputs64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in inputs]
    with torch.no_grad():
        refs = tensors_of(model64(*inputs64))
    if len(refs) != len(outs):
        raise CheckError("small run: the float64 model returned %d tensors, not %d" % (len(refs), len(outs)))
    worst = 0.0
    for t, r in zip(outs, refs):
        if t.shape != r.shape:
            raise CheckError("small run: float64 output shape %s != %s" % (tuple(r.shape), tuple(t.shape)))
        if t.is_floating_point():
            e = rel_err(t, r)
            tol = REF_TOL.get(t.dtype, 1e-4)
            if not e <= tol:
                raise CheckError("small run: relative error %.3g against float64 (limit %g)" % (e, tol))
            worst = max(worst, e)
        elif not bool((t == r).all()):
            frac = float((t != r).double().mean())
            raise CheckError("small run: %.3g%% of the integer outputs differ from float64's" % (100 * frac))
    shapes = ",".join("x".join(str(s) for s in t.shape) for t in tensors_of(inputs))
    changed = ",".join("%s=%s" % (k, v) for k, v in sorted(values.items()))
    return "%s [%s]" % (shapes, changed), worst


# ---------------------------------------------------------------- one problem

def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def level_of(path):
    m = re.search(r"level(\d+)", os.path.basename(os.path.dirname(path)))
    return int(m.group(1)) if m else None


def check_problem(path, args):
    row = {"path": path, "level": level_of(path), "dtype": "?", "in": None, "out": None,
           "params": None, "peak": None, "small": "", "err": None, "doc": "", "fail": []}
    try:
        src, tree = parse_source(path)
    except (OSError, CheckError) as e:
        row["fail"].append(str(e))
        return row
    doc = ast.get_docstring(tree) or ""
    row["doc"] = doc.strip().splitlines()[0] if doc.strip() else ""
    row["fail"].extend(static_checks(tree))
    if row["fail"] and any("device=" in f or ".cuda" in f or ".to(" in f for f in row["fail"]):
        return row  # a fixed device would allocate the full size for real: do not run it
    try:
        mod = load_module(path, tree)
        inputs = build_inputs(mod, "meta")
        row["dtype"] = dtype_label(inputs)
        row["in"] = nbytes(tensors_of(inputs))
        try:
            model = build_model(mod, "meta")
        except CheckError:
            raise
        except Exception as e:  # e.g. a constructor that reads tensor values: sizes read "?"
            model = None
            row["meta_note"] = "model not built on meta: %s: %s" % (type(e).__name__, first_line(e))
        if model is not None:
            row["params"] = param_bytes(model)
            try:
                tracker = PeakTracker()
                with torch.no_grad(), tracker:
                    out = model(*inputs)
                outs = tensors_of(out)
                row["out"] = nbytes(outs)
                row["peak"] = row["in"] + row["params"] + tracker.peak
                del out, outs
            except Exception as e:  # a meta kernel may be missing: report "?"
                row["meta_note"] = "meta forward: %s: %s" % (type(e).__name__, first_line(e))
        del model, inputs
    except CheckError as e:
        row["fail"].append(str(e))
        return row
    except Exception as e:
        row["fail"].append("full-size build on meta raised %s: %s" % (type(e).__name__, e))
        return row

    lv = row["level"]
    if lv in LIMITS and row["in"] is not None:
        lo, hi = LIMITS[lv]
        gb = row["in"] / GB
        if not lo <= gb <= hi:
            row["fail"].append("inputs %.2f GB outside %g-%g GB for level %d" % (gb, lo, hi, lv))
    if row["peak"] is not None and row["peak"] / GB > args.max_peak_gb:
        row["fail"].append("estimated eager peak %.1f GB over %g GB" % (row["peak"] / GB, args.max_peak_gb))

    if not args.no_small:
        try:
            row["small"], row["err"] = small_run(path, tree, mod, args.small_bytes)
        except CheckError as e:
            row["fail"].append(str(e))
        except Exception as e:
            if args.verbose:
                traceback.print_exc()
            row["fail"].append("small run raised %s: %s" % (type(e).__name__, first_line(e)))
    return row


# ---------------------------------------------------------------- output

def gb(v):
    if v is None:
        return "?"
    x = v / GB
    if x == 0:
        return "0"
    if x < 0.001:
        return "<0.001"
    return "%.3f" % x if x < 10 else "%.2f" % x


def rel_name(path, suite):
    try:
        return os.path.relpath(path, suite)
    except ValueError:
        return path


def print_table(rows, suite, markdown):
    head = ["problem", "dtype", "input GB", "output GB", "param GB", "peak GB (est.)", "check"]
    if markdown:
        head.append("what it exercises")
    lines = []
    for r in rows:
        check = "ok" if not r["fail"] else "FAIL"
        if check == "ok" and r["err"] is not None and not markdown:  # markdown: stable across hosts
            check = "ok (err %.1e)" % r["err"]
        cells = [rel_name(r["path"], suite), r["dtype"], gb(r["in"]), gb(r["out"]), gb(r["params"]),
                 gb(r["peak"]), check]
        if markdown:
            cells.append(r["doc"].replace("|", "\\|"))
        lines.append(cells)
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" if i == 0 or i == len(head) - 1 else "---:" if 2 <= i <= 5 else "---"
                             for i in range(len(head))) + "|")
        for cells in lines:
            print("| " + " | ".join(cells) + " |")
    else:
        widths = [max(len(str(c)) for c in col) for col in zip(head, *lines)]
        for cells in [head] + lines:
            print("  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip())


def check_dev(suite):
    """Problems named in suite/DEV that do not exist."""
    path = os.path.join(suite, "DEV")
    if not os.path.isfile(path):
        return []
    bad = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            entry = line.split("#", 1)[0].strip()
            if entry and not os.path.isfile(os.path.join(suite, entry)):
                bad.append("DEV line %d: %s does not exist" % (n, entry))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", help="suite folders or problem files (default: bench/suite)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--small-bytes", type=int, default=4 << 20,
                    help="most input bytes of the small CPU run (default 4 MiB)")
    ap.add_argument("--max-peak-gb", type=float, default=25.0,
                    help="largest estimated eager peak allowed (default 25 GB)")
    ap.add_argument("--no-small", action="store_true", help="skip the small CPU runs")
    ap.add_argument("-v", "--verbose", action="store_true", help="tracebacks and small-run shapes")
    args = ap.parse_args(argv)

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    paths = args.paths or [os.path.join(repo_root(), "bench", "suite")]
    files, suite, dev_errors = [], None, []
    for p in paths:
        if os.path.isdir(p):
            suite = suite or os.path.abspath(p)
            found = sorted(glob.glob(os.path.join(p, "level*", "[0-9][0-9]_*.py")))
            if not found:
                sys.stderr.write("suite_check: no levelN/NN_*.py problem under %s\n" % p)
                return 2
            files.extend(os.path.abspath(f) for f in found)
            dev_errors.extend(check_dev(p))
        elif os.path.isfile(p):
            files.append(os.path.abspath(p))
        else:
            sys.stderr.write("suite_check: %s: no such file or folder\n" % p)
            return 2
    if suite is None:
        suite = os.path.commonpath([os.path.dirname(os.path.dirname(f)) for f in files])

    rows = []
    for f in files:
        if args.verbose:
            sys.stderr.write("checking %s\n" % rel_name(f, suite))
        rows.append(check_problem(f, args))
    print_table(rows, suite, args.markdown)

    failed = [r for r in rows if r["fail"]]
    notes = []
    for r in rows:
        if r.get("meta_note"):
            notes.append("%s: not all sizes measured (%s)" % (rel_name(r["path"], suite), r["meta_note"]))
        if args.verbose and r["small"]:
            notes.append("%s: small run %s" % (rel_name(r["path"], suite), r["small"]))
    out = sys.stderr if args.markdown else sys.stdout
    for n in notes:
        out.write("note: %s\n" % n)
    for r in failed:
        for msg in r["fail"]:
            out.write("FAIL %s: %s\n" % (rel_name(r["path"], suite), msg))
    for msg in dev_errors:
        out.write("FAIL %s\n" % msg)
    n_bad = len(failed) + (1 if dev_errors else 0)
    out.write("%d problems: %d passed, %d failed\n" % (len(rows), len(rows) - len(failed), len(failed)))
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
