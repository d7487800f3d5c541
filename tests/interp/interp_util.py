"""Helpers of the interpreter tests: a mirror of src/agents/template.c's rendering rules
({{NAME}}, {{if}}, {{else}}, {{end}}; the C renderer's output for the same parameters is pinned by
the unit tests' goldens, so a divergence shows up there), and the text kopt judges and ships for
a candidate file (`kopt lint --show-launcher --json`: for form P the launcher kopt writes from
the plan), loaded as a module."""
import importlib.util
import json
import os
import re
import subprocess
import sys

def require_triton():
    """Interpreter mode on; exits 0 with one line when torch or triton does not import."""
    os.environ.setdefault("TRITON_INTERPRET", "1")
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as e:
        print("interp-check skipped: %s" % e)
        sys.exit(0)
    _storage_shim()
    _index_shim()


def _storage_shim():
    """Triton 3.6's interpreter copies each argument's storage through Tensor.untyped_storage(),
    which torch before 2.0 (Debian 12's python3-torch, 1.13) does not have; there a tensor's
    typed storage serves the same calls (data_ptr, cpu, copy_, set_). Newer torch: nothing done."""
    import torch
    if not hasattr(torch.Tensor, "untyped_storage"):
        torch.Tensor.untyped_storage = lambda self: self.storage()


def _index_shim():
    """Triton 3.6's interpreter turns a scalar kernel argument used as an int (a loop bound:
    `range(0, n, CHUNK)`, `tl.range(0, n, CHUNK)`) into a Python int with int() on a one-element
    1-D numpy array, which numpy 2.5 refuses ("only 0-dimensional arrays can be converted to Python
    scalars"; seen on the GPU machine with numpy 2.5.2). The templates with a runtime loop bound
    (row_cumsum, row_softmax_stats) then could not run here at all. The shim keeps the
    interpreter's own patch and replaces only that conversion, in the same restorable scope, by
    the array's single element; any other array goes to int() as before. Nothing of the kernels'
    arithmetic changes. Without the hook (another Triton) nothing is done."""
    try:
        import triton.runtime.interpreter as ti
    except ImportError:
        return
    orig = getattr(ti, "_patch_lang_tensor", None)
    if orig is None or getattr(orig, "_kopt_shim", False):
        return

    def index(self):
        data = self.handle.data
        return int(data.reshape(-1)[0]) if getattr(data, "size", 0) == 1 else int(data)

    def patch(tensor, scope):
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", index)

    patch._kopt_shim = True
    ti._patch_lang_tensor = patch


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOPT = os.environ.get("KOPT", os.path.join(ROOT, "build", "kopt"))


def group_norm_ptrs(pre_bias, in_place=False):
    """region_group_norm's pointer parameters as kopt fills them for the region's signature: the
    norm alone (x, w, b, out), a convolution's bias before (x, cb, w, b, out), or that written in
    the convolution's buffer (cb, w, b, x-and-out: in_out_ptr0)."""
    if in_place:
        return dict(PARAMS=["in_ptr0", "in_ptr1", "in_ptr2", "in_out_ptr0"], X="in_out_ptr0", CBP="in_ptr0",
                    WP="in_ptr1", BP="in_ptr2", Y="in_out_ptr0")
    if pre_bias:
        return dict(PARAMS=["in_ptr0", "in_ptr1", "in_ptr2", "in_ptr3", "out_ptr0"], X="in_ptr0", CBP="in_ptr1",
                    WP="in_ptr2", BP="in_ptr3", Y="out_ptr0")
    return dict(PARAMS=["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0"], X="in_ptr0", CBP="in_ptr0", WP="in_ptr1",
                BP="in_ptr2", Y="out_ptr0")


def render(text, params):
    out, stack = [], []
    for line in text.split("\n"):
        if line.startswith("#@"):
            continue
        s = line.strip()
        m = re.fullmatch(r"\{\{if (\w+)\}\}", s)
        if m:
            stack.append(bool(params[m.group(1)]))
            continue
        if s == "{{else}}":
            stack[-1] = not stack[-1]
            continue
        if s == "{{end}}":
            stack.pop()
            continue
        if not all(stack):
            continue
        m = re.fullmatch(r"\{\{include (\w+)\}\}", s)
        if m:  # a part file: its '#@' header dropped, the same substitutions
            part = open(os.path.join(ROOT, "templates", "kernels", m.group(1) + ".part")).read()
            out.append(render(part, params))
            continue

        def sub(mm):
            v = params[mm.group(1)]
            if isinstance(v, (list, tuple)):   # idents: `a, b`, or `"a", "b"` with :quoted
                return ", ".join(('"%s"' % n) if mm.group(2) else n for n in v)
            return ("True" if v else "False") if isinstance(v, bool) else str(v)
        out.append(re.sub(r"\{\{(\w+)(:quoted)?\}\}", sub, line))
    return "\n".join(out)


def judged(text, path):
    """The text kopt judges for candidate `text` (written to `path`); exits when kopt refuses it."""
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([KOPT, "lint", path, "--json", "--show-launcher"], capture_output=True, text=True)
    try:
        d = json.loads(r.stdout)
    except ValueError:
        raise SystemExit("kopt lint %s: no JSON (exit %d): %s" % (path, r.returncode, r.stderr[:2000]))
    if r.returncode != 0 or not d["ok"]:
        raise SystemExit("kopt lint refused %s: %s" % (path, r.stdout[:2000]))
    return d["judged_text"], d["form"]


def load_judged(text, tag, tmp):
    """The module of the text kopt judges for candidate `text`."""
    src, _ = judged(text, os.path.join(tmp, "%s.py" % tag))
    path = os.path.join(tmp, "%s_judged.py" % tag)
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
